package auth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var (
	ctx    = context.Background()
	secret = []byte("0123456789abcdef0123456789abcdef")
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func mustService(tb testing.TB) (*auth.Service, *store.Store, *clock) {
	tb.Helper()
	clk := &clock{t: time.Now().UTC()}
	st := storetest.Open(tb, store.SQLite, clk.Now)
	svc, err := auth.New(st.Users(), secret, nil, 30*time.Minute, 168*time.Hour, 4, clk.Now)
	if err != nil {
		tb.Fatal(err)
	}
	return svc, st, clk
}

func TestRegisterLoginAuthenticate(t *testing.T) {
	svc, _, _ := mustService(t)
	u, err := svc.Register(ctx, "ada@example.com", "correct horse")
	if err != nil || u.Role != patent.RoleAdmin {
		t.Fatalf("Register = %+v, %v", u, err)
	}
	if string(u.PasswordHash) == "correct horse" || !strings.HasPrefix(string(u.PasswordHash), "$2") {
		t.Fatalf("password stored as %q, want a bcrypt hash", u.PasswordHash)
	}
	if _, err := svc.Login(ctx, "ada@example.com", "wrong horse"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Fatalf("Login(wrong password) = %v", err)
	}
	if _, err := svc.Login(ctx, "bob@example.com", "correct horse"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Fatalf("Login(unknown email) = %v", err)
	}
	tok, err := svc.Login(ctx, "ada@example.com", "correct horse")
	if err != nil || tok.ExpiresIn != 30*time.Minute {
		t.Fatalf("Login = %+v, %v", tok, err)
	}
	got, err := svc.Authenticate(ctx, tok.Access)
	if err != nil || got.ID != u.ID {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	c, err := svc.Parse(tok.Access, auth.TypeAccess)
	if err != nil || c.Subject == "" || c.ID == "" || c.Email != "ada@example.com" || c.Role != "admin" || c.IssuedAt == nil || c.ExpiresAt == nil {
		t.Errorf("access claims = %+v, %v; want sub, jti, email, role, iat, exp", c, err)
	}
	if _, err := svc.Authenticate(ctx, tok.Refresh); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("refresh token accepted as access token: %v", err)
	}
}

func TestRefreshRotation(t *testing.T) {
	svc, _, _ := mustService(t)
	svc.Register(ctx, "ada@example.com", "correct horse")
	first, _ := svc.Login(ctx, "ada@example.com", "correct horse")
	second, err := svc.Refresh(ctx, first.Refresh)
	if err != nil || second.Refresh == first.Refresh {
		t.Fatalf("Refresh = %+v, %v", second, err)
	}
	if _, err := svc.Refresh(ctx, first.Refresh); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("reused refresh token = %v, want ErrInvalidToken", err)
	}
	if _, err := svc.Refresh(ctx, second.Refresh); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("after a replay the newer refresh token still works: %v", err)
	}
	if _, err := svc.Refresh(ctx, first.Access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("access token accepted as refresh token: %v", err)
	}
}

// TestReplayRevokesAccessTokens: a detected refresh-token replay also ends
// every access token the user holds (the stolen one and the owner's alike),
// on both databases; logging in again gives working tokens. Other users'
// tokens are untouched.
func TestReplayRevokesAccessTokens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		clk := &clock{t: time.Now().UTC()}
		svc, err := auth.New(st.Users(), secret, nil, 30*time.Minute, 168*time.Hour, 4, clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		svc.Register(ctx, "ada@example.com", "correct horse")
		svc.Register(ctx, "bob@example.com", "battery staple")
		first, _ := svc.Login(ctx, "ada@example.com", "correct horse")
		second, _ := svc.Refresh(ctx, first.Refresh) // the thief's, say
		bob, _ := svc.Login(ctx, "bob@example.com", "battery staple")
		for _, tok := range []string{first.Access, second.Access} {
			if _, err := svc.Authenticate(ctx, tok); err != nil {
				t.Fatalf("access token before the replay: %v", err)
			}
		}
		if _, err := svc.Refresh(ctx, first.Refresh); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("replayed refresh token = %v", err)
		}
		for i, tok := range []string{first.Access, second.Access} {
			if _, err := svc.Authenticate(ctx, tok); !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("access token %d still works after the replay: %v", i, err)
			}
		}
		if _, err := svc.Authenticate(ctx, bob.Access); err != nil {
			t.Errorf("another user's token revoked: %v", err)
		}
		again, err := svc.Login(ctx, "ada@example.com", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, again.Access); err != nil {
			t.Errorf("token from a new login after the replay: %v", err)
		}
	})
}

