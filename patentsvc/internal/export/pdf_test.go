package export_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

var pdfOut = flag.String("pdfout", "", "write the PDFs the tests render into this directory, to look at them")

// savePDF keeps a rendered PDF when -pdfout is set.
func savePDF(tb testing.TB, name string, data []byte) {
	tb.Helper()
	if *pdfOut == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(*pdfOut, name), data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// longText is an analysis of n words over several pages, starting with
// first and ending with last.
func longText(n int, first, last string) string {
	words := strings.Fields("the claimed battery cell comprises a cathode layer of lithium iron phosphate " +
		"and an anode of silicon graphite composite wherein the separator is coated with ceramic " +
		"particles to improve thermal stability under high charge rates")
	var b strings.Builder
	b.WriteString(first)
	count := len(strings.Fields(first)) + len(strings.Fields(last))
	for i := 0; count < n; i++ {
		b.WriteByte(' ')
		b.WriteString(words[i%len(words)])
		count++
		if i%97 == 96 {
			b.WriteString(".\n\n")
			b.WriteString(fmt.Sprintf("Paragraph %d:", i/97+2))
			count++
		}
	}
	b.WriteString(". ")
	b.WriteString(last)
	return b.String()
}

func TestPDF(t *testing.T) {
	const (
		literal  = `Claims cover <widget> & "gadget" > 'thing' (R&D).`
		markup   = `Second paragraph: the <b>bold</b> claim &amp; no entity.`
		longHead = "The long analysis opens with this sentence."
		longTail = "The long analysis closes with this sentence."
		cjk      = "Filed in Japan as 特許 with a 🚀 launch; 特許 again."
		cjkShown = "Filed in Japan as \uFFFD\uFFFD with a \uFFFD launch; \uFFFD\uFFFD again."
	)
	cet := time.FixedZone("CET", 3600)
	records := []patent.AnalysisRecord{
		{
			CompanyName:  "Acme Corp",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "openai/gpt-4o-mini",
			Response:     literal + "\n" + markup,
			Timestamp:    time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
		},
		{
			CompanyName:  "Acme Corp",
			AnalysisType: patent.AnalysisSinglePatent,
			PatentID:     "US10906193B2",
			Model:        "anthropic/claude-3.5-sonnet",
			Response:     longText(6000, longHead, longTail),
			Timestamp:    time.Date(2025, 3, 3, 9, 30, 15, 0, time.UTC),
		},
		{
			CompanyName:  "Acme Corp",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "google/gemini-flash",
			Response:     cjk + "\nTabs\tbecome\tspaces.",
			Timestamp:    time.Date(2025, 3, 2, 8, 0, 0, 0, cet),
		},
	}
	summary := patent.ReportSummary{
		Total:  3,
		Types:  []string{"portfolio", "single_patent"},
		Models: []string{"anthropic/claude-3.5-sonnet", "google/gemini-flash", "openai/gpt-4o-mini"},
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	generated := time.Date(2025, 3, 4, 6, 7, 30, 0, cet)

	data := mustRenderPDF(t, "Acme Corp", generated, summary, records, logger)
	savePDF(t, "report.pdf", data)
	pages := mustPageTexts(t, data)
	all := flat(strings.Join(pages, "\n"))

	t.Run("pages", func(t *testing.T) {
		if len(pages) < 3 {
			t.Errorf("report has %d pages, want several for a 6,000-word analysis", len(pages))
		}
		for i, p := range pages {
			if want := fmt.Sprintf("Page %d", i+1); !strings.Contains(p, want) {
				t.Errorf("page %d has no footer %q", i+1, want)
			}
		}
	})

	t.Run("title and summary", func(t *testing.T) {
		first := flat(pages[0])
		for _, want := range []string{
			"Patent Analysis Report: Acme Corp",
			"Generated 2025-03-04 05:07 UTC",
			"Total Analyses 3",
			"Analysis Types portfolio, single_patent",
			"Models Used anthropic/claude-3.5-sonnet, google/gemini-flash, openai/gpt-4o-mini",
		} {
			if !strings.Contains(first, want) {
				t.Errorf("page 1 lacks %q; it reads:\n%s", want, first)
			}
		}
		if strings.Contains(all, "most recent of") {
			t.Errorf("report says it shows only some analyses, but shows all")
		}
	})

	t.Run("sections", func(t *testing.T) {
		for i, want := range []string{
			"Analysis 1 of 3: portfolio Model: openai/gpt-4o-mini Time: 2025-03-04 10:00:00 UTC",
			"Analysis 2 of 3: single_patent Model: anthropic/claude-3.5-sonnet Time: 2025-03-03 09:30:15 UTC Patent: US10906193B2",
			"Analysis 3 of 3: portfolio Model: google/gemini-flash Time: 2025-03-02 07:00:00 UTC",
			literal, markup, longHead, longTail, "Paragraph 40:", "Tabs become spaces.",
		} {
			if !strings.Contains(all, want) {
				t.Errorf("section text %d: report lacks %q", i, want)
			}
		}
		// Sections come in the order given.
		a, b, c := strings.Index(all, "Analysis 1 of 3"), strings.Index(all, "Analysis 2 of 3"), strings.Index(all, "Analysis 3 of 3")
		if !(a < b && b < c) {
			t.Errorf("sections at %d, %d, %d, want in order", a, b, c)
		}
		// The long one spans pages: its end is pages after its start.
		var head, tail int
		for i, p := range pages {
			if strings.Contains(flat(p), longHead) {
				head = i + 1
			}
			if strings.Contains(flat(p), longTail) {
				tail = i + 1
			}
		}
		if tail-head < 2 {
			t.Errorf("long analysis runs from page %d to page %d, want at least two page breaks", head, tail)
		}
	})

	t.Run("literal text", func(t *testing.T) {
		for _, want := range []string{"<widget>", "&", `"gadget"`, "> 'thing'", "(R&D)", "<b>bold</b>", "&amp; no entity"} {
			if !strings.Contains(all, want) {
				t.Errorf("report lacks literal %q", want)
			}
		}
		// The only "&amp;" is the one the analysis itself contains.
		if got := strings.Count(all, "&amp;"); got != 1 {
			t.Errorf("report has %d \"&amp;\", want the 1 of the text", got)
		}
		for _, entity := range []string{"&lt;", "&gt;", "&quot;", "&#"} {
			if strings.Contains(all, entity) {
				t.Errorf("report shows the entity %q", entity)
			}
		}
	})

	t.Run("missing glyphs", func(t *testing.T) {
		if !strings.Contains(all, cjkShown) {
			i := strings.Index(all, "Filed in Japan")
			t.Errorf("report shows %q, want %q", all[max(i, 0):min(len(all), max(i, 0)+80)], cjkShown)
		}
		if strings.ContainsAny(all, "特許🚀") {
			t.Errorf("report claims to show characters its fonts do not have")
		}
		// Each distinct missing character is logged once, at DEBUG.
		for _, cp := range []string{"U+7279", "U+8A31", "U+1F680"} {
			if got := strings.Count(logs.String(), "code_point="+cp); got != 1 {
				t.Errorf("%s logged %d times, want once; logs:\n%s", cp, got, logs.String())
			}
		}
		for line := range strings.Lines(logs.String()) {
			if !strings.Contains(line, "level=DEBUG") {
				t.Errorf("log line not at DEBUG: %s", line)
			}
		}
	})

	t.Run("pdftotext", func(t *testing.T) {
		// A second, independent reader, when the machine has poppler.
		bin, err := exec.LookPath("pdftotext")
		if err != nil {
			t.Skip("pdftotext not on PATH")
		}
		path := filepath.Join(t.TempDir(), "report.pdf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "-enc", "UTF-8", path, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		text := flat(string(out))
		for _, want := range []string{"Patent Analysis Report: Acme Corp", "Total Analyses", "Models Used", literal, markup, longTail, cjkShown} {
			if !strings.Contains(text, want) {
				t.Errorf("pdftotext output lacks %q", want)
			}
		}
	})
}

func TestPDFNothingRunsOffThePage(t *testing.T) {
	url := "https://patents.google.com/patent/US10906193B2/en?oq=" + strings.Repeat("battery%20cathode%20", 30)
	records := []patent.AnalysisRecord{{
		AnalysisType: patent.AnalysisPortfolio,
		Model:        "openai/gpt-4o-mini",
		Response: "See " + url + " for details.\n" +
			strings.Repeat("W", 400) + "\n" +
			"\t\tIndented by tabs, then a normal sentence that is long enough to wrap at least once on the page.",
		Timestamp: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
	}}
	summary := patent.ReportSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{strings.Repeat("very-long-model-name/", 30)}}
	data := mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)
	savePDF(t, "margins.pdf", data)

	all := strings.Join(mustPageTexts(t, data), "\n")
	// Nothing is lost: with the line breaks taken out, the URL is whole.
	if !strings.Contains(strings.ReplaceAll(all, "\n", ""), url) {
		t.Errorf("the URL is not all there")
	}
	if !strings.Contains(strings.ReplaceAll(all, "\n", ""), strings.Repeat("W", 400)) {
		t.Errorf("the long word is not all there")
	}

	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not on PATH: positions not checked (the internal wrap test measures every line)")
	}
	path := filepath.Join(t.TempDir(), "margins.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-bbox", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	// <word xMin="56.7" yMin=".." xMax="538.5" yMax="..">text</word>
	words := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "<word ") {
			continue
		}
		words++
		var xMin, yMin, xMax, yMax float64
		i := strings.Index(line, "xMin=")
		if _, err := fmt.Sscanf(line[i:], `xMin="%g" yMin="%g" xMax="%g" yMax="%g"`, &xMin, &yMin, &xMax, &yMax); err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		const pageWidth, margin = 595.28, 56.7
		if xMin < margin-0.5 || xMax > pageWidth-margin+0.5 {
			t.Errorf("word outside the margins (%.1f to %.1f): %s", xMin, xMax, line)
		}
	}
	if words == 0 {
		t.Errorf("pdftotext -bbox found no words")
	}
}

