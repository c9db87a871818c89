package analysis_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var ctx = context.Background()

func newWorld(t *testing.T) *analysistest.World {
	t.Helper()
	return analysistest.NewWorld(t, storetest.Open(t, store.SQLite, time.Now))
}

func TestAnalyzeCompany(t *testing.T) {
	w := newWorld(t)
	pns := w.Company("Acme Corp", 3)
	an := w.Analyzer(nil)

	res := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !res.Success || res.Error != nil || res.Analysis == nil || *res.Analysis == "" {
		t.Fatalf("AnalyzeCompany = %+v", res)
	}
	if res.PatentCount != 3 || len(res.Patents) != 3 || res.Patents[0].PatentID != pns[0] || res.TotalResults != 6 {
		t.Errorf("patents = %d %+v, total %d", res.PatentCount, res.Patents, res.TotalResults)
	}
	if res.Cached || *res.Model != patent.DefaultModel || res.Timestamp.IsZero() {
		t.Errorf("cached %v, model %v, timestamp %v", res.Cached, *res.Model, res.Timestamp)
	}
	// One search, three PDFs, one model call; the prompt holds the PDFs' text.
	if w.Serp.CallCount() != 1 || w.PDFs.Hits() != 3 || w.LLM.CallCount() != 1 {
		t.Fatalf("calls: search %d, pdf %d, llm %d", w.Serp.CallCount(), w.PDFs.Hits(), w.LLM.CallCount())
	}
	call := w.LLM.Calls()[0]
	prompt := call.Request.Messages[len(call.Request.Messages)-1].Content
	for _, pn := range pns {
		if !strings.Contains(prompt, pn) {
			t.Errorf("prompt lacks %s", pn)
		}
	}
	if !strings.Contains(prompt, "Abstract: ") || !strings.Contains(prompt, "Independent claims: ") || !strings.Contains(prompt, "Acme Corp") {
		t.Errorf("prompt lacks the extracted sections:\n%.2000s", prompt)
	}
	if *res.Analysis != llmtest.Answer(prompt) {
		t.Errorf("analysis is not the model's answer")
	}
	// Stored: the analysis (model and tokens) and the patents with their PDF paths.
	recs := analysistest.Analyses(t, w.Store)
	if len(recs) != 1 || recs[0].AnalysisType != patent.AnalysisPortfolio || recs[0].CompanyName != "Acme Corp" ||
		recs[0].Model != patent.DefaultModel || recs[0].PromptTokens == 0 || recs[0].CompletionTokens == 0 || recs[0].Cached {
		t.Errorf("stored analyses = %+v", recs)
	}
	for _, pn := range pns {
		p, err := w.Store.Analyses().Patent(ctx, pn)
		if err != nil || p.PDFPath == "" || p.PDFLink == "" || p.Summary == "" || p.CompanyName != "Acme Corp" {
			t.Errorf("stored patent %s = %+v, %v", pn, p, err)
		}
	}
}

