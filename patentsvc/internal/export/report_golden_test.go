package export_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// fixedPatents are ten patents as a portfolio analysis keeps them: titles
// short and long (one wraps over three lines), hyphenated words, links
// short, long (with a query) and missing.
var fixedPatents = []patent.PatentRef{
	{PatentID: "US11394072B2", Title: "Battery module with interleaved cooling plates", PublicationDate: "2022-07-19",
		PDFLink: "https://patentimages.storage.googleapis.com/8a/1f/3c/0e2b4d6f8a9c1e/US11394072.pdf"},
	{PatentID: "US11762912B2", Title: "Lithium-ion pouch cell with a state-of-the-art ceramic-coated separator", PublicationDate: "2023-09-19",
		PDFLink: "https://patentimages.storage.googleapis.com/b3/ce/2a/b85df572cd035c/US11762912.pdf"},
	{PatentID: "US12110498B2", Title: "Charging control for a vehicle battery", PublicationDate: "2024-10-08",
		PDFLink: "https://patentimages.storage.googleapis.com/4d/77/90/aa12bc34de56f0/US12110498.pdf"},
	{PatentID: "US11477246B2", Title: "Method and system for estimating the state of charge of a battery pack comprising a plurality of series-connected cells, " +
		"using a reduced-order electrochemical model whose parameters are adapted online from measured terminal voltages and currents",
		PublicationDate: "2022-10-18", PDFLink: "https://patentimages.storage.googleapis.com/00/11/22/33445566778899/US11477246.pdf"},
	{PatentID: "US11363389B2", Title: "Thermal runaway detection", PublicationDate: "2022-06-14",
		PDFLink: "https://example.org/download?file=US11363389B2.pdf&source=" + strings.Repeat("x", 40)},
	{PatentID: "US11190026B2", Title: "Electrode slurry mixing apparatus", PublicationDate: "2021-11-30", PDFLink: ""},
	{PatentID: "US11151203B2", Title: "Cell-to-pack structure", PublicationDate: "2021-10-19",
		PDFLink: "https://patentimages.storage.googleapis.com/9e/8d/7c/6b5a4f3e2d1c0b/US11151203.pdf"},
	{PatentID: "US11029680B2", Title: "Silicon-graphite anode", PublicationDate: "2021-06-08",
		PDFLink: "https://patentimages.storage.googleapis.com/12/34/56/789abcdef01234/US11029680.pdf"},
	{PatentID: "US20090043621A1", Title: "Solid electrolyte interphase additive", PublicationDate: "2009-02-12",
		PDFLink: "https://patentimages.storage.googleapis.com/ab/cd/ef/0123456789abcd/US20090043621A1.pdf"},
	{PatentID: "CN104766014B", Title: "Battery management system", PublicationDate: "2018-05-04",
		PDFLink: "https://patentimages.storage.googleapis.com/fe/dc/ba/9876543210fedc/CN104766014B.pdf"},
}

// fixedPortfolio is the portfolio facts of a search that returned the
// first n of fixedPatents (n 0 is none: no facts).
func fixedPortfolio(n int) (*patent.Portfolio, []patent.PatentRef, time.Time) {
	if n == 0 {
		return nil, nil, time.Time{}
	}
	p := &patent.Portfolio{
		CPC: []patent.CPCShare{{Code: "H01M", Share: 0.412}, {Code: "B60L", Share: 0.187}, {Code: "H02J", Share: 0.126},
			{Code: "G01R", Share: 0.094}, {Code: "Y02E", Share: 0.071}, {Code: "Y02T", Share: 0.052}, {Code: "H01G", Share: 0.031}, {Code: "C01B", Share: 0.012}},
		Countries: []patent.CountryCount{{Country: "US", Active: 9, Inactive: 1}, {Country: "CN", Active: 6, Inactive: 2},
			{Country: "EP", Active: 5}, {Country: "JP", Active: 3, Inactive: 1}, {Country: "KR", Inactive: 2}, {Country: "DE", Active: 1}},
		ByYear:  []patent.YearCount{{Year: 2018, Count: 1}, {Year: 2021, Count: 3}, {Year: 2022, Count: 4}, {Year: 2023, Count: 1}, {Year: 2024, Count: 3}},
		Granted: 8, Applications: 4,
	}
	if n == 1 {
		p = &patent.Portfolio{CPC: []patent.CPCShare{{Code: "H01M", Share: 0.75}, {Code: "B60L", Share: 0.25}},
			ByYear: []patent.YearCount{{Year: 2022, Count: 1}}, Countries: []patent.CountryCount{{Country: "US", Active: 1}}, Granted: 1}
	}
	return p, fixedPatents[:n], time.Date(2026, 8, 31, 9, 30, 0, 0, time.UTC)
}

