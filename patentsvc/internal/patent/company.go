package patent

import (
	"strings"
	"unicode/utf8"
)

// CompanyName is a validated company name: 2 to 100 characters, a letter or
// digit first, then letters, digits, space, hyphen, ampersand or period
// (^[a-zA-Z0-9][a-zA-Z0-9 &.-]*$). Only ASCII letters and digits count, as
// in the pattern.
type CompanyName string

// Company name length limits.
const (
	CompanyNameMin = 2
	CompanyNameMax = 100
)

// ParseCompanyName validates s as given (no trimming: a name with leading
// or trailing space is not silently changed) and returns it as a
// CompanyName, or an error wrapping ErrInvalid that says which rule broke.
func ParseCompanyName(s string) (CompanyName, error) {
	if n := utf8.RuneCountInString(s); n < CompanyNameMin || n > CompanyNameMax {
		return "", Invalidf("company name must be %d to %d characters, got %d", CompanyNameMin, CompanyNameMax, n)
	}
	if !alnum(s[0]) {
		return "", Invalidf("company name must start with a letter or digit")
	}
	for i, r := range s {
		if r >= utf8.RuneSelf || !(alnum(byte(r)) || r == ' ' || r == '&' || r == '.' || r == '-') {
			return "", Invalidf("company name may contain only letters, digits, space, hyphen, ampersand and period; %q at position %d is not allowed", r, utf8.RuneCountInString(s[:i])+1)
		}
	}
	return CompanyName(s), nil
}

func alnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// Key is the name's case-insensitive identity, used for lookups and the
// uniqueness of tracked companies.
func (c CompanyName) Key() string { return strings.ToLower(string(c)) }

// String returns the name as given.
func (c CompanyName) String() string { return string(c) }