// TestCaches: with USE_CACHE a repeat makes no external call and is stored
// as cached; Fresh (scheduled runs) and USE_CACHE=false always call out and
// still store.
func TestCaches(t *testing.T) {
	w := newWorld(t)
	w.Company("Acme Corp", 2)
	an := w.Analyzer(nil)
	first := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	second := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !second.Success || !second.Cached || *second.Analysis != *first.Analysis {
		t.Fatalf("second = %+v, want a cached copy of the first", second)
	}
	if w.Serp.CallCount() != 1 || w.LLM.CallCount() != 1 || w.PDFs.Hits() != 2 {
		t.Fatalf("cache hit made calls: search %d, llm %d, pdf %d", w.Serp.CallCount(), w.LLM.CallCount(), w.PDFs.Hits())
	}
	if recs := analysistest.Analyses(t, w.Store); len(recs) != 1 {
		t.Errorf("listing shows %d analyses, want the cached one left out", len(recs))
	}
	// Another model is another cache entry.
	third := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Model: "mistralai/mistral-nemo"})
	if third.Cached || w.LLM.CallCount() != 2 || w.Serp.CallCount() != 1 || *third.Model != "mistralai/mistral-nemo" {
		t.Errorf("other model: cached %v, llm calls %d, search calls %d", third.Cached, w.LLM.CallCount(), w.Serp.CallCount())
	}
	// Fresh bypasses both caches, stores a normal analysis, and PDFs stay in storage.
	fresh := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true})
	if fresh.Cached || w.Serp.CallCount() != 2 || w.LLM.CallCount() != 3 || w.PDFs.Hits() != 2 {
		t.Errorf("fresh: cached %v, search %d, llm %d, pdf %d", fresh.Cached, w.Serp.CallCount(), w.LLM.CallCount(), w.PDFs.Hits())
	}
	// USE_CACHE=false: always calls out.
	w.Caches.Read = false
	off := w.Analyzer(nil)
	for range 2 {
		if r := off.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{}); r.Cached || !r.Success {
			t.Fatalf("USE_CACHE=false result = %+v", r)
		}
	}
	if w.Serp.CallCount() != 4 || w.LLM.CallCount() != 5 {
		t.Errorf("USE_CACHE=false: search %d, llm %d calls; want every request to call out", w.Serp.CallCount(), w.LLM.CallCount())
	}
	// ...and still stored the answers: with the cache back on, no call.
	w.Caches.Read = true
	on := w.Analyzer(nil)
	if r := on.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{}); !r.Cached || w.LLM.CallCount() != 5 {
		t.Errorf("answers stored with USE_CACHE=false were not reused: %+v, llm calls %d", r.Cached, w.LLM.CallCount())
	}
}

func TestInBandFailures(t *testing.T) {
	w := newWorld(t)
	w.Company("Acme Corp", 2)
	an := w.Analyzer(nil)

	none := an.AnalyzeCompany(ctx, "Nobody Inc", patent.AnalyzeOptions{})
	if none.Success || none.Error == nil || *none.Error != patent.NoPatentsError || none.PatentCount != 0 || w.LLM.CallCount() != 0 {
		t.Errorf("no patents = %+v (llm calls %d)", none, w.LLM.CallCount())
	}

	w.Serp.Script(serpapitest.Unavailable(), serpapitest.Unavailable())
	down := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if down.Success || down.Error == nil || !strings.HasPrefix(*down.Error, "patent search failed: ") || strings.Count(*down.Error, "patent search failed") != 1 {
		t.Errorf("search down = %+v, want an error saying \"patent search failed\" once, first", down)
	}

	w.LLM.Script(llmtest.Reply{Status: 402}, llmtest.Reply{Status: 402})
	llmDown := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if llmDown.Success || llmDown.Error == nil || !strings.HasPrefix(*llmDown.Error, "analysis failed: llm gateway rejected the request: ") ||
		strings.Count(*llmDown.Error, "analysis failed") != 1 || strings.Count(*llmDown.Error, "llm gateway") != 1 || llmDown.PatentCount != 2 {
		t.Errorf("llm down = %+v, want \"analysis failed: llm gateway rejected the request: ...\", each prefix once", llmDown)
	}
	if strings.Contains(*llmDown.Error, "test-llm-key") || strings.Contains(*down.Error, "test-serpapi-key") {
		t.Error("an error reveals an API key")
	}
	if recs := analysistest.Analyses(t, w.Store); len(recs) != 0 {
		t.Errorf("failures stored %d analyses", len(recs))
	}
}

// TestUnreadablePDFs: a scanned PDF, a PDF host that is down and a link to
// a host not allowed still leave the patent in the prompt with its title
// and snippet.
func TestUnreadablePDFs(t *testing.T) {
	w := newWorld(t)
	scanned := w.PDFs.Add("US10000001B2", analysistest.ScannedPDF)
	w.Serp.SetResults("Acme Corp", 3, []map[string]any{
		serpapitest.Organic("US10000001B2", "Scanned thing", "2026-10-01", scanned),
		serpapitest.Organic("US10000002B2", "Missing thing", "2026-09-01", w.PDFs.URL+"/pdfs/US10000002B2.pdf"),
		serpapitest.Organic("US10000003B2", "Foreign thing", "2026-08-01", "https://patentimages.storage.googleapis.com/86/1c/bd/89a41d9faca215/US10000003.pdf"),
	})
	res := w.Analyzer(nil).AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !res.Success || res.PatentCount != 3 {
		t.Fatalf("result = %+v", res)
	}
	prompt := w.LLM.Calls()[0].Request.Messages[1].Content
	for _, title := range []string{"Scanned thing", "Missing thing", "Foreign thing"} {
		if !strings.Contains(prompt, title) {
			t.Errorf("prompt lacks %q", title)
		}
	}
}

