// Package auth issues and checks the service's tokens and passwords.
//
// # Caveats
//
//   - Tokens are HS256 JWTs and nothing else is accepted: the parser is
//     told the only valid method, so "alg: none" and algorithm swaps fail.
//   - Claims are sub (the user id as a string), email, role, typ ("access"
//     or "refresh"), iat, exp, jti and ver (the user's token version). An
//     access token is never accepted where a refresh token is expected,
//     nor the reverse.
//   - A token says who the caller is, not what they may do: Authenticate
//     re-reads the user on every request, so a deleted user is rejected at
//     once and a role change applies to the next request.
//   - A refresh token can be exchanged once; presenting it again revokes
//     every token of its user issued up to that moment: the user's token
//     version goes up, and every token carries the version it was issued
//     under ("ver"), which Authenticate and Refresh require to be the
//     user's current one. The store also marks the user's refresh tokens
//     used, which can miss a pair being issued to a racing presentation
//     of the same token; the version ends that pair too (see Refresh;
//     decisions.md, "Both services: hostile input answered, never a 5xx").
//   - Logging in with an unknown email costs the same bcrypt comparison as
//     a wrong password, so response times do not reveal which emails exist.
package auth

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Errors. Both are answered with 401.
var (
	// ErrInvalidToken: a missing, malformed, expired, wrongly signed,
	// wrong-type or revoked token, or one whose user no longer exists.
	ErrInvalidToken = errors.New("invalid or expired token")
	// ErrBadCredentials: the email or the password is wrong.
	ErrBadCredentials = errors.New("invalid email or password")
)

// Token types (the typ claim).
const (
	TypeAccess  = "access"
	TypeRefresh = "refresh"
)

// Store is what auth needs of the database; store.Users implements it.
type Store interface {
	CreateUser(ctx context.Context, email string, passwordHash []byte) (patent.User, error)
	UserByID(ctx context.Context, id int64) (patent.User, error)
	UserByEmail(ctx context.Context, email string) (patent.User, error)
	SaveRefreshToken(ctx context.Context, jti string, userID int64, expiresAt time.Time) error
	UseRefreshToken(ctx context.Context, jti string) (int64, error)
	// PruneRefreshTokens deletes the refresh tokens that have expired.
	PruneRefreshTokens(ctx context.Context) (int64, error)
	// ListUsers returns every user, oldest first.
	ListUsers(ctx context.Context) ([]patent.User, error)
	// SetRole changes a user's role; patent.ErrNotFound for an unknown
	// user, patent.ErrLastAdmin when it would leave no admin (checked in
	// the same transaction as the change).
	SetRole(ctx context.Context, id int64, role patent.Role) (patent.User, error)
	// DeleteUser deletes a user and their refresh tokens;
	// patent.ErrNotFound for an unknown user, patent.ErrLastAdmin for the
	// last admin (checked in the same transaction).
	DeleteUser(ctx context.Context, id int64) error
}

// Service registers users and issues and checks tokens.
type Service struct {
	store      Store
	secret     []byte
	previous   []byte // also accepted when verifying; nil when not rotating
	accessTTL  time.Duration
	refreshTTL time.Duration
	cost       int
	now        func() time.Time
	dummyHash  []byte
}

// New returns a Service signing with secret and also accepting tokens
// signed with previous (nil when not rotating). cost is the bcrypt cost.
func New(store Store, secret, previous []byte, accessTTL, refreshTTL time.Duration, cost int, now func() time.Time) (*Service, error) {
	dummy, err := bcrypt.GenerateFromPassword([]byte("not a real password"), cost)
	if err != nil {
		return nil, fmt.Errorf("auth: bcrypt cost %d: %w", cost, err)
	}
	return &Service{store: store, secret: secret, previous: previous, accessTTL: accessTTL, refreshTTL: refreshTTL, cost: cost, now: now, dummyHash: dummy}, nil
}

