package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// doChunked sends a body without a Content-Length.
func (en *env) doChunked(t testing.TB, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, en.root+target, io.NopCloser(strings.NewReader(body)))
	req.ContentLength = -1
	req.RemoteAddr = en.freshAddr()
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	en.srv.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id header", method, target)
	}
	return rec
}

func TestModels(t *testing.T) {
	en := newEnv(t)
	// No token needed; a bad one is ignored.
	for _, headers := range []map[string]string{nil, {"Authorization": "Bearer not-a-jwt"}} {
		rec := en.do(t, request{target: "/models", headers: headers})
		wantStatus(t, rec, http.StatusOK)
		wantKeys(t, rec.Body.Bytes(), "models", "default")
		golden(t, "models-200", rec.Body.Bytes())
	}
	var body struct {
		Models []map[string]string `json:"models"`
		Def    string              `json:"default"`
	}
	decode(t, en.do(t, request{target: "/models"}), &body)
	if len(body.Models) != 5 || body.Def != "openai/gpt-4o-mini" {
		t.Fatalf("models = %+v, want 5 and default openai/gpt-4o-mini", body)
	}
	want := []string{"openai/gpt-4o-mini", "anthropic/claude-sonnet-4.5", "google/gemini-2.5-flash",
		"meta-llama/llama-3.3-70b-instruct", "mistralai/mistral-nemo"}
	for i, m := range body.Models {
		if len(m) != 3 || m["id"] != want[i] || m["name"] == "" || !strings.HasPrefix(m["id"], m["provider"]+"/") {
			t.Errorf("model %d = %v, want {id %s, name, provider before the slash}", i, m, want[i])
		}
	}
}

// TestHealthVersion: health reports the build's version run() passes down
// (main.version, stamped by make build), "dev" when unstamped.
func TestHealthVersion(t *testing.T) {
	for want, opts := range map[string][]option{"v1.4.0-3-gabc1234": {withVersion("v1.4.0-3-gabc1234")}, "dev": nil} {
		var h map[string]any
		decode(t, newEnv(t, opts...).do(t, request{target: "/health"}), &h)
		if h["version"] != want {
			t.Errorf("health version = %v, want %q", h["version"], want)
		}
	}
}