// fixedReport is a report with everything its first pages show: the
// portfolio facts of n patents, the chart of a tracked company (runs with
// alerts and a failed search) when tracked, twelve months of analyses and
// an analysis in Markdown.
func fixedReport(n int, tracked bool) (patent.ReportSummary, []patent.AnalysisRecord) {
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
	summary := patent.ReportSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{"openai/gpt-4o-mini"}, Months: months}
	if tracked {
		summary.Tracked, summary.Runs = true, runs
	}
	summary.Portfolio, summary.Patents, summary.PortfolioAt = fixedPortfolio(n)
	rec := patent.AnalysisRecord{
		CompanyName: "Acme Corp", AnalysisType: "portfolio", Model: "openai/gpt-4o-mini",
		Timestamp: time.Date(2026, 8, 31, 9, 30, 0, 0, time.UTC),
		Response: "## Key themes\n\n- **Battery cells**: pouch cells with *interleaved* cooling layers, a state-of-the-art design\n" +
			"- Charging control, see `US8427103B2`\n\n| Patent | Focus |\n|---|---|\n| US11394072B2 | cell assembly |\n",
	}
	return summary, []patent.AnalysisRecord{rec}
}

// TestReportGolden renders fixed reports and compares their first pages,
// as pdftoppm draws them, with golden images in testdata (the same
// measure as TestChartGolden: less than 1% of the ink may differ): a
// company with no portfolio facts, one with one patent and a tracked one
// with ten, whose portfolio goes on over page 2. -update rewrites them;
// -chartout=DIR writes the pages out to look at.
func TestReportGolden(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not found (Debian: apt-get install poppler-utils); the report's pages are not compared with their golden images")
	}
	for _, tt := range []struct {
		name     string
		patents  int
		tracked  bool
		goldens  []string // per page, from the first
		minPages int
	}{
		{"no patents", 0, false, []string{"testdata/report-0-patents.golden.png"}, 1},
		{"one patent", 1, false, []string{"testdata/report-1-patent.golden.png"}, 1},
		{"ten patents", 10, true, []string{"testdata/report.golden.png", "testdata/report-page2.golden.png"}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			summary, records := fixedReport(tt.patents, tt.tracked)
			data := mustRenderPDF(t, "Acme Corp", time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC), summary, records, nil)
			if n := len(mustPageTexts(t, data)); n < tt.minPages {
				t.Fatalf("%d pages, want at least %d", n, tt.minPages)
			}
			for i, golden := range tt.goldens {
				matchesGoldenPage(t, data, i+1, golden, fmt.Sprintf("report-%d-patents-page%d", tt.patents, i+1))
			}
		})
	}
}

