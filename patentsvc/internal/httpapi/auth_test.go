package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestRegister201(t *testing.T) {
	en := newEnv(t)
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("Ada@Example.COM", password)})
	wantStatus(t, rec, http.StatusCreated)
	wantKeys(t, rec.Body.Bytes(), "id", "email", "role", "created_at")
	golden(t, "register-201", rec.Body.Bytes())

	second := en.register(t, "bob@example.com")
	if second.Role != "user" || second.ID == 1 || second.Email != "bob@example.com" || !second.CreatedAt.Equal(epoch) {
		t.Errorf("second user = %+v, want role user, a new id, created now", second)
	}

	// Stored lowercased: the store finds it by the lowercase address, and
	// login works in any case.
	u, err := en.st.Users().UserByEmail(context.Background(), "ada@example.com")
	if err != nil || u.Email != "ada@example.com" || u.Role != patent.RoleAdmin {
		t.Fatalf("UserByEmail(ada@example.com) = %+v, %v", u, err)
	}
	if string(u.PasswordHash) == password || !strings.HasPrefix(string(u.PasswordHash), "$2") {
		t.Errorf("password stored as %q, want a bcrypt hash", u.PasswordHash)
	}
	en.login(t, "ADA@example.com")

	// Password length is counted in bytes: 8 and 72 are accepted.
	for _, pw := range []string{"12345678", strings.Repeat("x", 72), strings.Repeat("é", 36)} {
		rec := en.do(t, request{method: http.MethodPost, target: "/auth/register",
			body: credentials(fmt.Sprintf("len%d@example.com", len(pw)+len([]rune(pw))), pw)})
		wantStatus(t, rec, http.StatusCreated)
	}
	// Unknown fields are ignored.
	rec = en.do(t, request{method: http.MethodPost, target: "/auth/register",
		body: `{"email":"extra@example.com","password":"12345678","role":"admin"}`})
	wantStatus(t, rec, http.StatusCreated)
	var extra userBody
	decode(t, rec, &extra)
	if extra.Role != "user" {
		t.Errorf("a role in the register body was honoured: %+v", extra)
	}
}

func TestRegister409(t *testing.T) {
	en := newEnv(t)
	en.register(t, "ada@example.com")
	for _, email := range []string{"ada@example.com", "ADA@EXAMPLE.COM", "Ada@example.Com"} {
		t.Run(email, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials(email, "another password")})
			wantError(t, rec, http.StatusConflict, "Email already registered")
			golden(t, "register-409", rec.Body.Bytes())
		})
	}
}

func TestRegister422(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		name   string
		body   string
		fields []string
	}{
		{"invalid email", credentials("not-an-email", password), []string{"email"}},
		{"email without dotted domain", credentials("ada@example", password), []string{"email"}},
		{"email with display name", credentials("Ada <ada@example.com>", password), []string{"email"}},
		{"empty email", credentials("", password), []string{"email"}},
		{"password of 7 bytes", credentials("ada@example.com", "1234567"), []string{"password"}},
		{"password of 73 bytes", credentials("ada@example.com", strings.Repeat("x", 73)), []string{"password"}},
		{"password of 74 bytes in 37 runes", credentials("ada@example.com", strings.Repeat("é", 37)), []string{"password"}},
		{"empty password", credentials("ada@example.com", ""), []string{"password"}},
		{"missing email", `{"password":"correct horse battery"}`, []string{"email"}},
		{"missing password", `{"email":"ada@example.com"}`, []string{"password"}},
		{"null email", `{"email":null,"password":"correct horse battery"}`, []string{"email"}},
		{"missing both", `{}`, []string{"email", "password"}},
		{"email is a number", `{"email":5,"password":"correct horse battery"}`, []string{"email"}},
		{"password is a boolean", `{"email":"ada@example.com","password":true}`, []string{"password"}},
		{"password is an object", `{"email":"ada@example.com","password":{}}`, []string{"password"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: tt.body})
			b := wantError(t, rec, http.StatusUnprocessableEntity, "")
			var got []string
			for _, fe := range b.Errors {
				got = append(got, fe.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("errors name fields %v, want %v (body %s)", got, tt.fields, rec.Body)
			}
		})
	}
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: `{}`})
	golden(t, "register-422-missing", rec.Body.Bytes())
	rec = en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("ada@example.com", "short")})
	golden(t, "register-422-short-password", rec.Body.Bytes())

	// A body that is JSON but not an object breaks the shape: 422.
	for _, body := range []string{`[]`, `"ada@example.com"`, `5`} {
		rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: body})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
	}
	users, err := en.st.Users().ListUsers(context.Background())
	if err != nil || len(users) != 0 {
		t.Errorf("invalid registrations created users: %+v, %v", users, err)
	}
}

