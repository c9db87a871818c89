package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

type companyBody struct {
	CompanyName string  `json:"company_name"`
	Analysis    *string `json:"analysis"`
	PatentCount int     `json:"patent_count"`
	Patents     []struct {
		PatentID string `json:"patent_id"`
	} `json:"patents"`
	Success bool    `json:"success"`
	Error   *string `json:"error"`
	Model   *string `json:"model"`
	Cached  bool    `json:"cached"`
}

type batchBody struct {
	Results []companyBody `json:"results"`
	Summary struct {
		Total, Successful, Failed, TotalPatents int
	} `json:"summary"`
	Model string `json:"model"`
}

type jobBody struct {
	JobID     string     `json:"job_id"`
	Status    string     `json:"status"`
	Total     int        `json:"total"`
	Completed int        `json:"completed"`
	Progress  float64    `json:"progress"`
	Result    *batchBody `json:"result"`
	Error     *string    `json:"error"`
	Model     string     `json:"model"`
}

func TestAnalyzeNotConfigured(t *testing.T) {
	en := newEnv(t, withAnalyzerMissing("SERPAPI_API_KEY", "LLM_API_KEY"))
	_, tok := en.admin(t)
	for _, r := range []request{
		{target: "/analyze/Acme%20Corp"},
		{target: "/analyze/patent/US11734097B1?company_name=Acme"},
		{method: http.MethodPost, target: "/analyze/batch", body: `{"companies":["Acme"]}`},
		{method: http.MethodPost, target: "/analyze/batch/async", body: `{"companies":["Acme"]}`},
	} {
		r.token = tok
		rec := en.do(t, r)
		wantStatus(t, rec, http.StatusServiceUnavailable)
		var b struct{ Detail string }
		decode(t, rec, &b)
		if b.Detail != "Analyzer not initialised: SERPAPI_API_KEY and LLM_API_KEY not set" {
			t.Errorf("%s: detail %q", r.target, b.Detail)
		}
	}
	// Stored data stays readable.
	wantStatus(t, en.do(t, request{target: "/analyze/batch", token: tok}), http.StatusOK)
	wantStatus(t, en.do(t, request{target: "/jobs", token: tok}), http.StatusOK)
}

func TestAnalyzeNeedsToken(t *testing.T) {
	en := newEnv(t)
	for _, r := range []request{
		{target: "/analyze/Acme"}, {target: "/analyze/batch"}, {target: "/jobs"}, {target: "/jobs/x"},
		{target: "/analyze/patent/US1?company_name=Acme"}, {method: http.MethodPost, target: "/analyze/batch", body: "{}"},
		{method: http.MethodPost, target: "/analyze/batch/async", body: "{}"},
	} {
		rec := en.do(t, r)
		wantStatus(t, rec, http.StatusUnauthorized)
	}
}

func TestAnalyzeCompany(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	pns := en.world.Company("Acme Corp", 2)
	en.world.Serp.SetCPC(pns[0], "H04R", "G10L")
	en.world.Serp.SetCPC(pns[1], "H04R")

	rec := en.do(t, request{target: "/analyze/Acme%20Corp?model=anthropic/claude-sonnet-4.5", token: tok})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "company_name", "analysis", "patent_count", "patents", "success", "error", "model", "cached", "timestamp", "portfolio")
	// The search answer's facts (decisions.md, "patentsvc: what changed,
	// and what the portfolio covers"): its summary.cpc, the results' years,
	// countries and grants.
	if !strings.Contains(rec.Body.String(), `"portfolio":{"cpc":[{"code":"H04R","share":1},{"code":"G10L","share":0.5}],"by_year":[{"year":`) ||
		!strings.Contains(rec.Body.String(), `"countries":[{"country":"US","active":2,"inactive":0}],"granted":2,"applications":0}`) {
		t.Errorf("portfolio: %s", rec.Body)
	}
	var b companyBody
	decode(t, rec, &b)
	if !b.Success || b.Error != nil || b.Analysis == nil || b.PatentCount != 2 || b.Patents[0].PatentID != pns[0] ||
		*b.Model != "anthropic/claude-sonnet-4.5" || b.Cached || b.CompanyName != "Acme Corp" {
		t.Errorf("body = %s", rec.Body)
	}
	if got := en.world.LLM.Calls()[0].Request.Model; got != "anthropic/claude-sonnet-4.5" {
		t.Errorf("model sent = %s", got)
	}

	// Unknown model: 400 listing the supported ids.
	rec = en.do(t, request{target: "/analyze/Acme%20Corp?model=openai/gpt-5", token: tok})
	wantStatus(t, rec, http.StatusBadRequest)
	for _, id := range []string{"openai/gpt-4o-mini", "mistralai/mistral-nemo", "google/gemini-2.5-flash"} {
		if !strings.Contains(rec.Body.String(), id) {
			t.Errorf("400 detail does not list %s: %s", id, rec.Body)
		}
	}
	// Bad name: 422.
	wantStatus(t, en.do(t, request{target: "/analyze/-Acme", token: tok}), http.StatusUnprocessableEntity)
	// No patents: in-band.
	rec = en.do(t, request{target: "/analyze/Nobody", token: tok})
	wantStatus(t, rec, http.StatusOK)
	decode(t, rec, &b)
	if b.Success || b.Error == nil || *b.Error != "no recent patents with a PDF found" || b.PatentCount != 0 || b.Analysis != nil {
		t.Errorf("no-patents body = %s", rec.Body)
	}
	// Upstream failure: in-band, not a 500.
	en.world.LLM.Script(llmtest.Reply{Status: 401}, llmtest.Reply{Status: 401})
	rec = en.do(t, request{target: "/analyze/Acme%20Corp?model=google/gemini-2.5-flash", token: tok})
	wantStatus(t, rec, http.StatusOK)
	decode(t, rec, &b)
	if b.Success || b.Error == nil {
		t.Errorf("llm failure body = %s", rec.Body)
	}
}