// TestLoginPasswordOver72Bytes: bcrypt reads 72 bytes; a longer password
// is refused at login like a wrong one, even when its first 72 bytes are
// the password.
func TestLoginPasswordOver72Bytes(t *testing.T) {
	svc, _, _ := mustService(t)
	pw := strings.Repeat("p", 72)
	if _, err := svc.Register(ctx, "ada@example.com", pw); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Login(ctx, "ada@example.com", pw); err != nil {
		t.Fatalf("72-byte password: %v", err)
	}
	for _, long := range []string{pw + "x", pw + strings.Repeat("y", 100)} {
		if _, err := svc.Login(ctx, "ada@example.com", long); !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("Login with %d bytes = %v, want ErrBadCredentials", len(long), err)
		}
	}
}

func TestDeletedUserAndExpiry(t *testing.T) {
	svc, _, clk := mustService(t)
	admin, _ := svc.Register(ctx, "admin@example.com", "correct horse")
	bob, _ := svc.Register(ctx, "bob@example.com", "correct horse")
	tok, _ := svc.Login(ctx, "bob@example.com", "correct horse")
	if err := svc.DeleteUser(ctx, admin.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, tok.Access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("deleted user's access token = %v", err)
	}
	if _, err := svc.Refresh(ctx, tok.Refresh); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("deleted user's refresh token = %v", err)
	}
	atok, _ := svc.Login(ctx, "admin@example.com", "correct horse")
	clk.Advance(30*time.Minute + time.Second)
	if _, err := svc.Authenticate(ctx, atok.Access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("expired access token = %v", err)
	}
	if _, err := svc.Refresh(ctx, atok.Refresh); err != nil {
		t.Errorf("refresh token within its lifetime = %v", err)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestParseRejects(t *testing.T) {
	svc, _, clk := mustService(t)
	svc.Register(ctx, "ada@example.com", "correct horse")
	tok, _ := svc.Login(ctx, "ada@example.com", "correct horse")
	now := clk.Now()
	claims := func(typ string) jwt.MapClaims {
		return jwt.MapClaims{"sub": "1", "typ": typ, "jti": "x", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}
	sign := func(m jwt.SigningMethod, key any, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	noExp := claims("access")
	delete(noExp, "exp")
	noJTI := claims("access")
	delete(noJTI, "jti")
	future := claims("access")
	future["iat"] = now.Add(time.Hour).Unix()
	parts := strings.Split(tok.Access, ".")
	for name, token := range map[string]string{
		"empty":            "",
		"garbage":          "not.a.token",
		"two parts":        parts[0] + "." + parts[1],
		"bad signature":    parts[0] + "." + parts[1] + "." + b64("forged"),
		"wrong secret":     sign(jwt.SigningMethodHS256, []byte("another secret of thirty-two bytes!!"), claims("access")),
		"HS384":            sign(jwt.SigningMethodHS384, secret, claims("access")),
		"alg none":         b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(`{"sub":"1","typ":"access","jti":"x","exp":9999999999}`) + ".",
		"wrong typ":        sign(jwt.SigningMethodHS256, secret, claims("refresh")),
		"no typ":           sign(jwt.SigningMethodHS256, secret, claims("")),
		"no exp":           sign(jwt.SigningMethodHS256, secret, noExp),
		"no jti":           sign(jwt.SigningMethodHS256, secret, noJTI),
		"issued in future": sign(jwt.SigningMethodHS256, secret, future),
		"tampered claims":  parts[0] + "." + b64(`{"sub":"1","role":"admin","typ":"access","jti":"x","exp":9999999999}`) + "." + parts[2],
	} {
		if _, err := svc.Parse(token, auth.TypeAccess); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: Parse = %v, want ErrInvalidToken", name, err)
		}
	}
	if _, err := svc.Parse(sign(jwt.SigningMethodHS256, secret, claims("access")), auth.TypeAccess); err != nil {
		t.Errorf("well-formed token rejected: %v", err)
	}
}

// FuzzParse: the token parser never panics, and what it accepts is an
// HS256 access token in canonical encoding (so a signature cannot be
// re-encoded into a second valid token).
func FuzzParse(f *testing.F) {
	svc, _, _ := mustService(f)
	svc.Register(ctx, "ada@example.com", "correct horse")
	tok, _ := svc.Login(ctx, "ada@example.com", "correct horse")
	for _, s := range []string{tok.Access, tok.Refresh, "", ".", "..", "a.b.c", b64(`{"alg":"none"}`) + "." + b64(`{}`) + ".",
		tok.Access + "x", strings.Replace(tok.Access, ".", "", 1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := svc.Parse(s, auth.TypeAccess)
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidToken", s, err)
			}
			return
		}
		parts := strings.Split(s, ".")
		if len(parts) != 3 || c.Type != auth.TypeAccess {
			t.Fatalf("Parse accepted %q", s)
		}
		for _, p := range parts {
			raw, err := base64.RawURLEncoding.Strict().DecodeString(p)
			if err != nil || base64.RawURLEncoding.EncodeToString(raw) != p {
				t.Fatalf("Parse accepted %q with a non-canonical part %q", s, p)
			}
		}
		if header, _ := base64.RawURLEncoding.DecodeString(parts[0]); !strings.Contains(string(header), `"HS256"`) {
			t.Fatalf("Parse accepted a token whose header is %s", header)
		}
	})
}

