package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// invalidRegistration is a register body that fails validation quickly
// (no bcrypt) but still counts against the limit.
const invalidRegistration = `{"email":"nobody","password":"x"}`

func want429(t testing.TB, rec *httptest.ResponseRecorder, limit string, retryAfter string) {
	t.Helper()
	wantError(t, rec, http.StatusTooManyRequests, "Rate limit exceeded: "+limit)
	if got := strings.TrimSpace(rec.Body.String()); got != `{"detail":"Rate limit exceeded: `+limit+`"}` {
		t.Errorf("429 body = %s", got)
	}
	if got := rec.Header().Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After = %q, want %q", got, retryAfter)
	}
}

func notLimited(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code == http.StatusTooManyRequests {
		t.Fatalf("limited: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Retry-After") != "" {
		t.Errorf("Retry-After on a %d", rec.Code)
	}
}

// TestRegisterRateLimit: the register window, its 429 and Retry-After, on
// each database; on PostgreSQL the window is the database's (as run wires
// it), with the same answers.
func TestRegisterRateLimit(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		const client = "203.0.113.7:1234"
		reg := func(remote string) *httptest.ResponseRecorder {
			return en.do(t, request{method: http.MethodPost, target: "/auth/register", body: invalidRegistration, remote: remote})
		}
		// Five requests at t0, t0+10s, ..., t0+40s; a valid one among them.
		for i := range 5 {
			if i > 0 {
				en.clk.Advance(10 * time.Second)
			}
			if i == 2 {
				rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("ada@example.com", password), remote: client})
				wantStatus(t, rec, http.StatusCreated)
				continue
			}
			wantStatus(t, reg(client), http.StatusUnprocessableEntity)
		}
		// At t0+45.5s the oldest counted request leaves the window in 14.5s.
		en.clk.Advance(5500 * time.Millisecond)
		rec := reg(client)
		want429(t, rec, "5/minute", "15")
		golden(t, "register-429", rec.Body.Bytes())
		// A valid registration is refused as well, before anything is created.
		rec = en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials("bob@example.com", password), remote: client})
		want429(t, rec, "5/minute", "15")
		if _, err := en.st.Users().UserByEmail(t.Context(), "bob@example.com"); err == nil {
			t.Error("a refused registration created its user")
		}

		// Another client is not limited, and the port does not matter.
		notLimited(t, reg("203.0.113.8:1234"))
		want429(t, reg("203.0.113.7:9999"), "5/minute", "15")

		// At t0+59s: one second left.
		en.clk.Advance(13500 * time.Millisecond)
		want429(t, reg(client), "5/minute", "1")
		// At t0+60s the first request has left the window: one place frees.
		en.clk.Advance(time.Second)
		notLimited(t, reg(client))
		// The next place frees when the t0+10s request leaves: 10s from now.
		want429(t, reg(client), "5/minute", "10")
		// A minute after the last counted request, the whole window is free.
		en.clk.Advance(time.Minute)
		for range 5 {
			notLimited(t, reg(client))
		}
		want429(t, reg(client), "5/minute", "60")
	})
}

// TestLoginRateLimit: the login window, on each database as in
// TestRegisterRateLimit.
func TestLoginRateLimit(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		en.register(t, "ada@example.com")
		const client = "203.0.113.7:1234"
		login := func(pw, remote string) *httptest.ResponseRecorder {
			return en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("ada@example.com", pw), remote: remote})
		}
		for i := range 10 {
			switch i {
			case 3:
				wantStatus(t, login(password, client), http.StatusOK)
			case 4:
				wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/auth/login", body: `{}`, remote: client}), http.StatusUnprocessableEntity)
			default:
				wantStatus(t, login("wrong password", client), http.StatusUnauthorized)
			}
		}
		rec := login(password, client)
		want429(t, rec, "10/minute", "60")
		golden(t, "login-429", rec.Body.Bytes())
		en.clk.Advance(25 * time.Second)
		want429(t, login(password, client), "10/minute", "35")
		notLimited(t, login(password, "203.0.113.8:1234"))
		// The register limit is separate.
		notLimited(t, en.do(t, request{method: http.MethodPost, target: "/auth/register", body: invalidRegistration, remote: client}))
		en.clk.Advance(35 * time.Second)
		wantStatus(t, login(password, client), http.StatusOK)
	})
}

