package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

type batchBody struct {
	Results     []map[string]any `json:"results"`
	Count       int              `json:"count"`
	CachedCount int              `json:"cached_count"`
	ErrorCount  int              `json:"error_count"`
}

func batchOf(vins ...string) string {
	b, _ := json.Marshal(map[string]any{"vins": vins})
	return string(b)
}

func TestBatch200Mixed(t *testing.T) {
	en := newEnv(t)
	// Warm the cache with one VIN.
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINFordF150}); rec.Code != http.StatusOK {
		t.Fatal(rec.Body)
	}
	before := en.up.CallCount()
	body := batchOf(
		vpictest.VINHondaAccord,   // miss
		vpictest.VINFordF150,      // hit
		"1HGCM82633AO04352",       // invalid: letter O
		" 1hgcm82633a004352 ",     // duplicate of the first, after normalising
		vpictest.VINBMWCheckDigit, // miss, decodes with error_code 1 (an answer, not an error)
		"",                        // invalid: empty
	)
	rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: body})
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("X-Data-Source") != "NHTSA vPIC" {
		t.Errorf("X-Data-Source = %q", rec.Header().Get("X-Data-Source"))
	}
	golden(t, "batch-200-mixed", rec.Body.Bytes())

	var got batchBody
	decode(t, rec, &got)
	if got.Count != 6 || got.CachedCount != 1 || got.ErrorCount != 2 {
		t.Errorf("count/cached/error = %d/%d/%d, want 6/1/2", got.Count, got.CachedCount, got.ErrorCount)
	}
	calls := en.up.Calls()[before:]
	if len(calls) != 1 {
		t.Fatalf("upstream calls = %d, want one batch call", len(calls))
	}
	c := calls[0]
	if c.Method != http.MethodPost || !strings.HasSuffix(c.Path, "/DecodeVINValuesBatch/") || c.RawQuery != "" ||
		c.Form.Get("format") != "json" || c.Form.Get("DATA") != vpictest.VINHondaAccord+";"+vpictest.VINBMWCheckDigit {
		t.Errorf("upstream call = %+v, want POST DecodeVINValuesBatch/ with DATA of the two misses and format=json in the body", c)
	}
	// A second identical batch is all cache hits.
	rec = en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: body})
	decode(t, rec, &got)
	if got.CachedCount != 4 || en.up.CallCount() != before+1 {
		t.Errorf("second batch cached_count = %d, upstream calls %d; want 4 and no new call", got.CachedCount, en.up.CallCount()-before-1)
	}
}

func TestBatch50UncachedOneCall(t *testing.T) {
	en := newEnv(t)
	vins := make([]string, 50)
	for i := range vins {
		vins[i] = fmt.Sprintf("1HGCM8263%08d", i)
	}
	rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vins...)})
	var got batchBody
	decode(t, rec, &got)
	if rec.Code != http.StatusOK || got.Count != 50 || got.ErrorCount != 0 || got.CachedCount != 0 {
		t.Fatalf("status %d, counts %d/%d/%d", rec.Code, got.Count, got.CachedCount, got.ErrorCount)
	}
	for i, r := range got.Results {
		if r["vin"] != vins[i] || r["error_code"] != "8" {
			t.Fatalf("result %d = %v, want the no-data answer for %s in input order", i, r, vins[i])
		}
	}
	if n := en.up.CallCount(); n != 1 {
		t.Errorf("upstream calls = %d for 50 uncached VINs, want 1", n)
	}
}

func TestBatchRaw(t *testing.T) {
	en := newEnv(t)
	rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch?raw=true", body: batchOf(vpictest.VINVWTiguan)})
	var got batchBody
	decode(t, rec, &got)
	raw, ok := got.Results[0]["raw"].(map[string]any)
	if !ok || len(raw) != 154 {
		t.Fatalf("raw = %d keys, want the 154-key record", len(raw))
	}
	rec = en.do(t, request{method: http.MethodPost, target: "/v1/batch?raw=maybe", body: batchOf(vpictest.VINVWTiguan)})
	wantError(t, rec, http.StatusBadRequest, "BAD_REQUEST")
}

func TestBatchUpstreamFailure(t *testing.T) {
	en := newEnv(t)
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINFordF150}); rec.Code != http.StatusOK {
		t.Fatal(rec.Body)
	}
	en.up.Script(vpictest.Reply{Status: 503, Body: "maintenance"})
	rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vpictest.VINFordF150, vpictest.VINHondaAccord, vpictest.VINVWTiguan)})
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200 with per-VIN errors; body %s", rec.Code, rec.Body)
	}
	golden(t, "batch-200-upstream-failure", rec.Body.Bytes())
	var got batchBody
	decode(t, rec, &got)
	if got.ErrorCount != 2 || got.CachedCount != 1 || got.Results[1]["error"] != "UPSTREAM_ERROR" {
		t.Errorf("counts %d/%d, results %v", got.ErrorCount, got.CachedCount, got.Results)
	}
	if en.cached(t, vpictest.VINHondaAccord) {
		t.Error("a VIN whose upstream call failed was cached")
	}
}

