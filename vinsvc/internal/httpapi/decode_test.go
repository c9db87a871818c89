package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

func TestDecode200MissThenHit(t *testing.T) {
	en := newEnv(t)
	rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
	}
	for h, want := range map[string]string{"X-Cache": "MISS", "X-Data-Source": "NHTSA vPIC"} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	golden(t, "decode-200-miss", rec.Body.Bytes())

	rec = en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("second decode: status %d, X-Cache %q; want 200 HIT", rec.Code, rec.Header().Get("X-Cache"))
	}
	golden(t, "decode-200-hit", rec.Body.Bytes())
	if n := en.up.CallCount(); n != 1 {
		t.Errorf("upstream calls = %d, want 1", n)
	}
}

// TestDecodeMapping checks the field mapping on every recorded answer: all
// fields present, trimmed values, nulls for empty and "Not Applicable",
// numbers parsed, error_text null only for code "0".
func TestDecodeMapping(t *testing.T) {
	en := newEnv(t)
	for _, v := range []string{vpictest.VINFordF150, vpictest.VINVWTiguan, vpictest.VINHyundaiIoniq, vpictest.VINBMWCheckDigit} {
		t.Run(v, func(t *testing.T) {
			rec := en.do(t, request{target: "/v1/decode?vin=" + v})
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			golden(t, "decode-200-"+v, rec.Body.Bytes())
		})
	}
}

func TestDecodeNormalisesVIN(t *testing.T) {
	en := newEnv(t)
	rec := en.do(t, request{target: "/v1/decode?vin=%20%201hgcm82633a004352%09"})
	var got struct{ VIN string }
	decode(t, rec, &got)
	if rec.Code != http.StatusOK || got.VIN != vpictest.VINHondaAccord {
		t.Fatalf("decode of a lowercase padded VIN: status %d, vin %q", rec.Code, got.VIN)
	}
	calls := en.up.Calls()
	if len(calls) != 1 || !strings.HasSuffix(calls[0].Path, "/DecodeVinValues/"+vpictest.VINHondaAccord) || calls[0].RawQuery != "format=json" {
		t.Errorf("upstream calls = %+v, want one GET DecodeVinValues/%s?format=json", calls, vpictest.VINHondaAccord)
	}
}

func TestDecodeRaw(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		q       string
		wantRaw bool
	}{
		{"", false}, {"&raw=false", false}, {"&raw=0", false}, {"&raw=true", true}, {"&raw=1", true},
	} {
		rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINFordF150 + tt.q})
		var body map[string]any
		decode(t, rec, &body)
		raw, has := body["raw"]
		if has != tt.wantRaw {
			t.Errorf("raw%s: raw present = %v, want %v", tt.q, has, tt.wantRaw)
			continue
		}
		if tt.wantRaw {
			m, ok := raw.(map[string]any)
			if !ok || len(m) != 145 || m["VehicleType"] != "TRUCK " || m["BusType"] != "Not Applicable" {
				t.Errorf("raw%s = %d keys, VehicleType %q; want the 145-key record as received", tt.q, len(m), m["VehicleType"])
			}
		}
	}
}

func TestDecode400(t *testing.T) {
	en := newEnv(t)
	for _, tt := range []struct {
		name   string
		target string
		code   string
		msg    string
	}{
		{"missing vin", "/v1/decode", "BAD_REQUEST", "missing required query parameter vin"},
		{"empty vin", "/v1/decode?vin=", "BAD_REQUEST", "missing"},
		{"blank vin", "/v1/decode?vin=%20%20", "BAD_REQUEST", "missing"},
		{"vin twice", "/v1/decode?vin=" + vpictest.VINHondaAccord + "&vin=" + vpictest.VINFordF150, "BAD_REQUEST", "once"},
		{"short", "/v1/decode?vin=1HGCM82633A00435", "INVALID_VIN", "exactly 17 characters, got 16"},
		{"long", "/v1/decode?vin=1HGCM82633A0043521", "INVALID_VIN", "got 18"},
		{"letter O", "/v1/decode?vin=1HGCM82633AO04352", "INVALID_VIN", "'O' at position 12"},
		{"wildcard", "/v1/decode?vin=1HGCM826*3A004352", "INVALID_VIN", "position 9"},
		{"bad raw", "/v1/decode?vin=" + vpictest.VINHondaAccord + "&raw=yes", "BAD_REQUEST", "raw must be true, false, 1 or 0"},
		{"empty raw", "/v1/decode?vin=" + vpictest.VINHondaAccord + "&raw=", "BAD_REQUEST", "raw must be"},
		{"raw twice", "/v1/decode?vin=" + vpictest.VINHondaAccord + "&raw=1&raw=0", "BAD_REQUEST", "once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := wantError(t, en.do(t, request{target: tt.target}), http.StatusBadRequest, tt.code)
			if !strings.Contains(b.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", b.Message, tt.msg)
			}
		})
	}
	golden(t, "decode-400-invalid-vin", en.do(t, request{target: "/v1/decode?vin=1HGCM82633AO04352"}).Body.Bytes())
	if n := en.up.CallCount(); n != 0 {
		t.Errorf("upstream calls = %d after only bad requests, want 0", n)
	}
}