// TestRateLimitIgnoresUntrustedXFF: the socket peer is the client, whatever
// X-Forwarded-For or X-Real-IP say, unless the peer is a configured trusted
// proxy; private, loopback and link-local peers are not trusted implicitly.
func TestRateLimitIgnoresUntrustedXFF(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []option
	}{
		{"no trusted proxies", nil},
		{"peer outside the trusted proxies", []option{withTrustedProxies("10.0.0.0/8")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t, tt.opts...)
			for _, peer := range []string{"203.0.113.7:1234", "192.168.1.5:1234", "172.16.0.9:1234", "127.0.0.1:1234", "[::1]:1234", "169.254.1.1:1234"} {
				for i := range 6 {
					rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: invalidRegistration,
						remote: peer, headers: map[string]string{
							"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1),
							"X-Real-Ip":       fmt.Sprintf("198.51.101.%d", i+1),
						}})
					if i < 5 {
						notLimited(t, rec)
					} else {
						want429(t, rec, "5/minute", "60")
					}
				}
			}
		})
	}
}

// TestRateLimitTrustedProxy: from a trusted proxy, the client is the
// right-most X-Forwarded-For address outside the trusted ranges.
func TestRateLimitTrustedProxy(t *testing.T) {
	en := newEnv(t, withTrustedProxies("10.0.0.0/8"))
	const proxy = "10.0.0.5:443"
	reg := func(xff string) *httptest.ResponseRecorder {
		r := request{method: http.MethodPost, target: "/auth/register", body: invalidRegistration, remote: proxy}
		if xff != "" {
			r.headers = map[string]string{"X-Forwarded-For": xff}
		}
		return en.do(t, r)
	}
	for range 5 {
		notLimited(t, reg("198.51.100.1, 10.1.1.1"))
	}
	want429(t, reg("198.51.100.1, 10.1.1.1"), "5/minute", "60")
	// The same client seen through one proxy hop only.
	want429(t, reg("198.51.100.1"), "5/minute", "60")
	// Addresses the client put to the left of its real one do not help.
	want429(t, reg("1.1.1.1, 198.51.100.1"), "5/minute", "60")
	want429(t, reg("9.9.9.9, 8.8.8.8, 198.51.100.1, 10.2.2.2"), "5/minute", "60")
	want429(t, reg("garbage, 198.51.100.1"), "5/minute", "60")
	// Other clients behind the proxy have limits of their own.
	notLimited(t, reg("198.51.100.2, 10.1.1.1"))
	notLimited(t, reg("198.51.100.1, 198.51.100.3"))
	// The proxy's own requests (no X-Forwarded-For) count for the proxy.
	for range 5 {
		notLimited(t, reg(""))
	}
	want429(t, reg(""), "5/minute", "60")
	notLimited(t, reg("198.51.100.4"))
}

// TestRateLimitStats: GET /admin/rate-limits counts every request to the
// endpoints, whatever the answer, and the refusals.
func TestRateLimitStats(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t) // one registration, one login
		stats := func() string {
			t.Helper()
			rec := en.do(t, request{target: "/admin/rate-limits", token: tok})
			wantStatus(t, rec, http.StatusOK)
			return strings.TrimSpace(rec.Body.String())
		}
		const format = `{"rate_limits":[` +
			`{"endpoint":"/auth/register","limit":"5/minute","total_requests":%d,"rejected_requests":%d},` +
			`{"endpoint":"/auth/login","limit":"10/minute","total_requests":%d,"rejected_requests":%d}]}`
		if got, want := stats(), fmt.Sprintf(format, 1, 0, 1, 0); got != want {
			t.Errorf("rate limits = %s, want %s", got, want)
		}

		const x, y = "203.0.113.7:1234", "203.0.113.8:1234"
		post := func(target, body, remote string, status int) {
			t.Helper()
			wantStatus(t, en.do(t, request{method: http.MethodPost, target: target, body: body, remote: remote}), status)
		}
		post("/auth/register", invalidRegistration, x, 422)
		post("/auth/register", `{"email":"x@example.com","password":"short"}`, x, 422)
		post("/auth/register", `{`, x, 400)
		post("/auth/register", credentials(adminEmail, password), x, 409)
		post("/auth/register", credentials("bob@example.com", password), x, 201)
		post("/auth/register", credentials("carol@example.com", password), x, 429)
		post("/auth/register", invalidRegistration, x, 429)
		// register: 1 + 7 requests, 2 refused.

		post("/auth/login", credentials(adminEmail, "wrong password"), y, 401)
		post("/auth/login", credentials("nobody@example.com", password), y, 401)
		post("/auth/login", `{}`, y, 422)
		post("/auth/login", ``, y, 400)
		for range 6 {
			post("/auth/login", credentials("bob@example.com", password), y, 200)
		}
		post("/auth/login", credentials("bob@example.com", password), y, 429)
		// login: 1 + 11 requests, 1 refused.

		// Other endpoints and methods are not counted.
		post("/auth/refresh", `{}`, y, 422)
		wantStatus(t, en.do(t, request{target: "/auth/login", remote: y}), http.StatusMethodNotAllowed)

		got := stats()
		if want := fmt.Sprintf(format, 8, 2, 12, 1); got != want {
			t.Errorf("rate limits = %s, want %s", got, want)
		}
		golden(t, "rate-limits-200", []byte(got))
	})
}

