package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// logLines decodes the env's JSON log lines.
func logLines(t testing.TB, en *env) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(en.logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// A 500 UPSTREAM_ERROR logs its cause once at ERROR, with the request id
// (docs/operations.md, "Logs"): one line per failed request whatever the
// number of attempts, and without the upstream's URL or address.
func TestDecode500UpstreamLogged(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fail  func(en *env)
		cause string // in the logged err
	}{
		{"status 503 on every attempt", func(en *env) {
			en.up.Script(vpictest.Reply{Status: 503}, vpictest.Reply{Status: 503}, vpictest.Reply{Status: 503})
		}, "upstream failure: decode: status 503"},
		{"unreachable", func(en *env) { en.up.Close() }, "upstream failure: decode: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t, withRetries(2))
			u, err := url.Parse(en.up.URL)
			if err != nil {
				t.Fatal(err)
			}
			tt.fail(en)
			rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
			wantError(t, rec, http.StatusInternalServerError, "UPSTREAM_ERROR")

			var errs []map[string]any
			for _, l := range logLines(t, en) {
				if l["level"] == "ERROR" {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("%d ERROR lines, want 1; logs:\n%s", len(errs), en.logs)
			}
			l := errs[0]
			if l["msg"] != "request failed" || l["route"] != "/v1/decode" || l["status"] != 500.0 {
				t.Errorf("ERROR line = %v, want request failed, route /v1/decode, status 500", l)
			}
			if id := rec.Header().Get("X-Request-Id"); l["request_id"] != id {
				t.Errorf("ERROR line request_id = %v, want the response's %q", l["request_id"], id)
			}
			cause, _ := l["err"].(string)
			if !strings.Contains(cause, tt.cause) {
				t.Errorf("logged err = %q, want it to hold %q", cause, tt.cause)
			}
			for _, secret := range []string{en.up.URL, u.Host, u.Hostname(), "/api/vehicles"} {
				if strings.Contains(en.logs.String(), secret) {
					t.Errorf("the logs reveal the upstream (%q):\n%s", secret, en.logs)
				}
			}
		})
	}
}