func TestRegister400(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		name, body string
	}{
		{"empty body", ""},
		{"truncated", `{"email":`},
		{"not JSON", `email=ada@example.com&password=x`},
		{"trailing garbage", `{"email":"ada@example.com","password":"correct horse battery"} x`},
		{"single quotes", `{'email':'ada@example.com'}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: tt.body})
			b := wantError(t, rec, http.StatusBadRequest, "")
			if !strings.HasPrefix(b.Detail, "Malformed JSON") {
				t.Errorf("detail = %q, want it to say Malformed JSON", b.Detail)
			}
		})
	}
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: `{"email":`})
	golden(t, "register-400-malformed", rec.Body.Bytes())
	rec = en.do(t, request{method: http.MethodPost, target: "/auth/register"})
	golden(t, "register-400-empty", rec.Body.Bytes())
}

// TestRegisterFirstAdminRace: concurrent registrations on an empty
// database through the HTTP handler make exactly one admin.
func TestRegisterFirstAdminRace(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		const n = 10
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			recs  [n]*httptest.ResponseRecorder
		)
		for i := range n {
			wg.Go(func() {
				req := httptest.NewRequest(http.MethodPost, "/auth/register",
					strings.NewReader(credentials(fmt.Sprintf("racer%d@example.com", i), password)))
				req.RemoteAddr = fmt.Sprintf("203.0.113.%d:1234", i+1)
				rec := httptest.NewRecorder()
				<-start
				en.srv.ServeHTTP(rec, req)
				recs[i] = rec
			})
		}
		close(start)
		wg.Wait()
		admins := 0
		for i, rec := range recs {
			if rec.Code != http.StatusCreated {
				t.Fatalf("registration %d: status %d, body %s", i, rec.Code, rec.Body)
			}
			var u userBody
			decode(t, rec, &u)
			if u.Role == "admin" {
				admins++
			} else if u.Role != "user" {
				t.Errorf("registration %d: role %q", i, u.Role)
			}
		}
		if admins != 1 {
			t.Errorf("%d of %d concurrent first registrations answered role admin, want exactly 1", admins, n)
		}
		users, err := en.st.Users().ListUsers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		stored := 0
		for _, u := range users {
			if u.Role == patent.RoleAdmin {
				stored++
			}
		}
		if len(users) != n || stored != 1 {
			t.Errorf("store holds %d users, %d admins; want %d users, 1 admin", len(users), stored, n)
		}
		if late := en.register(t, "late@example.com"); late.Role != "user" {
			t.Errorf("a registration after the race got role %q", late.Role)
		}
	})
}

func TestLogin200(t *testing.T) {
	en := newEnv(t)
	en.register(t, "ada@example.com")
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("ada@example.com", password)})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "access_token", "refresh_token", "token_type", "expires_in")
	var tok tokenBody
	decode(t, rec, &tok)
	if tok.TokenType != "bearer" || tok.ExpiresIn != int64(accessTTL/time.Second) ||
		tok.AccessToken == "" || tok.RefreshToken == "" || tok.AccessToken == tok.RefreshToken {
		t.Errorf("login = %+v, want two distinct tokens, token_type bearer, expires_in %d", tok, int64(accessTTL/time.Second))
	}
	if rec := en.do(t, request{target: "/auth/me", token: tok.AccessToken}); rec.Code != http.StatusOK {
		t.Errorf("/auth/me with the login's access token: %d %s", rec.Code, rec.Body)
	}
	// The email matches in any letter case.
	en.login(t, "ADA@EXAMPLE.COM")
}

func TestLogin401(t *testing.T) {
	en := newEnv(t)
	en.register(t, "ada@example.com")
	var bodies []string
	for _, tt := range []struct {
		name, email, password string
	}{
		{"wrong password", "ada@example.com", "wrong horse battery"},
		{"password in another case", "ada@example.com", strings.ToUpper(password)},
		{"unknown email", "bob@example.com", password},
		{"password over 72 bytes", "ada@example.com", password + strings.Repeat("x", 60)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials(tt.email, tt.password)})
			wantError(t, rec, http.StatusUnauthorized, "Invalid email or password")
			bodies = append(bodies, rec.Body.String())
			golden(t, "login-401", rec.Body.Bytes())
		})
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Errorf("login failures differ: %q vs %q", b, bodies[0])
		}
	}
}

func TestLogin422And400(t *testing.T) {
	en := newEnv(t)
	en.register(t, "ada@example.com")
	for _, tt := range []struct {
		name   string
		body   string
		status int
	}{
		{"missing both", `{}`, 422},
		{"missing password", `{"email":"ada@example.com"}`, 422},
		{"missing email", `{"password":"correct horse battery"}`, 422},
		{"empty password", credentials("ada@example.com", ""), 422},
		{"invalid email", credentials("ada", password), 422},
		{"email is a number", `{"email":5,"password":"x"}`, 422},
		{"malformed JSON", `{"email"`, 400},
		{"empty body", ``, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: tt.body})
			wantError(t, rec, tt.status, "")
		})
	}
}

// TestMe401 covers every way a token is refused on a user endpoint.
func TestMe401(t *testing.T) {
	en := newEnv(t)
	admin, access := en.admin(t)
	login := en.login(t, adminEmail)
	now := en.clk.Now()
	claims := func(edit func(map[string]any)) map[string]any {
		c := accessClaims(admin.ID, now)
		edit(c)
		return c
	}
	noop := func(map[string]any) {}

	// The hand-made token signed with the right secret is accepted, so the
	// forged variants below fail for the reason they name.
	good := forge(t, hs256, claims(noop), []byte(jwtSecret))
	if rec := en.do(t, request{target: "/auth/me", token: good}); rec.Code != http.StatusOK {
		t.Fatalf("hand-made valid token refused: %d %s", rec.Code, rec.Body)
	}
	parts := strings.Split(good, ".")
	tampered := forge(t, hs256, claims(func(c map[string]any) { c["sub"] = "2" }), []byte(jwtSecret))
	tampered = strings.Join([]string{parts[0], strings.Split(tampered, ".")[1], parts[2]}, ".")

	const notAuth, badToken = "Not authenticated", "Could not validate credentials"
	for _, tt := range []struct {
		name   string
		header string // the whole Authorization header; "-" sends none
		detail string
	}{
		{"no Authorization header", "-", notAuth},
		{"Basic scheme", "Basic YWRtaW5AZXhhbXBsZS5jb206cHc=", notAuth},
		{"token without scheme", access, notAuth},
		{"Bearer alone", "Bearer", notAuth},
		{"Bearer and a space", "Bearer ", notAuth},
		{"Bearer and spaces", "Bearer    ", notAuth},
		{"malformed token", "Bearer not-a-jwt", badToken},
		{"three garbage segments", "Bearer a.b.c", badToken},
		{"different secret", "Bearer " + forge(t, hs256, claims(noop), []byte("another-secret-0123456789abcdef-xyz")), badToken},
		{"alg none", "Bearer " + forge(t, map[string]any{"alg": "none", "typ": "JWT"}, claims(noop), nil), badToken},
		{"alg none with a signature", "Bearer " + forge(t, map[string]any{"alg": "none", "typ": "JWT"}, claims(noop), []byte(jwtSecret)), badToken},
		{"HS512", "Bearer " + forge(t, map[string]any{"alg": "HS512", "typ": "JWT"}, claims(noop), []byte(jwtSecret)), badToken},
		{"RS256 label", "Bearer " + forge(t, map[string]any{"alg": "RS256", "typ": "JWT"}, claims(noop), []byte(jwtSecret)), badToken},
		{"tampered payload", "Bearer " + tampered, badToken},
		{"no exp", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { delete(c, "exp") }), []byte(jwtSecret)), badToken},
		{"expired", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() }), []byte(jwtSecret)), badToken},
		{"issued in the future", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }), []byte(jwtSecret)), badToken},
		{"refresh token as access token", "Bearer " + login.RefreshToken, badToken},
		{"typ refresh, hand-made", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { c["typ"] = "refresh" }), []byte(jwtSecret)), badToken},
		{"no typ", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { delete(c, "typ") }), []byte(jwtSecret)), badToken},
		{"sub not a number", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { c["sub"] = "abc" }), []byte(jwtSecret)), badToken},
		{"no sub", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { delete(c, "sub") }), []byte(jwtSecret)), badToken},
		{"sub of no user", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { c["sub"] = "999" }), []byte(jwtSecret)), badToken},
		{"no jti", "Bearer " + forge(t, hs256, claims(func(c map[string]any) { delete(c, "jti") }), []byte(jwtSecret)), badToken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := request{target: "/auth/me"}
			if tt.header != "-" {
				r.headers = map[string]string{"Authorization": tt.header}
			}
			rec := en.do(t, r)
			wantError(t, rec, http.StatusUnauthorized, tt.detail)
		})
	}
	golden(t, "me-401-missing", en.do(t, request{target: "/auth/me"}).Body.Bytes())
	golden(t, "me-401-invalid", en.do(t, request{target: "/auth/me", token: "not-a-jwt"}).Body.Bytes())
}

func TestMe200AndExpiry(t *testing.T) {
	en := newEnv(t)
	en.register(t, "Ada@Example.com")
	tok := en.login(t, "ada@example.com")

	rec := en.do(t, request{target: "/auth/me", token: tok.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "id", "email", "role", "created_at")
	golden(t, "me-200", rec.Body.Bytes())

	// The scheme is case-insensitive.
	rec = en.do(t, request{target: "/auth/me", headers: map[string]string{"Authorization": "bearer " + tok.AccessToken}})
	wantStatus(t, rec, http.StatusOK)

	// Valid until the access TTL is over, not a second longer.
	en.clk.Advance(accessTTL - time.Second)
	wantStatus(t, en.do(t, request{target: "/auth/me", token: tok.AccessToken}), http.StatusOK)
	en.clk.Advance(time.Second)
	wantError(t, en.do(t, request{target: "/auth/me", token: tok.AccessToken}), http.StatusUnauthorized, "Could not validate credentials")
	// The refresh token still works after the access token expired.
	rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(tok.RefreshToken)})
	wantStatus(t, rec, http.StatusOK)
}

func refreshBody(token string) string {
	b, _ := json.Marshal(map[string]string{"refresh_token": token})
	return string(b)
}

func TestRefresh(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		en.register(t, "ada@example.com")
		p1 := en.login(t, "ada@example.com")

		rec := en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(p1.RefreshToken)})
		wantStatus(t, rec, http.StatusOK)
		wantKeys(t, rec.Body.Bytes(), "access_token", "refresh_token", "token_type", "expires_in")
		var p2 tokenBody
		decode(t, rec, &p2)
		if p2.TokenType != "bearer" || p2.ExpiresIn != int64(accessTTL/time.Second) ||
			p2.AccessToken == p1.AccessToken || p2.RefreshToken == p1.RefreshToken {
			t.Fatalf("refresh = %+v, want a new pair, bearer, expires_in %d", p2, int64(accessTTL/time.Second))
		}
		wantStatus(t, en.do(t, request{target: "/auth/me", token: p2.AccessToken}), http.StatusOK)

		// Reusing the exchanged refresh token is refused, and revokes the
		// pair issued from it.
		rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(p1.RefreshToken)})
		wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")
		rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(p2.RefreshToken)})
		wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")

		// The user is not locked out: a new login gives a working pair.
		p3 := en.login(t, "ada@example.com")
		rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(p3.RefreshToken)})
		wantStatus(t, rec, http.StatusOK)
		var p4 tokenBody
		decode(t, rec, &p4)

		// A refresh token expires after the refresh TTL.
		en.clk.Advance(refreshTTL)
		rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(p4.RefreshToken)})
		wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")
	})
}

func TestRefreshRefused(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		admin, _ := en.admin(t)
		bob, _ := en.newUser(t, "bob@example.com")
		bobTokens := en.login(t, "bob@example.com")
		tok := en.login(t, adminEmail)
		refreshClaims := accessClaims(admin.ID, en.clk.Now())
		refreshClaims["typ"] = "refresh"

		for _, tt := range []struct {
			name   string
			body   string
			status int
		}{
			{"access token as refresh token", refreshBody(tok.AccessToken), 401},
			{"garbage", refreshBody("garbage"), 401},
			{"refresh token signed with another secret", refreshBody(forge(t, hs256, refreshClaims, []byte("another-secret-0123456789abcdef-xyz"))), 401},
			{"well-signed refresh token never issued", refreshBody(forge(t, hs256, refreshClaims, []byte(jwtSecret))), 401},
			{"missing field", `{}`, 422},
			{"empty string", refreshBody(""), 422},
			{"null", `{"refresh_token":null}`, 422},
			{"number", `{"refresh_token":5}`, 422},
			{"empty body", ``, 400},
			{"malformed JSON", `{"refresh_token":`, 400},
		} {
			t.Run(tt.name, func(t *testing.T) {
				rec := en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: tt.body})
				detail := ""
				if tt.status == 401 {
					detail = "Could not validate credentials"
				}
				wantError(t, rec, tt.status, detail)
			})
		}
		// The refused attempts above did not spend the admin's refresh token.
		wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(tok.RefreshToken)}), http.StatusOK)

		// A deleted user cannot refresh.
		tokAdmin := en.login(t, adminEmail)
		wantStatus(t, en.do(t, request{method: http.MethodDelete, target: fmt.Sprintf("/admin/users/%d", bob.ID), token: tokAdmin.AccessToken}), http.StatusOK)
		rec := en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(bobTokens.RefreshToken)})
		wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")
	})
}

// TestRoleChangeNextRequest: the token says who, the database says what
// they may do, read again on every request.
func TestRoleChangeNextRequest(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, adminTok := en.admin(t)
		bob, bobTok := en.newUser(t, "bob@example.com")

		wantError(t, en.do(t, request{target: "/admin/users", token: bobTok.AccessToken}), http.StatusForbidden, "Admin privileges required")
		rec := en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"admin"}`, token: adminTok})
		wantStatus(t, rec, http.StatusOK)
		// Promotion applies to bob's existing token at once.
		wantStatus(t, en.do(t, request{target: "/admin/users", token: bobTok.AccessToken}), http.StatusOK)
		var me userBody
		decode(t, en.do(t, request{target: "/auth/me", token: bobTok.AccessToken}), &me)
		if me.Role != "admin" {
			t.Errorf("/auth/me after promotion = %+v, want role admin", me)
		}

		// Bob, now admin, demotes the first admin, whose existing token
		// (still claiming role admin) is refused on the next request.
		rec = en.do(t, request{method: http.MethodPatch, target: "/admin/users/1/role", body: `{"role":"user"}`, token: bobTok.AccessToken})
		wantStatus(t, rec, http.StatusOK)
		wantError(t, en.do(t, request{target: "/admin/users", token: adminTok}), http.StatusForbidden, "Admin privileges required")
		wantStatus(t, en.do(t, request{target: "/auth/me", token: adminTok}), http.StatusOK)
	})
}