func TestBatch(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	en.world.Company("Acme Corp", 1)
	en.world.Company("Beta Labs", 2)

	rec := en.do(t, request{method: http.MethodPost, target: "/analyze/batch", token: tok,
		body: `{"companies":["Acme Corp","Nobody Inc","Beta Labs"],"max_workers":2}`})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "timestamp", "results", "summary", "model")
	var b batchBody
	decode(t, rec, &b)
	if len(b.Results) != 3 || b.Results[1].Success || !b.Results[2].Success || b.Model != "openai/gpt-4o-mini" {
		t.Errorf("batch = %s", rec.Body)
	}
	var raw map[string]map[string]any
	json.Unmarshal(rec.Body.Bytes(), &raw)
	for _, k := range []string{"total", "successful", "failed", "total_patents", "duration_seconds"} {
		if _, ok := raw["summary"][k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	if raw["summary"]["total"] != 3.0 || raw["summary"]["successful"] != 2.0 || raw["summary"]["failed"] != 1.0 || raw["summary"]["total_patents"] != 3.0 {
		t.Errorf("summary = %v", raw["summary"])
	}

	twentyOne := make([]string, 21)
	for i := range twentyOne {
		twentyOne[i] = fmt.Sprintf("Company %d", i)
	}
	tooMany, _ := json.Marshal(map[string]any{"companies": twentyOne})
	for _, tt := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"companies":[]}`, 422, "companies"},
		{`{}`, 422, "companies"},
		{string(tooMany), 422, "companies"},
		{`{"companies":["Acme","-bad"]}`, 422, "companies[1]"},
		{`{"companies":["Acme",7]}`, 422, "companies[1]"},
		{`{"companies":["Acme"],"max_workers":0}`, 422, "max_workers"},
		{`{"companies":["Acme"],"max_workers":6}`, 422, "max_workers"},
		{`{"companies":"Acme"}`, 422, "companies"},
		{`{"companies":["Acme"],"model":"nope/nope"}`, 400, ""},
		{`{"companies":`, 400, ""},
	} {
		rec := en.do(t, request{method: http.MethodPost, target: "/analyze/batch", token: tok, body: tt.body})
		wantStatus(t, rec, tt.status)
		if tt.field != "" && !strings.Contains(rec.Body.String(), `"field":"`+tt.field+`"`) {
			t.Errorf("%s: body %s lacks field %s", tt.body, rec.Body, tt.field)
		}
	}
}

func TestAsyncJob(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	en.world.Company("Acme Corp", 1)

	rec := en.do(t, request{method: http.MethodPost, target: "/analyze/batch/async", token: tok,
		body: `{"companies":["Acme Corp","Nobody Inc"],"model":"mistralai/mistral-nemo"}`})
	wantStatus(t, rec, http.StatusAccepted)
	wantKeys(t, rec.Body.Bytes(), "job_id", "status", "total", "completed", "progress", "result", "error", "model", "created_at", "updated_at")
	var j jobBody
	decode(t, rec, &j)
	if j.Status != "pending" || j.Total != 2 || j.Completed != 0 || j.Progress != 0 || j.Result != nil || j.Model != "mistralai/mistral-nemo" {
		t.Errorf("accepted job = %s", rec.Body)
	}
	rec = waitForJob(t, en, tok, j.JobID, "completed")
	decode(t, rec, &j)
	if j.Progress != 1 || j.Completed != 2 || j.Result == nil || len(j.Result.Results) != 2 || j.Result.Summary.Successful != 1 {
		t.Errorf("completed job = %s", rec.Body)
	}
	rec = en.do(t, request{target: "/jobs/no-such-job", token: tok})
	wantStatus(t, rec, http.StatusNotFound)

	// Listing: newest first, status filter, limits.
	for range 2 {
		wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/analyze/batch/async", token: tok, body: `{"companies":["Nobody Inc"]}`}), http.StatusAccepted)
	}
	var page struct {
		Items      []jobBody `json:"items"`
		NextCursor *string   `json:"next_cursor"`
	}
	rec = en.do(t, request{target: "/jobs?limit=2", token: tok})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "items", "next_cursor")
	decode(t, rec, &page)
	if len(page.Items) != 2 || page.NextCursor == nil {
		t.Fatalf("first page = %s", rec.Body)
	}
	rec = en.do(t, request{target: "/jobs?limit=2&cursor=" + *page.NextCursor, token: tok})
	decode(t, rec, &page)
	if len(page.Items) != 1 || page.NextCursor != nil || page.Items[0].JobID != j.JobID {
		t.Errorf("last page = %s", rec.Body)
	}
	for _, q := range []string{"status=done", "limit=0", "limit=201", "limit=x"} {
		wantStatus(t, en.do(t, request{target: "/jobs?" + q, token: tok}), http.StatusUnprocessableEntity)
	}
	rec = en.do(t, request{target: "/jobs?status=completed", token: tok})
	decode(t, rec, &page)
	for _, it := range page.Items {
		if it.Status != "completed" {
			t.Errorf("status filter let through %s", it.Status)
		}
	}
}

func TestListAnalyses(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	en.world.Company("Acme Corp", 1)
	en.world.Company("Beta Labs", 1)
	for _, target := range []string{"/analyze/Acme%20Corp", "/analyze/Beta%20Labs", "/analyze/Acme%20Corp?model=google/gemini-2.5-flash", "/analyze/Acme%20Corp"} {
		wantStatus(t, en.do(t, request{target: target, token: tok}), http.StatusOK) // the last is a cache hit
	}
	type page struct {
		Items []struct {
			ID           int64  `json:"id"`
			CompanyName  string `json:"company_name"`
			AnalysisType string `json:"analysis_type"`
			Model        string `json:"model"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	var p page
	rec := en.do(t, request{target: "/analyze/batch?limit=2", token: tok})
	wantStatus(t, rec, http.StatusOK)
	decode(t, rec, &p)
	if len(p.Items) != 2 || p.NextCursor == nil || p.Items[0].Model != "google/gemini-2.5-flash" || p.Items[0].AnalysisType != "portfolio" {
		t.Fatalf("first page = %s", rec.Body)
	}
	rec = en.do(t, request{target: "/analyze/batch?limit=2&cursor=" + *p.NextCursor, token: tok})
	decode(t, rec, &p)
	if len(p.Items) != 1 || p.NextCursor != nil || p.Items[0].CompanyName != "Acme Corp" {
		t.Errorf("last page = %s (3 non-cached analyses in all)", rec.Body)
	}
	rec = en.do(t, request{target: "/analyze/batch?company_name=beta%20LABS", token: tok})
	decode(t, rec, &p)
	if len(p.Items) != 1 || p.Items[0].CompanyName != "Beta Labs" {
		t.Errorf("company filter = %s", rec.Body)
	}
	rec = en.do(t, request{target: "/analyze/batch?cursor=garbage!", token: tok})
	decode(t, rec, &p)
	if len(p.Items) != 3 {
		t.Errorf("malformed cursor did not start from the beginning: %s", rec.Body)
	}
	wantStatus(t, en.do(t, request{target: "/analyze/batch?limit=201", token: tok}), http.StatusUnprocessableEntity)
}

// TestAnalyzePDFEngineMissing: on a server without the PDF engine a
// company is analysed from its patents' snippets, each entry saying why,
// and one patent's analysis is 503 (the server's fault, not the
// document's), with no verdict stored.
func TestAnalyzePDFEngineMissing(t *testing.T) {
	en := newEnv(t, withExtract(func(analysis.Extractor) analysis.Extractor {
		return func(context.Context, io.ReaderAt, int64) (patent.Sections, error) {
			return patent.Sections{}, patent.NewKindError(patent.ErrPDFEngine, "pdf engine unavailable: no pdftotext on PATH")
		}
	}))
	_, tb := en.newUser(t, "ada@example.com")
	pns := en.world.Company("Acme Corp", 1)
	rec := en.do(t, request{target: "/analyze/Acme%20Corp", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	if !strings.Contains(rec.Body.String(), `"document not read: the PDF engine is not installed"`) {
		t.Errorf("the company's analysis does not say the engine is missing: %s", rec.Body.String())
	}
	rec = en.do(t, request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme%20Corp", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusServiceUnavailable)
	var body struct{ Detail string }
	decode(t, rec, &body)
	if want := "PDF engine unavailable: poppler is not installed on this server"; body.Detail != want {
		t.Errorf("detail = %q, want %q", body.Detail, want)
	}
	if p, err := en.st.Analyses().Patent(context.Background(), pns[0]); err != nil || p.PDFVerdict != "" {
		t.Errorf("stored patent = %+v, %v; want no verdict", p, err)
	}
}

func TestAnalyzePatent(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	pns := en.world.Company("Acme Corp", 1)
	wantStatus(t, en.do(t, request{target: "/analyze/Acme%20Corp", token: tok}), http.StatusOK)

	rec := en.do(t, request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme%20Corp", token: tok})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "patent_id", "company_name", "analysis")
	for _, tt := range []struct {
		target string
		status int
	}{
		{"/analyze/patent/US99999999B2?company_name=Acme", 404},
		{"/analyze/patent/" + pns[0], 422},
		{"/analyze/patent/" + pns[0] + "?company_name=-x", 422},
		{"/analyze/patent/us123?company_name=Acme", 422},
		{"/analyze/patent/US1..2?company_name=Acme", 422},
		{"/analyze/patent/" + pns[0] + "?company_name=Acme&model=bad/model", 400},
	} {
		wantStatus(t, en.do(t, request{target: tt.target, token: tok}), tt.status)
	}
	// A scan without a text layer: 422, saying why OCR did not read it
	// (the world runs as under PDF_OCR=off).
	en.world.Serp.SetResults("Scan Corp", 1, []map[string]any{serpapitest.Organic("US11762912B2", "Scanned document",
		time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02"), en.world.PDFs.Add("US11762912B2", analysistest.ScannedPDF))})
	wantStatus(t, en.do(t, request{target: "/analyze/Scan%20Corp", token: tok}), http.StatusOK)
	rec = en.do(t, request{target: "/analyze/patent/US11762912B2?company_name=Scan%20Corp", token: tok})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	var body struct{ Detail string }
	decode(t, rec, &body)
	if want := "Patent PDF for US11762912B2 has no readable text (a scanned document; " + analysistest.NoOCR + ")"; body.Detail != want {
		t.Errorf("scanned PDF detail = %q, want %q", body.Detail, want)
	}

	// A PDF past a limit on reading a document: 422 naming the limit, the
	// verdict stored with the patent, and the same answer from it next time.
	const big = "US90999999B2"
	ctx := context.Background()
	if err := en.st.Analyses().UpsertPatent(ctx, patent.StoredPatent{PatentID: big, CompanyName: "Big Corp",
		PDFLink: en.world.PDFs.AddDoc(big, pdftest.Pages(600))}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rec = en.do(t, request{target: "/analyze/patent/" + big + "?company_name=Big%20Corp", token: tok})
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		decode(t, rec, &body)
		if want := "Patent PDF for " + big + ": document not read: more than 500 pages"; body.Detail != want {
			t.Errorf("over-limit PDF detail = %q, want %q", body.Detail, want)
		}
		if p, err := en.st.Analyses().Patent(ctx, big); err != nil || p.PDFVerdict != "document not read: more than 500 pages" {
			t.Errorf("stored patent = %+v, %v; want its verdict", p, err)
		}
	}

	en.world.LLM.Script(llmtest.Reply{Status: 402})
	rec = en.do(t, request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme&model=mistralai/mistral-nemo", token: tok})
	wantStatus(t, rec, http.StatusBadGateway)
	if strings.Contains(rec.Body.String(), "test-llm-key") {
		t.Error("502 reveals the key")
	}
}
