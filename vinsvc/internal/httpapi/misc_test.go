package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// doChunked sends r without a Content-Length.
func (en *env) doChunked(t testing.TB, r request) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(r.method, r.target, io.NopCloser(strings.NewReader(r.body)))
	req.ContentLength = -1
	req.Header.Set("X-Gateway-Proxy-Secret", secret)
	rec := httptest.NewRecorder()
	en.e.ServeHTTP(rec, req)
	return rec
}

func TestRouting404And405(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		method, target string
		status         int
		code           string
	}{
		{http.MethodGet, "/", 404, "NOT_FOUND"},
		{http.MethodGet, "/v1/nope", 404, "NOT_FOUND"},
		{http.MethodGet, "/v2/decode", 404, "NOT_FOUND"},
		{http.MethodGet, "/decode?vin=" + vpictest.VINHondaAccord, 404, "NOT_FOUND"},
		{http.MethodPost, "/v1/decode", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodDelete, "/v1/decode", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodGet, "/v1/batch", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodPost, "/v1/health", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodOptions, "/v1/decode", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodOptions, "/v1/batch", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodOptions, "/v1/nope", 404, "NOT_FOUND"},
	} {
		for _, headers := range []map[string]string{nil, {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"}} {
			// vinsvc has no CORS: a preflight is a wrong method too.
			if headers != nil && tt.method != http.MethodOptions {
				continue
			}
			rec := en.do(t, request{method: tt.method, target: tt.target, headers: headers})
			wantError(t, rec, tt.status, tt.code)
			allow := rec.Header().Get("Allow")
			if tt.status == 405 && (allow == "" || strings.Contains(allow, http.MethodOptions)) {
				t.Errorf("%s %s %v: 405 with Allow %q, want the methods served (never OPTIONS)", tt.method, tt.target, headers, allow)
			}
		}
	}
	golden(t, "404", en.do(t, request{target: "/nope"}).Body.Bytes())
	golden(t, "405", en.do(t, request{method: http.MethodPut, target: "/v1/batch"}).Body.Bytes())
	golden(t, "413", en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: strings.Repeat(" ", 65<<10) + "{}"}).Body.Bytes())
}

func TestRequestID(t *testing.T) {
	en := newEnv(t)
	uuid := regexp.MustCompile(`^[0-9a-f-]{36}$`)
	for _, tt := range []struct {
		incoming string
		keep     bool
	}{
		{"", false}, {"req-123.abc_DEF", true}, {"bad id with spaces", false}, {strings.Repeat("x", 129), false},
	} {
		for _, target := range []string{"/v1/decode?vin=" + vpictest.VINHondaAccord, "/v1/decode", "/nope", "/v1/health", "/livez"} {
			rec := en.do(t, request{target: target, headers: map[string]string{"X-Request-Id": tt.incoming}})
			got := rec.Header().Get("X-Request-Id")
			if tt.keep && got != tt.incoming || !tt.keep && !uuid.MatchString(got) {
				t.Errorf("%s with X-Request-Id %q: got %q", target, tt.incoming, got)
			}
		}
	}
}

func TestAccessLogAndNoSecrets(t *testing.T) {
	en := newEnv(t)
	en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: map[string]string{"X-Request-Id": "trace-me-1"}})
	en.do(t, request{target: "/v1/decode", noAuth: true, headers: map[string]string{"X-Gateway-Proxy-Secret": "wrong-secret-value"}})
	logs := en.logs.String()
	if strings.Contains(logs, secret) || strings.Contains(logs, "wrong-secret-value") {
		t.Fatalf("logs contain a secret:\n%s", logs)
	}
	line := regexp.MustCompile(`\{[^\n]*"msg":"request"[^\n]*"request_id":"trace-me-1"[^\n]*\}|\{[^\n]*"request_id":"trace-me-1"[^\n]*"msg":"request"[^\n]*\}`).FindString(logs)
	for _, want := range []string{`"method":"GET"`, `"route":"/v1/decode"`, `"status":200`, `"latency_ms":`} {
		if !strings.Contains(line, want) {
			t.Errorf("access log line %q lacks %s", line, want)
		}
	}
}

func TestMetrics(t *testing.T) {
	en := newEnv(t)
	en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	en.do(t, request{target: "/nope/" + vpictest.VINHondaAccord})
	rec := en.do(t, request{target: "/metrics", noAuth: true})
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics status %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`http_requests_total{method="GET",route="/v1/decode",status="200"} 2`,
		`http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`http_request_duration_seconds_bucket{method="GET",route="/v1/decode",status="200",le=`,
		"vinsvc_cache_hits_total 1",
		"vinsvc_cache_misses_total 1",
		"vinsvc_cache_entries 1",
		"vinsvc_cache_evictions_total 0",
		"vinsvc_cache_size_bytes ",
		`vinsvc_upstream_requests_total{operation="decode",outcome="ok"} 1`,
		`vinsvc_upstream_request_duration_seconds_count{operation="decode"} 1`,
		"vinsvc_upstream_reachable 1",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, vpictest.VINHondaAccord) {
		t.Error("/metrics labels contain a raw URL")
	}
}