// TestAnsweredModel: the model that actually answered is recorded.
func TestAnsweredModel(t *testing.T) {
	w := newWorld(t)
	w.Company("Acme Corp", 1)
	w.LLM.SetAnsweredModel("openai/gpt-4o-mini-2024-07-18")
	res := w.Analyzer(nil).AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	recs := analysistest.Analyses(t, w.Store)
	if *res.Model != "openai/gpt-4o-mini-2024-07-18" || len(recs) != 1 || recs[0].Model != "openai/gpt-4o-mini-2024-07-18" {
		t.Errorf("model = %s, stored %+v", *res.Model, recs)
	}
}

func TestAnalyzeBatch(t *testing.T) {
	w := newWorld(t)
	for _, c := range []string{"Acme Corp", "Beta Labs", "Gamma Inc"} {
		w.Company(c, 2)
	}
	an := w.Analyzer(nil)
	names := []patent.CompanyName{"Acme Corp", "Beta Labs", "Nobody Inc", "acme corp", "Gamma Inc"}
	var progress atomic.Int64
	res := an.AnalyzeBatch(ctx, names, 2, patent.AnalyzeOptions{}, progressFunc(func(done int) { progress.Store(int64(done)) }))
	if len(res.Results) != 5 || res.Model != patent.DefaultModel {
		t.Fatalf("batch = %+v", res)
	}
	for i, r := range res.Results {
		if r.CompanyName != names[i].String() {
			t.Errorf("result %d is %q, want %q (input order)", i, r.CompanyName, names[i])
		}
	}
	s := res.Summary
	if s.Total != 5 || s.Successful != 4 || s.Failed != 1 || s.TotalPatents != 8 || s.DurationSeconds <= 0 {
		t.Errorf("summary = %+v", s)
	}
	if res.Results[2].Success || res.Results[3].Analysis == nil || *res.Results[3].Analysis != *res.Results[0].Analysis {
		t.Errorf("duplicate or failure not reported per position: %+v", res.Results)
	}
	if w.Serp.CallCount() != 4 || progress.Load() != 5 {
		t.Errorf("search calls %d (duplicates analysed once: want 4), progress %d (want 5)", w.Serp.CallCount(), progress.Load())
	}
	// Once ctx has ended, nothing more starts; the companies left say why.
	ended, cancel := context.WithCancelCause(ctx)
	cancel(errors.New("the job ran longer than JOBS_TIMEOUT (1s)"))
	stopped := an.AnalyzeBatch(ended, []patent.CompanyName{"Acme Corp"}, 1, patent.AnalyzeOptions{}, nil)
	if stopped.Results[0].Success || stopped.Results[0].Error == nil || *stopped.Results[0].Error != "not analysed: the job ran longer than JOBS_TIMEOUT (1s)" {
		t.Errorf("after ctx ended: %+v", stopped.Results[0])
	}
}