// TestIdentitiesCannotPoseAsOthers (decisions.md, "Both services: ...
// identities that cannot pose as others"): beside alice@example.com, a
// fullwidth spelling of it is the same address (409 on register, her
// account on login); an address with a zero-width space, a bidirectional
// override or a Cyrillic а among Latin letters is refused with 422 on the
// email field; a password holding NUL or another control character is
// refused with 422 on the password field, at register and at login.
func TestIdentitiesCannotPoseAsOthers(t *testing.T) {
	en := newEnv(t)
	alice := en.register(t, "alice@example.com")
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("ａlice@example.com", password)}),
		http.StatusConflict, "Email already registered")
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("ALICE@EXAMPLE.COM", password)}),
		http.StatusConflict, "Email already registered")
	for _, posing := range []string{"alice\u200b@example.com", "\u202ealice@example.com", "аlice@example.com", "alicε@example.com"} {
		for _, target := range []string{"/auth/register", "/auth/login"} {
			b := wantError(t, en.do(t, request{method: http.MethodPost, target: target, body: credentials(posing, password)}), http.StatusUnprocessableEntity, "")
			if len(b.Errors) != 1 || b.Errors[0].Field != "email" {
				t.Errorf("POST %s %q: errors %+v, want one on email", target, posing, b.Errors)
			}
		}
	}
	var tok tokenBody
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("ａｌｉｃｅ@ｅｘａｍｐｌｅ.ｃｏｍ", password)})
	wantStatus(t, rec, http.StatusOK)
	decode(t, rec, &tok)
	var me userBody
	decode(t, en.do(t, request{target: "/auth/me", token: tok.AccessToken}), &me)
	if me.ID != alice.ID || me.Email != "alice@example.com" {
		t.Errorf("logged in with the fullwidth spelling as %+v, want alice %+v", me, alice)
	}
	for _, pw := range []string{strings.Repeat("\x00", 20), "correct horse\x00battery", "correct\nhorse battery"} {
		for _, target := range []string{"/auth/register", "/auth/login"} {
			b := wantError(t, en.do(t, request{method: http.MethodPost, target: target, body: credentials("bob@example.com", pw)}), http.StatusUnprocessableEntity, "")
			if len(b.Errors) != 1 || b.Errors[0].Field != "password" {
				t.Errorf("POST %s with a control character in the password: errors %+v, want one on password", target, b.Errors)
			}
		}
	}
}