// TestReportParts: the portfolio comes first, then the tracking chart of
// a tracked company only, then the analyses with their chart per month;
// an untracked company has no tracking chart and no empty chart box, and
// a company without portfolio facts gets a line saying so.
func TestReportParts(t *testing.T) {
	all := func(n int, tracked bool) string {
		t.Helper()
		summary, records := fixedReport(n, tracked)
		return flat(strings.Join(mustPageTexts(t, mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)), " "))
	}
	text := all(10, true)
	rest := text // each part is looked for after the one before
	for _, want := range []string{"Portfolio", "Patents analysed 10", "Search results 12: 8 granted, 4 applications",
		"Countries US 9 active, 1 inactive; CN 6 active, 2 inactive; EP 5 active; JP 3 active, 1 inactive; KR 2 inactive; DE 1 active",
		"CPC classes", "H01M", "41.2%", "C01B", "1.2%", "Search results per publication year", "2018", "2024",
		"Patents analysed", "US11394072B2", "CN104766014B",
		"Tracking", "Patent count per scheduled run", "alert", "search failed",
		"Analyses", "Total Analyses 1", "Analyses per month", "Analysis 1 of 1: portfolio"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Errorf("tracked, 10 patents: the report lacks %q after what comes before it: %s", want, text)
			continue
		}
		rest = rest[i+len(want):]
	}

	for _, n := range []int{0, 1} {
		text := all(n, false)
		for _, unwanted := range []string{"Tracking", "Patent count per scheduled run", "Not tracked", "No runs yet", "No analyses in the period"} {
			if strings.Contains(text, unwanted) {
				t.Errorf("untracked, %d patents: the report shows %q: %s", n, unwanted, text)
			}
		}
		if !strings.Contains(text, "Analyses per month") {
			t.Errorf("untracked, %d patents: no chart of analyses per month: %s", n, text)
		}
	}
	if text := all(0, false); !strings.Contains(text, "Portfolio No portfolio facts: none of this company's stored portfolio analyses has them.") ||
		strings.Contains(text, "CPC classes") || strings.Contains(text, "Patents analysed") {
		t.Errorf("no portfolio facts: the report reads %s", text)
	}
	if text := all(1, false); !strings.Contains(text, "Patents analysed 1") || !strings.Contains(text, "Search results 1: 1 granted, 0 applications") ||
		!strings.Contains(text, "H01M 75.0%") || !strings.Contains(text, "US11394072B2 Battery module with interleaved cooling plates") {
		t.Errorf("one patent: the report reads %s", text)
	}
}

// TestReportPatentLinks: each patent's PDF link is shown short and opens
// the whole URL through a link annotation; a link that is not http or
// https is shown but not linked.
func TestReportPatentLinks(t *testing.T) {
	summary, records := fixedReport(10, false)
	summary.Patents = append(summary.Patents[:10:10], patent.PatentRef{PatentID: "XX1", Title: "Odd link", PDFLink: "javascript:alert(1)"})
	data := mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)
	text := flat(strings.Join(mustPageTexts(t, data), " "))
	for _, p := range summary.Patents {
		if p.PDFLink == "" {
			continue
		}
		annotation := "/URI (" + p.PDFLink + ")"
		if linked := strings.Contains(string(data), annotation); linked != strings.HasPrefix(p.PDFLink, "https://") {
			t.Errorf("%s: annotation %q there: %v", p.PatentID, annotation, linked)
		}
	}
	for _, want := range []string{"patentimages.storage.googleapis.com/…/US11394072.pdf", "example.org/download?…", "javascript:alert(1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks the link text %q: %s", want, text)
		}
	}
}

// TestReportPatentsCapped: the table lists at most MaxReportPatents
// patents and says how many more there are.
func TestReportPatentsCapped(t *testing.T) {
	summary, records := fixedReport(1, false)
	summary.Patents = nil
	for i := range export.MaxReportPatents + 5 {
		summary.Patents = append(summary.Patents, patent.PatentRef{PatentID: fmt.Sprintf("US%08dB2", i), Title: "Patent", PublicationDate: "2024-01-01"})
	}
	text := flat(strings.Join(mustPageTexts(t, mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)), " "))
	last := fmt.Sprintf("US%08dB2", export.MaxReportPatents-1)
	if !strings.Contains(text, last) || strings.Contains(text, fmt.Sprintf("US%08dB2", export.MaxReportPatents)) {
		t.Errorf("the table does not end at patent %s", last)
	}
	if !strings.Contains(text, "and 5 more patents, not listed") {
		t.Errorf("the report does not say how many patents are left out: %s", text)
	}
}