// Tokens is what login and refresh hand out.
type Tokens struct {
	Access    string
	Refresh   string
	ExpiresIn time.Duration // of the access token
}

// Register creates a user. email and password must already be valid
// (ParseEmail: in its normal form; CheckPassword). The first user becomes
// admin.
// Returns patent.ErrConflict for an email already registered.
func (s *Service) Register(ctx context.Context, email, password string) (patent.User, error) {
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return patent.User{}, fmt.Errorf("hash password: %w", err)
	}
	return s.store.CreateUser(ctx, email, hash)
}

// Login checks the credentials and issues tokens, or returns
// ErrBadCredentials. A password longer than patent.PasswordMax is refused
// like a wrong one: bcrypt reads only the first 72 bytes, so without the
// check any string that starts with the right 72 bytes would log in, and
// registration never accepts one that long.
func (s *Service) Login(ctx context.Context, email, password string) (Tokens, error) {
	if len(password) > patent.PasswordMax {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash, []byte(password[:patent.PasswordMax])) // same time as a wrong one
		return Tokens{}, ErrBadCredentials
	}
	u, err := s.store.UserByEmail(ctx, email)
	if errors.Is(err, patent.ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash, []byte(password))
		return Tokens{}, ErrBadCredentials
	}
	if err != nil {
		return Tokens{}, err
	}
	if bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(password)) != nil {
		return Tokens{}, ErrBadCredentials
	}
	return s.issue(ctx, u)
}

// Refresh exchanges a refresh token for a new pair. The old refresh token
// stops working. Returns ErrInvalidToken for anything but an unused, valid
// refresh token of an existing user, issued under the user's current token
// version (not revoked since).
func (s *Service) Refresh(ctx context.Context, refreshToken string) (Tokens, error) {
	c, err := s.Parse(refreshToken, TypeRefresh)
	if err != nil {
		return Tokens{}, err
	}
	uid, err := s.store.UseRefreshToken(ctx, c.ID)
	switch {
	case errors.Is(err, patent.ErrNotFound), errors.Is(err, patent.ErrTokenReplayed):
		return Tokens{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	case err != nil:
		return Tokens{}, err // the database failed: a 500, not a logout
	}
	u, err := s.user(ctx, uid)
	if err != nil {
		return Tokens{}, err
	}
	// The version, not the row, is what a revocation guarantees: a replay
	// detected while this exchange runs raises it, but may mark the user's
	// refresh tokens used before issue saves the new one. Raised before
	// the read above, it refuses this token here; after, the pair below is
	// signed with the old version, which Authenticate and Refresh refuse.
	if c.Version != u.TokenVersion {
		return Tokens{}, fmt.Errorf("%w: revoked (token version %d, user's %d)", ErrInvalidToken, c.Version, u.TokenVersion)
	}
	return s.issue(ctx, u)
}

// Authenticate checks an access token and returns its user, read from the
// store now.
func (s *Service) Authenticate(ctx context.Context, accessToken string) (patent.User, error) {
	c, err := s.Parse(accessToken, TypeAccess)
	if err != nil {
		return patent.User{}, err
	}
	id, err := strconv.ParseInt(c.Subject, 10, 64)
	if err != nil {
		return patent.User{}, fmt.Errorf("%w: bad subject", ErrInvalidToken)
	}
	u, err := s.user(ctx, id)
	if err != nil {
		return patent.User{}, err
	}
	if c.Version != u.TokenVersion {
		return patent.User{}, fmt.Errorf("%w: revoked (token version %d, user's %d)", ErrInvalidToken, c.Version, u.TokenVersion)
	}
	return u, nil
}

func (s *Service) user(ctx context.Context, id int64) (patent.User, error) {
	u, err := s.store.UserByID(ctx, id)
	if errors.Is(err, patent.ErrNotFound) {
		return patent.User{}, fmt.Errorf("%w: user no longer exists", ErrInvalidToken)
	}
	return u, err
}

// Claims are the token's claims.
type Claims struct {
	Email string `json:"email"`
	Role  string `json:"role"`
	Type  string `json:"typ"`
	// Version is the user's token version when the token was issued.
	Version int `json:"ver,omitempty"`
	jwt.RegisteredClaims
}

// Parse verifies a token's signature (HS256 only), expiry and type, and
// returns its claims. Any failure is ErrInvalidToken.
func (s *Service) Parse(token, wantType string) (Claims, error) {
	var c Claims
	keys := jwt.VerificationKeySet{Keys: []jwt.VerificationKey{s.secret}}
	if len(s.previous) > 0 {
		keys.Keys = append(keys.Keys, s.previous)
	}
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return keys, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.now),
		jwt.WithStrictDecoding(), // one encoding per token: no malleable signatures
	)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if c.Type != wantType {
		return Claims{}, fmt.Errorf("%w: a %q token where a %q token is needed", ErrInvalidToken, c.Type, wantType)
	}
	if c.Subject == "" || c.ID == "" {
		return Claims{}, fmt.Errorf("%w: missing sub or jti", ErrInvalidToken)
	}
	return c, nil
}