// TestRateLimitCountsOversizeBodies: a POST /auth/register or /auth/login
// whose body is over the limit is still a request to the endpoint
// (decisions.md: total_requests "counts every request to the endpoint,
// whatever its answer"), whether it declares its length or not.
func TestRateLimitCountsOversizeBodies(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)
		big := `{"email":"` + strings.Repeat("a", 1<<20) + `"}`
		for _, target := range []string{"/auth/register", "/auth/login"} {
			// With a Content-Length.
			wantError(t, en.do(t, request{method: http.MethodPost, target: target, body: big}), http.StatusRequestEntityTooLarge, "")
			// Chunked, without one.
			wantError(t, en.doChunked(t, http.MethodPost, target, big), http.StatusRequestEntityTooLarge, "")
		}
		rec := en.do(t, request{target: "/admin/rate-limits", token: tok})
		want := `{"rate_limits":[` +
			`{"endpoint":"/auth/register","limit":"5/minute","total_requests":3,"rejected_requests":0},` +
			`{"endpoint":"/auth/login","limit":"10/minute","total_requests":3,"rejected_requests":0}]}`
		if got := strings.TrimSpace(rec.Body.String()); got != want {
			t.Errorf("after one oversize request with Content-Length and one chunked per endpoint:\n"+
				"rate limits = %s\nwant          %s", got, want)
		}
	})
}

// TestRateLimitStoreDown: when the database holding the windows cannot
// answer, a rate-limited request is not failed because of it: the
// process's own window decides (fail open), still refusing the sixth
// registration in a minute; the failures are counted in
// patentsvc_ratelimit_store_errors_total and the outage logged once.
func TestRateLimitStoreDown(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect), withSharedLimits())
		const client = "203.0.113.7:1234"
		reg := func() *httptest.ResponseRecorder {
			return en.do(t, request{method: http.MethodPost, target: "/auth/register", body: invalidRegistration, remote: client})
		}
		// Two through the database, then it goes away.
		wantStatus(t, reg(), http.StatusUnprocessableEntity)
		en.clk.Advance(10 * time.Second)
		wantStatus(t, reg(), http.StatusUnprocessableEntity)
		en.clk.Advance(10 * time.Second)
		en.databaseDown(t)
		// Three more places in the process's window, which remembers the
		// two; validation answers without the database.
		for range 3 {
			wantStatus(t, reg(), http.StatusUnprocessableEntity)
		}
		want429(t, reg(), "5/minute", "40")
		// A login needs the database: its failure is the login's own 500,
		// not the limiter's.
		rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("ada@example.com", password), remote: client})
		wantStatus(t, rec, http.StatusInternalServerError)

		metrics := en.do(t, request{target: "/metrics"}).Body.String()
		if !strings.Contains(metrics, "\npatentsvc_ratelimit_store_errors_total 5\n") {
			t.Errorf("metrics lack patentsvc_ratelimit_store_errors_total 5:\n%s", grepLines(metrics, "patentsvc_ratelimit"))
		}
		const down = `"msg":"rate-limit store unreachable: each replica enforces its own windows until it answers"`
		if n := strings.Count(en.logs.String(), down); n != 1 {
			t.Errorf("outage logged %d times, want once", n)
		}
	})
}

// grepLines returns the lines of s that contain substr.
func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