func TestAnalyzePatent(t *testing.T) {
	w := newWorld(t)
	pns := w.Company("Acme Corp", 1)
	an := w.Analyzer(nil)
	if _, err := an.AnalyzePatent(ctx, "US99999999B2", "Acme Corp", patent.AnalyzeOptions{}); !errors.Is(err, patent.ErrPDFNotFound) {
		t.Fatalf("unknown patent: %v, want ErrPDFNotFound", err)
	}
	// Known from a search: downloaded from the cached link.
	an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	hits := w.PDFs.Hits()
	res, err := an.AnalyzePatent(ctx, pns[0], "Acme Corp", patent.AnalyzeOptions{})
	if err != nil || res.Analysis == "" || res.PatentID != pns[0] || res.CompanyName != "Acme Corp" {
		t.Fatalf("AnalyzePatent = %+v, %v", res, err)
	}
	if w.PDFs.Hits() != hits {
		t.Errorf("the stored PDF was downloaded again")
	}
	// The file is gone from storage: the cached link is used again.
	if err := removeStored(w, pns[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := an.AnalyzePatent(ctx, pns[0], "Acme Corp", patent.AnalyzeOptions{Model: "google/gemini-2.5-flash"}); err != nil || w.PDFs.Hits() != hits+1 {
		t.Fatalf("missing file: %v, downloads %d", err, w.PDFs.Hits()-hits)
	}
	var single int
	for _, r := range analysistest.Analyses(t, w.Store) {
		if r.AnalysisType == patent.AnalysisSinglePatent {
			single++
		}
	}
	if single != 2 {
		t.Errorf("%d single-patent analyses stored, want 2", single)
	}
	// A scanned PDF is unreadable.
	w.PDFs.Add("US10000009B2", analysistest.ScannedPDF)
	w.Store.Analyses().UpsertPatent(ctx, patent.StoredPatent{PatentID: "US10000009B2", PDFLink: w.PDFs.URL + "/pdfs/US10000009B2.pdf"})
	_, err = an.AnalyzePatent(ctx, "US10000009B2", "Acme Corp", patent.AnalyzeOptions{})
	var no *patent.NotOCRedError
	if !errors.Is(err, patent.ErrPDFUnreadable) || !errors.As(err, &no) || no.Reason != analysistest.NoOCR {
		t.Errorf("scanned PDF: %v, want ErrUnreadable with why OCR did not read it", err)
	}
}

// TestPortfolioFacts: the search answer's portfolio (its summary.cpc, the
// results' years, countries and grants) is in the result, stored with the
// analysis with the patents analysed, given to the model as plain facts,
// and comes back from the search cache with a cached analysis.
func TestPortfolioFacts(t *testing.T) {
	w := newWorld(t)
	pns := w.Company("Acme Corp", 3)
	w.Serp.SetCPC(pns[0], "H04R", "G10L")
	w.Serp.SetCPC(pns[1], "H04R")
	w.Serp.SetCPC(pns[2], "H04R", "A61B")
	an := w.Analyzer(nil)
	res := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !res.Success || res.Portfolio == nil {
		t.Fatalf("AnalyzeCompany = %+v", res)
	}
	p := res.Portfolio
	if len(p.CPC) != 3 || p.CPC[0] != (patent.CPCShare{Code: "H04R", Share: 1}) || p.CPC[1].Code != "A61B" || p.CPC[1].Share != 0.333 ||
		p.Granted != 3 || p.Applications != 0 || len(p.ByYear) == 0 || len(p.Countries) != 1 || p.Countries[0].Country != "US" {
		t.Errorf("portfolio = %+v", p)
	}
	if len(res.Publications) != 3 || res.Publications[0].PatentID != pns[0] {
		t.Errorf("publications = %+v", res.Publications)
	}
	call := w.LLM.Calls()[0]
	prompt := call.Request.Messages[len(call.Request.Messages)-1].Content
	for _, fact := range []string{"Portfolio facts, counted by the patent search over all 3 recent publications",
		"- CPC subclasses by share of results: H04R 100.0%, A61B 33.3%, G10L 33.3%", "- Granted: 3; applications: 0",
		"- Status by country (active / not active): US 3 / 0"} {
		if !strings.Contains(prompt, fact) {
			t.Errorf("prompt lacks %q:\n%.3000s", fact, prompt)
		}
	}
	var recs []patent.AnalysisRecord // the listing does not read the facts: the export's reader does
	if err := w.Store.Analyses().EachAnalysis(ctx, "Acme Corp", func(r patent.AnalysisRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !reflect.DeepEqual(recs[0].Portfolio, p) || len(recs[0].Patents) != 3 || recs[0].Patents[0].PatentID != pns[0] || !recs[0].Patents[0].Read {
		t.Errorf("stored analysis facts = %+v / %+v", recs[0].Portfolio, recs[0].Patents)
	}
	again := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !again.Cached || !reflect.DeepEqual(again.Portfolio, p) || w.Serp.CallCount() != 1 {
		t.Errorf("cached repeat: cached %v, portfolio %+v, %d searches", again.Cached, again.Portfolio, w.Serp.CallCount())
	}
}

// progressFunc is an analysis.Progress of a function.
type progressFunc func(n int)

func (f progressFunc) Done(n int) { f(n) }
