package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
)

// trackedWorld is a running service tracking a company whose search
// answer the test changes run after run (decisions.md, "patentsvc: what
// changed, and what the portfolio covers").
type trackedWorld struct {
	t      *testing.T
	w      *analysistest.World
	base   string
	access string
	logs   fmt.Stringer
	mu     sync.Mutex
	events []map[string]any
}

// publication is a search result the test puts in the answer.
type publication struct{ id, title, date string }

// answer makes the fake search answer pubs, in that order, for company.
func (tw *trackedWorld) answer(company string, pubs ...publication) {
	results := make([]map[string]any, len(pubs))
	for i, p := range pubs {
		link := tw.w.PDFs.Add(p.id, analysistest.TextPDFs[i%len(analysistest.TextPDFs)])
		r := serpapitest.Organic(p.id, p.title, p.date, link)
		r["assignee"] = company
		results[i] = r
	}
	tw.w.Serp.SetResults(company, len(pubs), results)
}

func (tw *trackedWorld) get(path string, v any) int {
	tw.t.Helper()
	req, _ := http.NewRequest("GET", tw.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+tw.access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tw.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			tw.t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return resp.StatusCode
}

type historyPoint struct {
	RunAt          time.Time `json:"run_at"`
	PatentCount    *int      `json:"patent_count"`
	Alert          bool      `json:"alert"`
	NewPatents     []string  `json:"new_patents"`
	DroppedPatents []string  `json:"dropped_patents"`
}

func (tw *trackedWorld) history(company string) []historyPoint {
	var h struct {
		Points []historyPoint `json:"points"`
	}
	if code := tw.get("/admin/tracked/"+url.PathEscape(company)+"/history", &h); code != http.StatusOK {
		tw.t.Fatalf("history = %d", code)
	}
	return h.Points
}

type alertJSON struct {
	AlertType string  `json:"alert_type"`
	Message   string  `json:"message"`
	OldValue  float64 `json:"old_value"`
	NewValue  float64 `json:"new_value"`
	Patents   []struct {
		PatentID        string `json:"patent_id"`
		Title           string `json:"title"`
		PublicationDate string `json:"publication_date"`
		PDFLink         string `json:"pdf_link"`
	} `json:"patents"`
}

func (tw *trackedWorld) alerts() []alertJSON {
	var out []alertJSON
	if code := tw.get("/admin/alerts?limit=100", &out); code != http.StatusOK {
		tw.t.Fatalf("alerts = %d", code)
	}
	return out
}

// waitRuns waits until a run that searched after the answer was changed
// (when the fake had answered searches) is recorded: two more searches,
// and points more than before (the company's points then). One run may
// have been in flight when the answer changed; the other searched after.
func (tw *trackedWorld) waitRuns(company string, searches, before int) []historyPoint {
	tw.t.Helper()
	var calls int
	var pts []historyPoint
	if !wait.Until(60*time.Second, func() bool {
		calls, pts = tw.w.Serp.CallCount(), tw.history(company)
		return calls >= searches+2 && len(pts) >= before+2
	}) {
		tw.t.Fatalf("two runs did not happen within 60s (%d searches, %d points)\n%s", calls-searches, len(pts)-before, tw.logs)
	}
	return pts
}

// changed are the points that found new or dropped patents.
func changed(pts []historyPoint) []historyPoint {
	var out []historyPoint
	for _, p := range pts {
		if len(p.NewPatents) > 0 || len(p.DroppedPatents) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// TestRunTrackingNewPatents tracks a company through the running service
// while the fake search answers a different set of patents run after run:
// the first run is the baseline (no alert, no change); a run with 3 new
// patents raises one new_patents alert listing exactly those 3, and an
// alert.new_patents webhook; a reordered but identical set raises nothing;
// a set that only drops raises no alert and its history point names the
// dropped ids; GET /admin/changes lists both changed runs, newest first,
// a page at a time. On SQLite and PostgreSQL.
func TestRunTrackingNewPatents(t *testing.T) {
	for _, dialect := range []string{store.SQLite, store.Postgres} {
		t.Run(dialect, func(t *testing.T) { testTrackingNewPatents(t, dialect) })
	}
}

func testTrackingNewPatents(t *testing.T, dialect string) {
	dsn := storetest.DSN(t, dialect)
	w := analysistest.NewWorld(t, storetest.Open(t, store.SQLite, time.Now))
	tw := &trackedWorld{t: t, w: w}
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e map[string]any
		json.Unmarshal(body, &e)
		tw.mu.Lock()
		tw.events = append(tw.events, e)
		tw.mu.Unlock()
	}))
	defer receiver.Close()

	const company = "Oticon"
	a := publication{"US11363389B2", "Hearing device comprising a beamformer filtering unit", "2026-06-14"}
	b := publication{"US11140496B2", "Hearing aid with a microphone system", "2026-05-05"}
	c := publication{"EP4002885A1", "Method of fitting a hearing aid", "2026-04-01"}
	n1 := publication{"US11950082B2", "Binaural hearing system", "2026-11-02"}
	n2 := publication{"WO2026112233A1", "Own-voice detection", "2026-10-20"}
	n3 := publication{"CN118555666A", "Feedback cancellation", "2026-10-01"}
	tw.answer(company, a, b, c)

	dir := t.TempDir()
	base, stop, logs := start(t, map[string]string{
		"DATABASE_URL": dsn, "BCRYPT_COST": "4",
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.LLM.BaseURL(),
		"PDF_ALLOWED_HOSTS": "127.0.0.1", "STORAGE_DIR": filepath.Join(dir, "patents"),
		"SCHEDULE_INTERVAL_HOURS": "0.0003", "SCHEDULE_RETRY_BASE": "1s", "CHANGE_THRESHOLD_PERCENT": "1000",
		"WEBHOOK_URLS": receiver.URL + "/hooks",
	})
	tw.base, tw.logs = base, logs
	creds := map[string]string{"email": "ada@example.com", "password": "correct horse battery"}
	call(t, "POST", base+"/auth/register", "", creds)
	_, tok := call(t, "POST", base+"/auth/login", "", creds)
	tw.access = tok["access_token"].(string)
	if code, body := call(t, "POST", base+"/admin/tracked", tw.access, map[string]string{"company_name": company}); code != 201 {
		t.Fatalf("track = %d %v", code, body)
	}

	// 1. The baseline: no change, no alert.
	pts := tw.waitRuns(company, -1, -1)
	if len(changed(pts)) != 0 || pts[0].Alert || len(tw.alerts()) != 0 {
		t.Fatalf("the baseline run found changes or alerted: %+v, alerts %+v", pts, tw.alerts())
	}
	if pts[0].NewPatents == nil || pts[0].DroppedPatents == nil {
		t.Errorf("a point's lists must be [] when empty: %+v", pts[0])
	}

	// 2. Three new patents among the old ones.
	calls := w.Serp.CallCount()
	tw.answer(company, n1, a, n2, b, c, n3)
	if !wait.Until(60*time.Second, func() bool { return len(changed(tw.history(company))) > 0 }) {
		t.Fatalf("no run found the new patents within 60s (%d searches since)\n%s", w.Serp.CallCount()-calls, logs)
	}
	got := changed(tw.history(company))
	if want := []string{n1.id, n2.id, n3.id}; len(got) != 1 || !reflect.DeepEqual(got[0].NewPatents, want) || len(got[0].DroppedPatents) != 0 || !got[0].Alert {
		t.Fatalf("changed points = %+v, want one with new %v and an alert", got, want)
	}
	alerts := tw.alerts()
	if len(alerts) != 1 || alerts[0].AlertType != "new_patents" || alerts[0].NewValue != 3 || alerts[0].OldValue != 3 ||
		alerts[0].Message != "3 new patents for Oticon: US11950082B2, WO2026112233A1, CN118555666A" {
		t.Fatalf("alerts = %+v, want one new_patents alert for the 3", alerts)
	}
	var listed []string
	for _, p := range alerts[0].Patents {
		listed = append(listed, p.PatentID)
		if p.Title == "" || p.PublicationDate == "" || p.PDFLink == "" {
			t.Errorf("the alert's patent %+v lacks its details", p)
		}
	}
	if !reflect.DeepEqual(listed, []string{n1.id, n2.id, n3.id}) {
		t.Errorf("the alert lists %v", listed)
	}
	var ev map[string]any
	if !wait.Until(30*time.Second, func() bool {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		for _, e := range tw.events {
			if e["event"] == "alert.new_patents" {
				ev = e
			}
		}
		return ev != nil
	}) {
		t.Fatalf("no alert.new_patents webhook within 30s\n%s", logs)
	}
	if data := ev["data"].(map[string]any); data["alert_type"] != "new_patents" || len(data["patents"].([]any)) != 3 {
		t.Errorf("webhook = %v", ev)
	}

	// 3. The same set, reordered: nothing.
	calls = w.Serp.CallCount()
	before := len(tw.history(company))
	tw.answer(company, c, b, n3, a, n2, n1)
	pts = tw.waitRuns(company, calls, before)
	if got := changed(pts); len(got) != 1 || len(tw.alerts()) != 1 {
		t.Fatalf("a reordered set changed something: changed %+v, alerts %+v", got, tw.alerts())
	}

	// 4. A set that only drops: no alert, the dropped ids in the history.
	tw.answer(company, a, n1)
	if !wait.Until(60*time.Second, func() bool { return len(changed(tw.history(company))) >= 2 }) {
		t.Fatalf("no run found the dropped patents within 60s\n%s", logs)
	}
	got = changed(tw.history(company))
	wantDropped := []string{b.id, c.id, n2.id, n3.id}
	slices.Sort(wantDropped)
	if len(got) != 2 || len(got[1].NewPatents) != 0 || !reflect.DeepEqual(got[1].DroppedPatents, wantDropped) || got[1].Alert {
		t.Fatalf("the dropping run = %+v, want dropped %v and no alert", got[1:], wantDropped)
	}
	if n := len(tw.alerts()); n != 1 {
		t.Errorf("%d alerts after a run that only dropped, want still 1", n)
	}

	// 5. The digest: both changed runs, newest first, a page at a time.
	type changeItem struct {
		CompanyName string    `json:"company_name"`
		RunAt       time.Time `json:"run_at"`
		NewPatents  []struct {
			PatentID string `json:"patent_id"`
			Title    string `json:"title"`
		} `json:"new_patents"`
		DroppedPatents []string `json:"dropped_patents"`
	}
	type changePage struct {
		Items      []changeItem `json:"items"`
		NextCursor *string      `json:"next_cursor"`
	}
	var page changePage
	if code := tw.get("/admin/changes", &page); code != http.StatusOK || len(page.Items) != 2 || page.NextCursor != nil {
		t.Fatalf("changes = %d %+v", code, page)
	}
	newest, oldest := page.Items[0], page.Items[1]
	if newest.CompanyName != company || !reflect.DeepEqual(newest.DroppedPatents, wantDropped) || len(newest.NewPatents) != 0 ||
		len(oldest.NewPatents) != 3 || oldest.NewPatents[0].PatentID != n1.id || oldest.NewPatents[0].Title != n1.title ||
		!oldest.RunAt.Before(newest.RunAt) {
		t.Errorf("changes = %+v", page.Items)
	}
	var first, second changePage
	tw.get("/admin/changes?limit=1", &first)
	if len(first.Items) != 1 || first.NextCursor == nil || !first.Items[0].RunAt.Equal(newest.RunAt) {
		t.Fatalf("first page = %+v", first)
	}
	tw.get("/admin/changes?limit=1&cursor="+url.QueryEscape(*first.NextCursor), &second)
	if len(second.Items) != 1 || !second.Items[0].RunAt.Equal(oldest.RunAt) {
		t.Errorf("second page = %+v", second)
	}
	var none changePage
	since := newest.RunAt.Add(time.Second).Format(time.RFC3339)
	if code := tw.get("/admin/changes?since="+url.QueryEscape(since), &none); code != http.StatusOK || len(none.Items) != 0 {
		t.Errorf("changes since after the last = %d %+v", code, none)
	}
	if code := tw.get("/admin/changes?since=last+week", nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a malformed since = %d, want 422", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("run = %v", err)
	}
}