func TestPDFShowsFewerThanTotal(t *testing.T) {
	records := []patent.AnalysisRecord{{AnalysisType: "portfolio", Model: "m", Response: "Only one."}}
	summary := patent.ReportSummary{Total: 250, Types: []string{"portfolio"}, Models: []string{"m"}}
	all := flat(strings.Join(mustPageTexts(t, mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)), "\n"))
	for _, want := range []string{"Total Analyses 250", "shows the 1 most recent of 250 analyses", "Analysis 1 of 1: portfolio", "Only one."} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q; it reads:\n%s", want, all)
		}
	}
}

func TestPDFEmpty(t *testing.T) {
	// No analyses (the handler answers 404 before this) and empty fields
	// still make a valid one-page report.
	data := mustRenderPDF(t, "Acme Corp", time.Now(), patent.ReportSummary{}, nil, nil)
	pages := mustPageTexts(t, data)
	if len(pages) != 1 {
		t.Fatalf("empty report has %d pages, want 1", len(pages))
	}
	all := flat(pages[0])
	for _, want := range []string{"Patent Analysis Report: Acme Corp", "Total Analyses 0", "Analysis Types —", "Models Used —"} {
		if !strings.Contains(all, want) {
			t.Errorf("empty report lacks %q; it reads:\n%s", want, all)
		}
	}

	data = mustRenderPDF(t, "Acme Corp", time.Now(), patent.ReportSummary{Total: 1}, []patent.AnalysisRecord{{}}, nil)
	all = flat(strings.Join(mustPageTexts(t, data), "\n"))
	for _, want := range []string{"Analysis 1 of 1: —", "Model: —", "Time: —", "(no analysis text)"} {
		if !strings.Contains(all, want) {
			t.Errorf("report of an empty record lacks %q; it reads:\n%s", want, all)
		}
	}
}

