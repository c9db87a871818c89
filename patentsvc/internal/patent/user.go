package patent

import (
	"net/mail"
	"strings"
	"time"
)

// Role is a user's role.
type Role string

// Roles.
const (
	RoleAdmin Role = "admin"
	RoleUser  Role = "user"
)

// ParseRole accepts exactly "admin" or "user".
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case RoleAdmin, RoleUser:
		return Role(s), nil
	}
	return "", Invalidf("role must be \"admin\" or \"user\"")
}

// User is an account.
type User struct {
	ID           int64
	Email        string // lowercased
	Role         Role
	PasswordHash []byte
	CreatedAt    time.Time
	// TokenVersion is raised to revoke every token the user holds (a
	// refresh-token replay); access and refresh tokens carry the version
	// they were issued under, and only the current one is accepted.
	TokenVersion int
}

// Password length limits in bytes (bcrypt reads at most 72).
const (
	PasswordMin = 8
	PasswordMax = 72
)

// ParseEmail validates an address (a bare addr-spec such as
// ada@example.com, at most 254 bytes, with a dotted domain) and returns it
// lowercased, the form it is stored and compared in.
func ParseEmail(s string) (string, error) {
	if s == "" {
		return "", Invalidf("email is required")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" || len(s) > 254 {
		return "", Invalidf("email must be a valid address such as ada@example.com")
	}
	at := strings.LastIndexByte(s, '@')
	if domain := s[at+1:]; !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", Invalidf("email must be a valid address such as ada@example.com")
	}
	return strings.ToLower(s), nil
}

// CheckPassword enforces the length rule.
func CheckPassword(p string) error {
	if len(p) < PasswordMin || len(p) > PasswordMax {
		return Invalidf("password must be %d to %d bytes, got %d", PasswordMin, PasswordMax, len(p))
	}
	return nil
}