// issue signs an access and a refresh token for u and records the refresh
// token's id.
func (s *Service) issue(ctx context.Context, u patent.User) (Tokens, error) {
	now := s.now()
	access, err := s.sign(u, TypeAccess, uuid.NewString(), now, s.accessTTL)
	if err != nil {
		return Tokens{}, err
	}
	jti := uuid.NewString()
	refresh, err := s.sign(u, TypeRefresh, jti, now, s.refreshTTL)
	if err != nil {
		return Tokens{}, err
	}
	if err := s.store.SaveRefreshToken(ctx, jti, u.ID, now.Add(s.refreshTTL)); err != nil {
		return Tokens{}, err
	}
	return Tokens{Access: access, Refresh: refresh, ExpiresIn: s.accessTTL}, nil
}

func (s *Service) sign(u patent.User, typ, jti string, now time.Time, ttl time.Duration) (string, error) {
	c := Claims{
		Email:   u.Email,
		Role:    string(u.Role),
		Type:    typ,
		Version: u.TokenVersion,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   strconv.FormatInt(u.ID, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        jti,
		},
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.secret)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}

// PruneEvery is how often gocron has PruneTokens delete expired refresh
// tokens.
const PruneEvery = time.Hour

// PruneTokens deletes the refresh tokens that have expired and returns how
// many (every replica calls it every PruneEvery; prunes of the same rows
// by several are harmless).
func (s *Service) PruneTokens(ctx context.Context) (int64, error) {
	n, err := s.store.PruneRefreshTokens(ctx)
	if err != nil {
		return 0, fmt.Errorf("auth: %w", err)
	}
	return n, nil
}

// Users returns every user, oldest first (GET /admin/users).
func (s *Service) Users(ctx context.Context) ([]patent.User, error) {
	return s.store.ListUsers(ctx)
}

// SetRole makes user id a user or an admin. Returns patent.ErrNotFound
// for an unknown user and patent.ErrLastAdmin when the change would leave
// no admin.
func (s *Service) SetRole(ctx context.Context, id int64, role patent.Role) (patent.User, error) {
	return s.store.SetRole(ctx, id, role)
}

// DeleteUser deletes user id on behalf of actor, with their refresh
// tokens; their jobs stay, for admins to see. An admin cannot delete
// their own account (patent.ErrSelfDelete), nor the last admin
// (patent.ErrLastAdmin); patent.ErrNotFound for an unknown user.
func (s *Service) DeleteUser(ctx context.Context, actor, id int64) error {
	if actor == id {
		return fmt.Errorf("delete user %d: %w", id, patent.ErrSelfDelete)
	}
	return s.store.DeleteUser(ctx, id)
}
