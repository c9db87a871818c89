package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
)

// trackedState is a TrackedCompany as the wire shows it.
type trackedState struct {
	ID              int64      `json:"id"`
	CompanyName     string     `json:"company_name"`
	LastPatentCount int        `json:"last_patent_count"`
	LastAnalysisAt  *time.Time `json:"last_analysis_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

// wantConflictState checks a 409 of POST /admin/tracked: the error body
// with exactly detail and tracked, tracked a whole TrackedCompany. It
// returns tracked.
func wantConflictState(t testing.TB, rec *httptest.ResponseRecorder, detail string) trackedState {
	t.Helper()
	wantStatus(t, rec, http.StatusConflict)
	wantKeys(t, rec.Body.Bytes(), "detail", "tracked")
	var b struct {
		Detail  string          `json:"detail"`
		Tracked json.RawMessage `json:"tracked"`
	}
	decode(t, rec, &b)
	if b.Detail != detail {
		t.Errorf("detail = %q, want %q", b.Detail, detail)
	}
	wantKeys(t, b.Tracked, "id", "company_name", "last_patent_count", "last_analysis_at", "created_at")
	var s trackedState
	if err := json.Unmarshal(b.Tracked, &s); err != nil {
		t.Fatalf("tracked %s: %v", b.Tracked, err)
	}
	return s
}

// TestTrackAgainState: tracking a company tracked already (any letter
// case) is 409 with the company's current state, as GET /admin/tracked
// shows it: its last run included, not the request's name.
func TestTrackAgainState(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)
		rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"Acme Corp"}`, token: tok})
		wantStatus(t, rec, http.StatusCreated)
		var created trackedState
		decode(t, rec, &created)

		en.clk.Advance(10 * time.Minute) // within the token's life
		ranAt := en.clk.Now()
		if err := recordRun(t, en.st, created.ID, 12, ranAt, 0, ranAt.Add(24*time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		rec = en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"acme CORP"}`, token: tok})
		got := wantConflictState(t, rec, "Company acme CORP is already tracked")
		if got.ID != created.ID || got.CompanyName != "Acme Corp" || got.LastPatentCount != 12 ||
			got.LastAnalysisAt == nil || !got.LastAnalysisAt.Equal(ranAt) || !got.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("409 tracked = %+v, want Acme Corp's current state (count 12, analysed at %v)", got, ranAt)
		}
		var list []trackedState
		decode(t, en.do(t, request{target: "/admin/tracked", token: tok}), &list)
		if len(list) != 1 || list[0].ID != got.ID || list[0].LastPatentCount != got.LastPatentCount {
			t.Errorf("GET /admin/tracked = %+v, want the one company the 409 showed", list)
		}
	})
}

// TestTrackRunsAtOnce: POST /admin/tracked answers 201 at once, without
// waiting for the analysis, and the company's first run starts right
// away: its analysis is stored within seconds although no tick queues due
// companies (the run was queued with the company).
func TestTrackRunsAtOnce(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect), withScheduler())
		_, tok := en.admin(t)
		en.world.Company("Acme Corp", 1) // total_results 4
		en.world.Serp.SetLatency(2 * time.Second)

		start := time.Now()
		rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"Acme Corp"}`, token: tok})
		wantStatus(t, rec, http.StatusCreated)
		if took := time.Since(start); took > time.Second {
			t.Errorf("POST /admin/tracked took %v: it waited for the analysis (search latency 2 s)", took)
		}
		var created trackedState
		decode(t, rec, &created)
		if created.LastAnalysisAt != nil {
			t.Errorf("201 body = %+v, want last_analysis_at null", created)
		}

		// The run logs this once it has recorded the analysis.
		waitLogged(t, en, 15*time.Second, `"msg":"scheduled analysis done"`, `"company":"Acme Corp"`)
		var list []trackedState
		decode(t, en.do(t, request{target: "/admin/tracked", token: tok}), &list)
		if len(list) != 1 || list[0].LastAnalysisAt == nil || list[0].LastPatentCount != 4 {
			t.Errorf("after the first run: %+v, want one company, analysed, last_patent_count 4", list)
		}
		recs := analysistest.Analyses(t, en.st)
		if len(recs) != 1 || recs[0].CompanyName != "Acme Corp" || recs[0].RequestedBy != "" {
			t.Errorf("stored analyses = %+v, want one scheduled analysis of Acme Corp", recs)
		}
	})
}
