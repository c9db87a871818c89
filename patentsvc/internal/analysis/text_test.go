package analysis_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

// TestStoredTextClean (decisions.md, "Both services: hostile input
// answered, never a 5xx"): a model answer with NUL characters and a search
// title with them are stored clean; an LLM cache entry written before the
// rule (a NUL, SQLite kept it) or under a larger cap is cleaned and cut
// before it is returned and stored again.
func TestStoredTextClean(t *testing.T) {
	w := newWorld(t)
	pns := w.Company("Acme Corp", 1)
	date := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	w.Serp.SetResults("Acme Corp", 1, []map[string]any{
		serpapitest.Organic(pns[0], "Blade\x00 holder", date, w.PDFs.Add(pns[0], analysistest.TextPDFs[0])),
	})
	w.LLM.Script(llmtest.Reply{Body: llmtest.Completion("openai/gpt-4o-mini\x00", "Fine\x00 answer.", 10, 3)})
	w.Caches.MaxAnswerBytes = 1024
	an := w.Analyzer(nil)

	res := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !res.Success || *res.Analysis != "Fine answer." || *res.Model != "openai/gpt-4o-mini" {
		t.Fatalf("AnalyzeCompany = %+v, want the answer and the model without NUL", res)
	}

	// The cache entry as an older release left it on SQLite.
	db, err := w.Store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	legacy := "Old\x00 answer " + strings.Repeat("特許 ", 1000)
	if _, err := db.ExecContext(ctx, "UPDATE llm_cache SET response = ?, answered_model = ?", legacy, "openai/gpt-4o-mini\x00"); err != nil {
		t.Fatal(err)
	}
	again := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	got := *again.Analysis
	if !again.Success || !again.Cached || len(got) > 1024 || !utf8.ValidString(got) || strings.ContainsRune(got, 0) ||
		!strings.HasPrefix(got, "Old answer 特許") || !strings.HasSuffix(got, patent.AnswerTruncated) || *again.Model != "openai/gpt-4o-mini" {
		t.Errorf("from the cache: success %v, cached %v, model %q, %d bytes %q; want the entry cleaned and cut within 1024 bytes",
			again.Success, again.Cached, *again.Model, len(got), got)
	}
	if n := w.LLM.CallCount(); n != 1 {
		t.Errorf("model called %d times, want 1", n)
	}
	var stored string
	if err := db.QueryRowContext(ctx, "SELECT response FROM analyses WHERE cached ORDER BY id DESC LIMIT 1").Scan(&stored); err != nil || stored != got {
		t.Errorf("stored cached analysis = %q, %v; want %q", stored, err, got)
	}

	// An entry that cleaning empties is a miss: the model is asked again.
	if _, err := db.ExecContext(ctx, "UPDATE llm_cache SET response = ?", "\x00\x00"); err != nil {
		t.Fatal(err)
	}
	third := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{})
	if !third.Success || third.Cached || w.LLM.CallCount() != 2 {
		t.Errorf("after an empty entry: success %v, cached %v, %d model calls; want a fresh answer (2 calls)", third.Success, third.Cached, w.LLM.CallCount())
	}
	if p, err := w.Store.Analyses().Patent(ctx, pns[0]); err != nil || p.Title != "Blade holder" || !utf8.ValidString(p.Summary) || strings.ContainsRune(p.Summary, 0) {
		t.Errorf("stored patent = %+v, %v; want the title %q and a clean summary", p, err, "Blade holder")
	}
}