func TestHealth(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     []option
		analyzer string
	}{
		{"analyzer ready", nil, "ready"},
		{"analyzer not configured", []option{withAnalyzerMissing("SERPAPI_API_KEY", "LLM_API_KEY")}, "not_configured"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t, tt.opts...)
			en.clk.Advance(10 * time.Second)
			rec := en.do(t, request{target: "/health", headers: map[string]string{"Authorization": "Bearer junk"}})
			wantStatus(t, rec, http.StatusOK)
			wantKeys(t, rec.Body.Bytes(), "status", "version", "uptime_seconds", "database", "analyzer", "scheduler")
			golden(t, "health-200-"+tt.analyzer, rec.Body.Bytes())
			var h map[string]any
			decode(t, rec, &h)
			if h["status"] != "ok" || h["database"] != "ok" || h["analyzer"] != tt.analyzer ||
				h["scheduler"] != "disabled" || h["uptime_seconds"] != float64(100) || h["version"] == "" {
				t.Errorf("health = %v", h)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
			wantStatus(t, en.do(t, request{target: "/livez"}), http.StatusOK)
			wantStatus(t, en.do(t, request{target: "/readyz"}), http.StatusOK)

			en.databaseDown(t)
			rec = en.do(t, request{target: "/health"})
			wantStatus(t, rec, http.StatusServiceUnavailable)
			golden(t, "health-503-"+tt.analyzer, rec.Body.Bytes())
			decode(t, rec, &h)
			if h["status"] != "degraded" || h["database"] != "error" || h["analyzer"] != tt.analyzer {
				t.Errorf("health with the database closed = %v", h)
			}
			rec = en.do(t, request{target: "/readyz"})
			wantError(t, rec, http.StatusServiceUnavailable, "database unavailable")
			// Liveness does not depend on the database.
			rec = en.do(t, request{target: "/livez"})
			wantStatus(t, rec, http.StatusOK)
			if got := strings.TrimSpace(rec.Body.String()); got != `{"status":"ok"}` {
				t.Errorf("/livez = %s", got)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	en := newEnv(t)
	_, tok := en.admin(t)
	en.do(t, request{target: "/models"})
	en.do(t, request{target: "/models"})
	en.do(t, request{method: http.MethodDelete, target: "/admin/users/77", token: tok})
	en.do(t, request{target: "/nope/secret-path"})
	rec := en.do(t, request{target: "/metrics"})
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	for _, want := range []string{
		`http_requests_total{method="GET",route="/models",status="200"} 2`,
		`http_requests_total{method="POST",route="/auth/register",status="201"} 1`,
		`http_requests_total{method="POST",route="/auth/login",status="200"} 1`,
		`http_requests_total{method="DELETE",route="/admin/users/:user_id",status="404"} 1`,
		`http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`http_request_duration_seconds_bucket{method="GET",route="/models",status="200",le=`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "/admin/users/77") || strings.Contains(body, "secret-path") {
		t.Error("/metrics is labelled by raw path")
	}
}

func TestErrors404405413(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		method, target string
		status         int
		detail         string
	}{
		{http.MethodGet, "/", 404, "resource not found"},
		{http.MethodGet, "/nope", 404, "resource not found"},
		{http.MethodGet, "/auth", 404, "resource not found"},
		{http.MethodGet, "/admin/users/1/role/x", 404, "resource not found"},
		{http.MethodGet, "/patents/models", 404, "resource not found"},
		{http.MethodGet, "/auth/login", 405, "method not allowed"},
		{http.MethodPut, "/auth/register", 405, "method not allowed"},
		{http.MethodPost, "/auth/me", 405, "method not allowed"},
		{http.MethodDelete, "/models", 405, "method not allowed"},
		{http.MethodPost, "/health", 405, "method not allowed"},
		{http.MethodPut, "/admin/tracked", 405, "method not allowed"},
		{http.MethodGet, "/admin/users/1/role", 405, "method not allowed"},
		// OPTIONS without an Origin is not a CORS preflight: 405 like any
		// other method the route does not serve.
		{http.MethodOptions, "/models", 405, "method not allowed"},
		{http.MethodOptions, "/auth/login", 405, "method not allowed"},
		{http.MethodOptions, "/nope", 404, "resource not found"},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := en.do(t, request{method: tt.method, target: tt.target})
			wantError(t, rec, tt.status, tt.detail)
			if allow := rec.Header().Get("Allow"); tt.status == 405 && (allow == "" || strings.Contains(allow, http.MethodOptions)) {
				t.Errorf("405 with Allow %q, want the methods served (never OPTIONS)", allow)
			}
		})
	}
	// A CORS preflight is answered by the CORS layer on a known path
	// (TestCORS), and is a 404 like any request on an unknown one.
	wantError(t, en.do(t, request{method: http.MethodOptions, target: "/nope", headers: map[string]string{
		"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"}}), 404, "resource not found")
	rec := en.do(t, request{method: http.MethodPut, target: "/auth/login"})
	if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "POST") || strings.Contains(allow, "PUT") {
		t.Errorf("PUT /auth/login: Allow = %q, want POST listed", allow)
	}
	if allow := en.do(t, request{method: http.MethodPost, target: "/admin/tracked/Acme"}).Header().Get("Allow"); !strings.Contains(allow, "DELETE") {
		t.Errorf("POST /admin/tracked/Acme: Allow = %q, want DELETE listed", allow)
	}
	golden(t, "404", en.do(t, request{target: "/nope"}).Body.Bytes())
	golden(t, "405", rec.Body.Bytes())

	// Over the body limit, with or without a Content-Length: 413.
	over := `{"email":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, target := range []string{"/auth/register", "/auth/login", "/auth/refresh"} {
		rec = en.do(t, request{method: http.MethodPost, target: target, body: over})
		wantError(t, rec, http.StatusRequestEntityTooLarge, "request body too large")
		rec = en.doChunked(t, http.MethodPost, target, over)
		wantError(t, rec, http.StatusRequestEntityTooLarge, "request body too large")
	}
	golden(t, "413", rec.Body.Bytes())
}

// TestBodyLimitIsOneMiB: decisions.md limits patentsvc bodies to 1 MiB
// (1,048,576 bytes): a body of exactly that size is read and validated
// (here: 422, the email is too long), one byte more is 413.
func TestBodyLimitIsOneMiB(t *testing.T) {
	en := newEnv(t)
	exact := `{"email":"` + strings.Repeat("a", 1<<20-len(`{"email":""}`)) + `"}`
	if len(exact) != 1<<20 {
		t.Fatalf("body of %d bytes", len(exact))
	}
	for _, tt := range []struct {
		name   string
		body   string
		status int
	}{
		{"1,000,000 bytes", exact[:1_000_000-2] + `"}`, http.StatusUnprocessableEntity},
		{"1,000,001 bytes", exact[:1_000_001-2] + `"}`, http.StatusUnprocessableEntity},
		{"1 MiB", exact, http.StatusUnprocessableEntity},
		{"1 MiB and 1 byte", exact + " ", http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, rec := range []*httptest.ResponseRecorder{
				en.do(t, request{method: http.MethodPost, target: "/auth/register", body: tt.body}),
				en.doChunked(t, http.MethodPost, "/auth/register", tt.body),
			} {
				if rec.Code != tt.status {
					t.Errorf("POST /auth/register with a %d-byte body = %d %s, want %d",
						len(tt.body), rec.Code, strings.TrimSpace(rec.Body.String()), tt.status)
				}
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	en := newEnv(t)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, tt := range []struct {
		incoming string
		keep     bool
	}{
		{"", false}, {"req-123.abc_DEF", true}, {"bad id with spaces", false}, {strings.Repeat("x", 129), false},
		{strings.Repeat("x", 128), true}, {`inject"}`, false},
	} {
		for _, r := range []request{
			{target: "/models"}, {target: "/nope"}, {target: "/auth/me"}, {method: http.MethodPost, target: "/auth/login", body: `{`},
			{method: http.MethodPut, target: "/models"}, {target: "/health"},
		} {
			r.headers = map[string]string{"X-Request-Id": tt.incoming}
			rec := en.do(t, r)
			got := rec.Header().Get("X-Request-Id")
			if tt.keep && got != tt.incoming || !tt.keep && !uuid.MatchString(got) {
				t.Errorf("%s %s with X-Request-Id %q: got %q", r.method, r.target, tt.incoming, got)
			}
		}
	}
}

func TestRootPath(t *testing.T) {
	en := newEnv(t, withRootPath("/patents"))
	en.root = "" // targets below are spelled out
	for _, target := range []string{"/patents/models", "/patents/health", "/patents/livez", "/patents/readyz", "/patents/metrics"} {
		wantStatus(t, en.do(t, request{target: target}), http.StatusOK)
	}
	rec := en.do(t, request{target: "/patents/models"})
	golden(t, "models-200", rec.Body.Bytes())
	for _, target := range []string{"/models", "/health", "/auth/me", "/admin/users", "/patents"} {
		wantError(t, en.do(t, request{target: target}), http.StatusNotFound, "resource not found")
	}
	rec = en.do(t, request{method: http.MethodPost, target: "/patents/auth/register", body: credentials("ada@example.com", password)})
	wantStatus(t, rec, http.StatusCreated)
	rec = en.do(t, request{method: http.MethodPost, target: "/patents/auth/login", body: credentials("ada@example.com", password)})
	wantStatus(t, rec, http.StatusOK)
	var tok tokenBody
	decode(t, rec, &tok)
	wantStatus(t, en.do(t, request{target: "/patents/admin/users", token: tok.AccessToken}), http.StatusOK)
	wantError(t, en.do(t, request{target: "/patents/admin/users"}), http.StatusUnauthorized, "Not authenticated")
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/register", body: credentials("bob@example.com", password)}),
		http.StatusNotFound, "resource not found")
}

func TestCORS(t *testing.T) {
	en := newEnv(t)
	preflight := func(origin string) *httptest.ResponseRecorder {
		return en.do(t, request{method: http.MethodOptions, target: "/auth/login", headers: map[string]string{
			"Origin":                         origin,
			"Access-Control-Request-Method":  "POST",
			"Access-Control-Request-Headers": "content-type, authorization",
		}})
	}
	rec := preflight("http://localhost:3000")
	wantStatus(t, rec, http.StatusNoContent)
	h := rec.Header()
	if got := h.Get("Access-Control-Allow-Origin"); got != "http://localhost:3000" {
		t.Errorf("Access-Control-Allow-Origin = %q, want http://localhost:3000", got)
	}
	if got := h.Get("Access-Control-Allow-Methods"); !strings.Contains(got, "POST") {
		t.Errorf("Access-Control-Allow-Methods = %q, want POST listed", got)
	}
	if got := strings.ToLower(h.Get("Access-Control-Allow-Headers")); !strings.Contains(got, "authorization") || !strings.Contains(got, "content-type") {
		t.Errorf("Access-Control-Allow-Headers = %q, want Authorization and Content-Type", got)
	}
	wantStatus(t, preflight("http://localhost:5173"), http.StatusNoContent)

	for _, origin := range []string{"http://evil.example", "http://localhost:3001", "https://localhost:3000", "null"} {
		rec := preflight(origin)
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin = %q, want none", origin, got)
		}
	}

	// A simple request from an allowed origin is answered with the origin
	// and the exposed headers; from another origin, without them.
	rec = en.do(t, request{target: "/models", headers: map[string]string{"Origin": "http://localhost:3000"}})
	wantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "http://localhost:3000" {
		t.Errorf("GET /models from an allowed origin: Access-Control-Allow-Origin = %q", got)
	}
	if got := rec.Header().Get("Access-Control-Expose-Headers"); !strings.Contains(got, "Retry-After") || !strings.Contains(got, "X-Request-Id") {
		t.Errorf("Access-Control-Expose-Headers = %q, want Retry-After and X-Request-Id", got)
	}
	rec = en.do(t, request{target: "/models", headers: map[string]string{"Origin": "http://evil.example"}})
	wantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("GET /models from a disallowed origin: Access-Control-Allow-Origin = %q", got)
	}
}

// TestNoSecretsInLogs: passwords, tokens and the signing secret never reach
// the logs, the store's statement logs (at DEBUG) included.
func TestNoSecretsInLogs(t *testing.T) {
	en := newEnv(t, withStoreLogs())
	en.register(t, "ada@example.com")
	tok := en.login(t, "ada@example.com")
	wantStatus(t, en.do(t, request{target: "/auth/me", token: tok.AccessToken, headers: map[string]string{"X-Request-Id": "trace-me-1"}}), http.StatusOK)
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(tok.RefreshToken)})
	wantStatus(t, rec, http.StatusOK)
	var tok2 tokenBody
	decode(t, rec, &tok2)
	// Failures too: a wrong password, a reused refresh token, an expired
	// access token, a token in a query string.
	const wrong = "wrong horse battery staple"
	wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("ada@example.com", wrong)}), http.StatusUnauthorized)
	wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(tok.RefreshToken)}), http.StatusUnauthorized)
	en.clk.Advance(accessTTL)
	wantStatus(t, en.do(t, request{target: "/auth/me", token: tok.AccessToken}), http.StatusUnauthorized)
	wantStatus(t, en.do(t, request{target: "/nope?token=" + tok2.AccessToken}), http.StatusNotFound)

	logs := en.logs.String()
	if !strings.Contains(logs, `"sql":`) {
		t.Fatalf("the store's statements were not logged at DEBUG; the test would not see them:\n%s", logs)
	}
	for name, secret := range map[string]string{
		"password":             password,
		"wrong password":       wrong,
		"JWT secret":           jwtSecret,
		"access token":         tok.AccessToken,
		"refresh token":        tok.RefreshToken,
		"second access token":  tok2.AccessToken,
		"second refresh token": tok2.RefreshToken,
	} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain the %s", name)
		}
		// Nor any token's signature or claims segment on its own.
		if parts := strings.Split(secret, "."); len(parts) == 3 {
			for _, p := range parts[1:] {
				if strings.Contains(logs, p) {
					t.Errorf("logs contain a segment of the %s", name)
				}
			}
		}
	}
	// The access log line is there, with what it should carry.
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON", line)
		}
		if m["msg"] == "request" && m["request_id"] == "trace-me-1" {
			found = m["method"] == "GET" && m["route"] == "/auth/me" && m["status"] == float64(200) && m["latency_ms"] != nil
		}
	}
	if !found {
		t.Errorf("no access log line for GET /auth/me with request id, method, route, status, latency:\n%s", logs)
	}
}