// TestRotation: after JWT_SECRET changes with the old one as previous,
// tokens signed before still work (and refresh into new-secret tokens);
// without the previous secret they do not.
func TestRotation(t *testing.T) {
	clk := &clock{t: time.Now().UTC()}
	st := storetest.Open(t, store.SQLite, clk.Now)
	old, _ := auth.New(st.Users(), secret, nil, 30*time.Minute, time.Hour, 4, clk.Now)
	old.Register(ctx, "ada@example.com", "correct horse")
	tok, err := old.Login(ctx, "ada@example.com", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	newSecret := []byte("fedcba9876543210fedcba9876543210")
	rotating, _ := auth.New(st.Users(), newSecret, secret, 30*time.Minute, time.Hour, 4, clk.Now)
	if _, err := rotating.Authenticate(ctx, tok.Access); err != nil {
		t.Fatalf("old token during rotation: %v", err)
	}
	fresh, err := rotating.Refresh(ctx, tok.Refresh)
	if err != nil {
		t.Fatalf("old refresh token during rotation: %v", err)
	}
	done, _ := auth.New(st.Users(), newSecret, nil, 30*time.Minute, time.Hour, 4, clk.Now)
	if _, err := done.Authenticate(ctx, fresh.Access); err != nil {
		t.Errorf("token issued during rotation rejected after it: %v", err)
	}
	if _, err := done.Authenticate(ctx, tok.Access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("old-secret token accepted after rotation: %v", err)
	}
}

// TestUserManagement: the admin operations go through the auth core, which
// holds the self-delete rule; the last-admin rule holds in the store's
// transaction and reaches the caller as it is.
func TestUserManagement(t *testing.T) {
	svc, _, _ := mustService(t)
	admin, _ := svc.Register(ctx, "admin@example.com", "correct horse")
	bob, _ := svc.Register(ctx, "bob@example.com", "correct horse")
	if err := svc.DeleteUser(ctx, admin.ID, admin.ID); !errors.Is(err, patent.ErrSelfDelete) {
		t.Errorf("an admin deleting their own account: %v, want ErrSelfDelete", err)
	}
	if _, err := svc.SetRole(ctx, admin.ID, patent.RoleUser); !errors.Is(err, patent.ErrLastAdmin) {
		t.Errorf("demoting the last admin: %v, want ErrLastAdmin", err)
	}
	if u, err := svc.SetRole(ctx, bob.ID, patent.RoleAdmin); err != nil || u.Role != patent.RoleAdmin {
		t.Fatalf("promoting bob = %+v, %v", u, err)
	}
	if err := svc.DeleteUser(ctx, bob.ID, admin.ID); err != nil {
		t.Fatalf("an admin deleting another while one remains: %v", err)
	}
	users, err := svc.Users(ctx)
	if err != nil || len(users) != 1 || users[0].ID != bob.ID {
		t.Errorf("Users = %+v, %v; want bob alone", users, err)
	}
	if err := svc.DeleteUser(ctx, admin.ID, 9999); !errors.Is(err, patent.ErrNotFound) {
		t.Errorf("deleting an unknown user: %v, want ErrNotFound", err)
	}
}