func TestBatch400(t *testing.T) {
	en := newEnv(t)
	fifty1 := make([]string, 51)
	for i := range fifty1 {
		fifty1[i] = vpictest.VINHondaAccord
	}
	for _, tt := range []struct {
		name, body, msg string
	}{
		{"empty body", "", "required"},
		{"not json", "vins=1HGCM82633A004352", "not valid JSON"},
		{"truncated", `{"vins": ["1HGCM82633A004352"`, "not valid JSON"},
		{"trailing garbage", `{"vins": ["1HGCM82633A004352"]} x`, "not valid JSON"},
		{"array", `["1HGCM82633A004352"]`, "must be a JSON object"},
		{"string", `"1HGCM82633A004352"`, "must be a JSON object"},
		{"null", `null`, "\"vins\""},
		{"missing vins", `{"vin": ["1HGCM82633A004352"]}`, "\"vins\""},
		{"vins null", `{"vins": null}`, "\"vins\""},
		{"vins string", `{"vins": "1HGCM82633A004352"}`, "array"},
		{"vins object", `{"vins": {"a": 1}}`, "array"},
		{"empty array", `{"vins": []}`, "1 to 50 VINs, got 0"},
		{"51 items", batchOf(fifty1...), "1 to 50 VINs, got 51"},
		{"null item", `{"vins": ["1HGCM82633A004352", null]}`, `"vins"[1] must be a string, got null`},
		{"number item", `{"vins": [1234]}`, "got a number"},
		{"object item", `{"vins": [{"vin": "1HGCM82633A004352"}]}`, "got an object"},
		{"array item", `{"vins": [["1HGCM82633A004352"]]}`, "got an array"},
		{"bool item", `{"vins": [true]}`, "got a boolean"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: tt.body})
			b := wantError(t, rec, http.StatusBadRequest, "BAD_REQUEST")
			if !strings.Contains(b.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", b.Message, tt.msg)
			}
		})
	}
	golden(t, "batch-400", en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: `{"vins": []}`}).Body.Bytes())
	if n := en.up.CallCount(); n != 0 {
		t.Errorf("upstream calls = %d after bad requests, want 0", n)
	}
}

func TestBatch403And429(t *testing.T) {
	en := newEnv(t, withLimits("default=5/1m"))
	user := map[string]string{"X-Gateway-User": "u1"}
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vpictest.VINHondaAccord), noAuth: true, headers: user}), http.StatusForbidden, "FORBIDDEN")

	// A batch costs one token per VIN.
	rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vpictest.VINHondaAccord, vpictest.VINFordF150, vpictest.VINVWTiguan), headers: user})
	if rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("3-VIN batch: status %d remaining %q, want 200 and 2", rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
	}
	rec = en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vpictest.VINHondaAccord, vpictest.VINFordF150, vpictest.VINVWTiguan), headers: user})
	wantError(t, rec, http.StatusTooManyRequests, "RATE_LIMITED")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Refused requests spend nothing: two single VINs still fit.
	for i := range 2 {
		if rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: batchOf(vpictest.VINHondaAccord), headers: user}); rec.Code != http.StatusOK {
			t.Fatalf("single-VIN batch %d: status %d", i, rec.Code)
		}
	}
	// An invalid body costs one token and, once empty, is a 429, not a 400.
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: `nope`, headers: user}), http.StatusTooManyRequests, "RATE_LIMITED")
}

func TestBatch413(t *testing.T) {
	en := newEnv(t)
	// The limit is 64 KiB exactly: 65,536 bytes pass it (and fail as JSON),
	// 65,537 do not.
	pad := func(n int) string { return `{"vins": []}` + strings.Repeat(" ", n-len(`{"vins": []}`)) }
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: pad(64 << 10)}), http.StatusBadRequest, "BAD_REQUEST")
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: pad(64<<10 + 1)}), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	big := `{"vins": ["` + strings.Repeat("A", 70<<10) + `"]}`
	wantError(t, en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: big}), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Without Content-Length (chunked) the limit holds too.
	req := request{method: http.MethodPost, target: "/v1/batch", body: big}
	rec := en.doChunked(t, req)
	wantError(t, rec, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}
