package httpapi_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// suggestBody is GET /v1/suggest's 200 body.
type suggestBody struct {
	VIN         string `json:"vin"`
	Valid       *bool  `json:"valid"`
	Suggestions []struct {
		VIN       string `json:"vin"`
		Edit      string `json:"edit"`
		Positions []int  `json:"positions"`
		Make      string `json:"make"`
		Model     string `json:"model"`
		ModelYear string `json:"model_year"`
	} `json:"suggestions"`
}

// TestSuggest: a VIN typed with I for 1 gets the real one, decoded by the
// snapshot, as its one suggestion; a valid VIN is valid with an empty
// list; the snapshot is asked, never vPIC.
func TestSuggest(t *testing.T) {
	en := newEnv(t, withSnapshot(stubSnapshot{}, vin.SnapshotFallback))
	rec := en.do(t, request{target: "/v1/suggest?vin=ihgcm82633a004352"})
	if rec.Code != http.StatusOK {
		t.Fatalf("suggest = %d %s", rec.Code, rec.Body)
	}
	var got suggestBody
	decode(t, rec, &got)
	if got.VIN != "IHGCM82633A004352" || got.Valid == nil || *got.Valid || len(got.Suggestions) != 1 {
		t.Fatalf("suggest = %s", rec.Body)
	}
	s := got.Suggestions[0]
	if s.VIN != vpictest.VINHondaAccord || s.Edit != "substitution" || !reflect.DeepEqual(s.Positions, []int{1}) ||
		s.Make != "HONDA" || s.Model != "Accord" || s.ModelYear != "2003" {
		t.Errorf("suggestion = %+v", s)
	}
	golden(t, "suggest-200", rec.Body.Bytes())

	rec = en.do(t, request{target: "/v1/suggest?vin=" + vpictest.VINHondaAccord})
	got = suggestBody{}
	decode(t, rec, &got)
	if got.Valid == nil || !*got.Valid || got.Suggestions == nil || len(got.Suggestions) != 0 {
		t.Errorf("suggest of a valid VIN = %s, want valid and an empty list", rec.Body)
	}
	if n := en.up.CallCount(); n != 0 {
		t.Errorf("vPIC called %d times, want never", n)
	}
}

// TestSuggestBadInput: every malformed input is 400 BAD_REQUEST saying
// what is wrong, and costs a decode's token like any request past the
// secret; without a snapshot the answer is 503 SNAPSHOT_UNAVAILABLE.
func TestSuggestBadInput(t *testing.T) {
	en := newEnv(t, withSnapshot(stubSnapshot{}, vin.SnapshotFallback))
	for _, target := range []string{
		"/v1/suggest", "/v1/suggest?vin=", "/v1/suggest?vin=%20%20",
		"/v1/suggest?vin=1HGCM82633A0043",        // 15
		"/v1/suggest?vin=1HGCM82633A00435222",    // 19
		"/v1/suggest?vin=1HGCM82633A-04352",      // punctuation
		"/v1/suggest?vin=1HGCM82633A%C3%8404352", // a non-ASCII letter
		"/v1/suggest?vin=1HGCM82633A004352&vin=1HGCM82633A004352",
	} {
		rec := en.do(t, request{target: target})
		wantError(t, rec, http.StatusBadRequest, "BAD_REQUEST")
	}
	wantError(t, en.do(t, request{target: "/v1/suggest?vin=1HGCM82633A004352", noAuth: true}), http.StatusForbidden, "FORBIDDEN")

	off := newEnv(t)
	rec := off.do(t, request{target: "/v1/suggest?vin=1HGCM82633A004352"})
	wantError(t, rec, http.StatusServiceUnavailable, "SNAPSHOT_UNAVAILABLE")
}

// TestSuggestCountsAsADecode: a suggestion request takes one token of the
// plan's limit, as a decode does.
func TestSuggestCountsAsADecode(t *testing.T) {
	en := newEnv(t, withSnapshot(stubSnapshot{}, vin.SnapshotFallback), withLimits("BASIC=3/1m,default=2/1m"))
	plan := map[string]string{"X-Gateway-Subscription": "basic", "X-Gateway-User": "alice"}
	for i, want := range []string{"2", "1", "0"} {
		rec := en.do(t, request{target: "/v1/suggest?vin=IHGCM82633A004352", headers: plan})
		if rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != want {
			t.Fatalf("request %d: %d, remaining %q, want 200 and %s", i+1, rec.Code, rec.Header().Get("X-RateLimit-Remaining"), want)
		}
	}
	wantError(t, en.do(t, request{target: "/v1/suggest?vin=IHGCM82633A004352", headers: plan}), http.StatusTooManyRequests, "RATE_LIMITED")
}