// TestErrorBodiesHaveOnlyDetail walks a sample of every error the API
// gives and checks the body shape.
func TestErrorBodiesHaveOnlyDetail(t *testing.T) {
	en := newEnv(t)
	_, tok := en.admin(t)
	_, user := en.newUser(t, "bob@example.com")
	for _, tt := range []struct {
		r      request
		status int
	}{
		{request{method: http.MethodPost, target: "/auth/register", body: `{`}, 400},
		{request{method: http.MethodPost, target: "/auth/register", body: `{}`}, 422},
		{request{method: http.MethodPost, target: "/auth/register", body: credentials(adminEmail, password)}, 409},
		{request{method: http.MethodPost, target: "/auth/login", body: credentials(adminEmail, "nope nope")}, 401},
		{request{target: "/auth/me"}, 401},
		{request{target: "/admin/users", token: user.AccessToken}, 403},
		{request{target: "/admin/alerts?limit=0", token: tok}, 422},
		{request{method: http.MethodDelete, target: "/admin/tracked/Acme", token: tok}, 404},
		{request{method: http.MethodDelete, target: "/admin/users/1", token: tok}, 400},
		{request{target: "/nope"}, 404},
		{request{method: http.MethodPatch, target: "/models"}, 405},
	} {
		rec := en.do(t, tt.r)
		wantError(t, rec, tt.status, "")
	}
}

// TestHealthDemo: under make demo health says so; otherwise the field is
// absent.
func TestHealthDemo(t *testing.T) {
	for _, on := range []bool{false, true} {
		var opts []option
		if on {
			opts = append(opts, demo())
		}
		var h map[string]any
		decode(t, newEnv(t, opts...).do(t, request{target: "/health"}), &h)
		if got, present := h["demo"]; on && got != true || !on && present {
			t.Errorf("demo %v: health %v", on, h)
		}
	}
}