func TestDecode403(t *testing.T) {
	en := newEnv(t)
	for name, hdr := range map[string]map[string]string{
		"missing":      nil,
		"wrong":        {"X-Gateway-Proxy-Secret": "guess"},
		"prefix":       {"X-Gateway-Proxy-Secret": secret[:len(secret)-1]},
		"longer":       {"X-Gateway-Proxy-Secret": secret + "x"},
		"other header": {"X-Proxy-Secret": secret},
	} {
		t.Run(name, func(t *testing.T) {
			rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, noAuth: true, headers: hdr})
			wantError(t, rec, http.StatusForbidden, "FORBIDDEN")
		})
	}
	golden(t, "decode-403", en.do(t, request{target: "/v1/decode?vin=x", noAuth: true}).Body.Bytes())
	if n := en.up.CallCount(); n != 0 {
		t.Errorf("upstream calls = %d after forbidden requests, want 0", n)
	}
}

// TestPreviousProxySecret: while rotating, the previous secret is accepted
// too (PROXY_SECRET_PREVIOUS).
func TestPreviousProxySecret(t *testing.T) {
	en := newEnv(t)
	rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, noAuth: true,
		headers: map[string]string{"X-Gateway-Proxy-Secret": previousSecret}})
	if rec.Code != http.StatusOK {
		t.Errorf("previous secret: status %d, want 200", rec.Code)
	}
}

func TestDecode429(t *testing.T) {
	en := newEnv(t, withLimits("BASIC=3/1m,PRO=5/1m,default=2/1m"))
	plan := map[string]string{"X-Gateway-Subscription": "basic", "X-Gateway-User": "alice"}

	// Forbidden requests cost nothing.
	for range 5 {
		wantError(t, en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, noAuth: true, headers: plan}), http.StatusForbidden, "FORBIDDEN")
	}
	// A request that passes the secret costs a token even when invalid.
	rec := en.do(t, request{target: "/v1/decode?vin=bad", headers: plan})
	wantError(t, rec, http.StatusBadRequest, "INVALID_VIN")
	if rec.Header().Get("X-RateLimit-Limit") != "3" || rec.Header().Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("rate headers on a 400 = %q/%q, want 3/2", rec.Header().Get("X-RateLimit-Limit"), rec.Header().Get("X-RateLimit-Remaining"))
	}
	for i := range 2 {
		rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: plan})
		if rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Fatalf("request %d: status %d remaining %q", i, rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
		}
	}
	rec = en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: plan})
	wantError(t, rec, http.StatusTooManyRequests, "RATE_LIMITED")
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 20 {
		t.Errorf("Retry-After = %q, want 1..20 seconds", rec.Header().Get("Retry-After"))
	}
	if rec.Header().Get("X-RateLimit-Limit") != "3" || rec.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("rate headers on 429 = %q/%q", rec.Header().Get("X-RateLimit-Limit"), rec.Header().Get("X-RateLimit-Remaining"))
	}
	// Rate limit comes before validation: an invalid request is now 429.
	wantError(t, en.do(t, request{target: "/v1/decode?vin=bad", headers: plan}), http.StatusTooManyRequests, "RATE_LIMITED")
	// Another subscriber, and the same subscriber on another plan, are not limited.
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: map[string]string{"X-Gateway-Subscription": "basic", "X-Gateway-User": "bob"}}); rec.Code != http.StatusOK {
		t.Errorf("bob: status %d, want 200", rec.Code)
	}
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: map[string]string{"X-Gateway-Subscription": "PRO", "X-Gateway-User": "alice"}}); rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Limit") != "5" {
		t.Errorf("alice on PRO: status %d limit %q, want 200 with limit 5", rec.Code, rec.Header().Get("X-RateLimit-Limit"))
	}
	// Without X-Gateway-User the client address is the subscriber, on the default plan.
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord}); rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Limit") != "2" {
		t.Errorf("anonymous: status %d limit %q, want 200 on the default plan (2)", rec.Code, rec.Header().Get("X-RateLimit-Limit"))
	}
	// Tokens come back with time.
	en.clk.Advance(21 * 1e9)
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: plan}); rec.Code != http.StatusOK {
		t.Errorf("after 21s: status %d, want 200", rec.Code)
	}
}

