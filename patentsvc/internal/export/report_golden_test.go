package export_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// fixedReport is a report with everything its first page shows: the
// charts of a tracked company (runs with alerts and a failed search,
// twelve months of analyses) and an analysis in Markdown.
func fixedReport() (export.PDFSummary, []patent.AnalysisRecord) {
	at := time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)
	var runs []patent.TrackingRun
	counts := []int{12, 12, 13, 13, 13, 17, 17, -1, 18, 18, 24, 24, 25}
	for i, c := range counts {
		run := patent.TrackingRun{RunAt: at.AddDate(0, 0, 7*i), Success: c >= 0, Alert: i == 5 || i == 10}
		if c >= 0 {
			run.PatentCount = &c
		}
		runs = append(runs, run)
	}
	var months []patent.MonthCount
	for i, n := range []int64{0, 1, 0, 2, 3, 1, 4, 2, 5, 3, 2, 6, 1} {
		m := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0).Format("2006-01")
		months = append(months, patent.MonthCount{Month: m, Key: m, Count: n})
	}
	summary := export.PDFSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{"openai/gpt-4o-mini"},
		Tracked: true, Runs: runs, Months: months}
	rec := patent.AnalysisRecord{
		CompanyName: "Acme Corp", AnalysisType: "portfolio", Model: "openai/gpt-4o-mini",
		Timestamp: time.Date(2026, 8, 31, 9, 30, 0, 0, time.UTC),
		Response: "## Key themes\n\n- **Battery cells**: pouch cells with *interleaved* cooling layers\n" +
			"- Charging control, see `US8427103B2`\n\n| Patent | Focus |\n|---|---|\n| US11394072B2 | cell assembly |\n",
	}
	return summary, []patent.AnalysisRecord{rec}
}

// TestReportGolden renders a fixed report and compares its first page, as
// pdftoppm draws it, with testdata/report.golden.png (the same measure as
// TestChartGolden: less than 1% of the ink may differ). -update rewrites
// it; -chartout=DIR writes the page out to look at.
func TestReportGolden(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not found (Debian: apt-get install poppler-utils); the report's first page is not compared with its golden image")
	}
	summary, records := fixedReport()
	data := mustRenderPDF(t, "Acme Corp", time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC), summary, records, nil)
	matchesGolden(t, data, "testdata/report.golden.png", "report")
}

// TestReportCharts: the first page carries both charts with their titles,
// and an untracked company's chart says so.
func TestReportCharts(t *testing.T) {
	summary, records := fixedReport()
	page := flat(mustPageTexts(t, mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil))[0])
	for _, want := range []string{"Patent count per scheduled run", "Analyses per month", "alert", "search failed"} {
		if !strings.Contains(page, want) {
			t.Errorf("the first page lacks %q: %s", want, page)
		}
	}
	summary.Tracked, summary.Runs = false, nil
	page = flat(mustPageTexts(t, mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil))[0])
	if !strings.Contains(page, "Not tracked: no scheduled runs") {
		t.Errorf("an untracked company's chart does not say so: %s", page)
	}
}