func TestPDFWriteError(t *testing.T) {
	records := []patent.AnalysisRecord{{AnalysisType: "portfolio", Model: "m", Response: "Text."}}
	err := export.PDF(&failingWriter{limit: 100}, "Acme Corp", time.Now(), patent.ReportSummary{Total: 1}, records, nil)
	if !errors.Is(err, errWrite) {
		t.Errorf("PDF error = %v, want %v", err, errWrite)
	}
}

func TestPDFDeterministic(t *testing.T) {
	// The same input gives the same bytes (fonts registered in a fixed
	// order, no clock read inside).
	records := []patent.AnalysisRecord{{AnalysisType: "portfolio", Model: "m", Response: "Text with 特."}}
	at := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	a := mustRenderPDF(t, "Acme Corp", at, patent.ReportSummary{Total: 1}, records, nil)
	b := mustRenderPDF(t, "Acme Corp", at, patent.ReportSummary{Total: 1}, records, nil)
	if !bytes.Equal(a, b) {
		t.Errorf("two renderings of the same report differ")
	}
}

// TestPDFHyphens: hyphens are drawn and copied as hyphens: ASCII "-",
// U+2010 and U+2011 (which the Go fonts lack) as "-", in prose, headings,
// tables and the title; a soft hyphen (U+00AD) not at a line break is not
// there at all.
func TestPDFHyphens(t *testing.T) {
	records := []patent.AnalysisRecord{{
		AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini",
		Timestamp: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
		Response: "## Lithium-ion cells\n\nA state-of-the-art pouch cell, non\u2011aqueous, with co\u2010operation " +
			"between elec\u00ADtro\u00ADlyte makers.\n\n| Cell | Note |\n|---|---|\n| LFP | cobalt-free |\n",
	}}
	summary := patent.ReportSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{"openai/gpt-4o-mini"}}
	data := mustRenderPDF(t, "Hy-phen Corp", time.Now(), summary, records, nil)
	savePDF(t, "hyphens.pdf", data)
	want := []string{"Hy-phen Corp", "openai/gpt-4o-mini", "Lithium-ion cells", "A state-of-the-art pouch cell, non-aqueous, with co-operation between electrolyte makers.",
		"cobalt-free", "2025-03-04"}
	check := func(reader, text string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the text lacks %q:\n%s", reader, w, text)
			}
		}
		if strings.ContainsAny(text, "\u00AD\u2010\u2011\uFFFD") {
			t.Errorf("%s: the text has a soft hyphen, a Unicode hyphen or a replacement character:\n%q", reader, text)
		}
	}
	check("ledongthuc/pdf", flat(strings.Join(mustPageTexts(t, data), "\n")))
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not on PATH: the text is checked with one reader only")
	}
	path := filepath.Join(t.TempDir(), "hyphens.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	check("pdftotext", flat(string(out)))
}