func TestDecode500Upstream(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply vpictest.Reply
	}{
		{"status 500", vpictest.Reply{Status: 500, Body: "oops"}},
		{"status 404 html", vpictest.Reply{Status: 404, Body: "<html>not found</html>", ContentType: "text/html"}},
		{"xml", vpictest.Reply{Status: 200, Body: vpictest.XMLAnswer, ContentType: "application/xml"}},
		{"garbage", vpictest.Reply{Status: 200, Body: "\x00\x01garbage", ContentType: "application/json"}},
		{"truncated", vpictest.Reply{Status: 200, Body: `{"Count":1,"Results":[{"VIN":"1HG`, ContentType: "application/json"}},
		{"no results", vpictest.Reply{Status: 200, Body: `{"Count":0,"Message":"Results returned successfully","Results":[]}`}},
		{"execution error", vpictest.Reply{Status: 200, Body: `{"Count":0,"Message":"Execution Error","Results":[{"Message":"Timeout expired"}]}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t)
			en.up.Script(tt.reply)
			rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
			b := wantError(t, rec, http.StatusInternalServerError, "UPSTREAM_ERROR")
			if strings.Contains(b.Message, en.up.URL) || strings.Contains(b.Message, "127.0.0.1") {
				t.Errorf("message %q reveals the upstream address", b.Message)
			}
			if en.cached(t, vpictest.VINHondaAccord) {
				t.Fatal("a failed upstream call was cached")
			}
			// The next request goes upstream again and succeeds.
			if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord}); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Errorf("after the failure: status %d, X-Cache %q; want 200 MISS", rec.Code, rec.Header().Get("X-Cache"))
			}
		})
	}
}

func TestDecodeUpstreamRetried(t *testing.T) {
	en := newEnv(t, withRetries(2))
	en.up.Script(vpictest.Reply{Status: 503}, vpictest.Reply{Status: 502})
	rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200 after two retried failures; body %s", rec.Code, rec.Body)
	}
	if n := en.up.CallCount(); n != 3 {
		t.Errorf("upstream attempts = %d, want 3", n)
	}
}

func TestDecodeUpstreamTimeout(t *testing.T) {
	en := newEnv(t, withTimeout(100*1e6))
	en.up.Script(vpictest.Reply{Status: 200, Delay: 2 * 1e9, Body: "{}"})
	b := wantError(t, en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord}), http.StatusInternalServerError, "UPSTREAM_ERROR")
	if strings.Contains(b.Message, "127.0.0.1") {
		t.Errorf("message %q reveals the upstream address", b.Message)
	}
}

// panicDecoder panics, to test recovery.
type panicDecoder struct{ httpapi.Decoder }

func (panicDecoder) Decode(context.Context, string, bool) (vin.Outcome, error) { panic("kaboom") }

func TestDecodePanicIs500(t *testing.T) {
	en := newEnv(t)
	en2 := newEnv(t, withDecoder(panicDecoder{Decoder: en.dec}))
	b := wantError(t, en2.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord}), http.StatusInternalServerError, "INTERNAL_ERROR")
	if strings.Contains(b.Message, "kaboom") {
		t.Errorf("message %q leaks the panic", b.Message)
	}
	if logs := en2.logs.String(); !strings.Contains(logs, "panic recovered") || !strings.Contains(logs, "kaboom") {
		t.Errorf("panic not logged: %s", logs)
	}
}

// TestDecodeCleansVPICText (decisions.md, "Both services: ... identities
// that cannot pose as others"): values vPIC answers with NUL, control
// characters or invalid UTF-8 are answered, cached and answered again from
// the cache clean, the raw record (raw=true) included.
func TestDecodeCleansVPICText(t *testing.T) {
	en := newEnv(t)
	rec := vpictest.Record(vpictest.VINFordF150)
	rec["Make"] = "FO\x00RD"
	rec["Model"] = "F-150\r\n\x1b[2J"
	rec["PlantCity"] = "DEAR\xffBORN"
	en.up.SetRecord(vpictest.VINFordF150, rec)
	for _, cache := range []string{"MISS", "HIT"} {
		res := en.do(t, request{target: "/v1/decode?raw=true&vin=" + vpictest.VINFordF150})
		if res.Code != http.StatusOK || res.Header().Get("X-Cache") != cache {
			t.Fatalf("decode = %d, X-Cache %q; want 200 %s", res.Code, res.Header().Get("X-Cache"), cache)
		}
		var body struct {
			Make, Model string
			PlantCity   string         `json:"plant_city"`
			Raw         map[string]any `json:"raw"`
		}
		decode(t, res, &body)
		if body.Make != "FORD" || body.Model != "F-150  [2J" || body.PlantCity != "DEAR\ufffdBORN" {
			t.Errorf("%s: make %q, model %q, plant city %q; want them clean", cache, body.Make, body.Model, body.PlantCity)
		}
		if body.Raw["Make"] != "FORD" || strings.ContainsAny(body.Raw["Model"].(string), "\x00\r\n\x1b") {
			t.Errorf("%s: raw Make %q, Model %q; want them clean", cache, body.Raw["Make"], body.Raw["Model"])
		}
		if bytes.ContainsAny(res.Body.Bytes(), "\x00") || bytes.Contains(res.Body.Bytes(), []byte(`\u0000`)) || bytes.Contains(res.Body.Bytes(), []byte(`\u001b`)) {
			t.Errorf("%s: the answer holds a control character: %s", cache, res.Body)
		}
	}
}
