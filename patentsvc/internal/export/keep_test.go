package export_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// pageRows returns each page's lines of text, top to bottom, without the
// "Page N" footer, as poppler's pdftotext -layout reads them.
func pageRows(tb testing.TB, data []byte) [][]string {
	tb.Helper()
	return pdftest.PageRows(tb, data)
}

// assertHeadingsKept fails the test when a page's last line is a heading
// (a line isHeading says is one) or a heading has fewer than two lines
// after it on its page. It returns how many headings it saw.
func assertHeadingsKept(t *testing.T, pages [][]string, isHeading func(string) bool) int {
	t.Helper()
	seen := 0
	for p, rows := range pages {
		for i, row := range rows {
			if !isHeading(row) {
				continue
			}
			seen++
			if after := len(rows) - 1 - i; after < 2 {
				t.Errorf("page %d: heading %q has %d lines after it on the page; the page ends:\n%s",
					p+1, row, after, strings.Join(rows[max(0, len(rows)-5):], "\n"))
			}
		}
	}
	return seen
}

// TestPDFHeadingsKeptWithText: a heading is never the last line of a
// page: each keeps at least two lines of what follows it. The analyses
// put their headings at every height of a page (filler of 0 to 44 lines
// of text and 0 to 6 of code before each), followed by a paragraph, a
// list, a code block, a table, a quote or another heading; the section
// headings move with them.
func TestPDFHeadingsKeptWithText(t *testing.T) {
	follow := []string{
		"A paragraph of text that is long enough to wrap over more than one line of the page, " +
			"so that the heading has two lines of it to keep, and then a few more words to be sure.",
		"- first item of a list\n- second item of a list\n- third item",
		"```\ncode line one\ncode line two\ncode line three\n```",
		"| Patent | Focus |\n|---|---|\n| US1 | cells |\n| US2 | packs |",
		"> A quoted paragraph\n>\n> and a second quoted paragraph",
		"### Sub %d\n\nThe text under the sub-heading, one line.\n\nAnd a second paragraph.",
		"1. numbered\n2. list",
	}
	var records []patent.AnalysisRecord
	isHeading := map[string]bool{}
	const n = 160
	for i := range n {
		// Lines of text (14 pt) and of code (11.5 pt) move the heading
		// down the page in steps of half a point.
		var b strings.Builder
		for j := range (i * 7) % 45 {
			fmt.Fprintf(&b, "Filler %d.%d\\\n", i, j)
		}
		b.WriteString("end of filler\n\n```\n")
		for j := range (i / 3) % 7 {
			fmt.Fprintf(&b, "code filler %d.%d\n", i, j)
		}
		b.WriteString("```\n\n")
		fmt.Fprintf(&b, "## Heading %d\n\n", i)
		f := follow[i%len(follow)]
		if strings.Contains(f, "%d") {
			f = fmt.Sprintf(f, i)
			isHeading[fmt.Sprintf("Sub %d", i)] = true
		}
		b.WriteString(f + "\n")
		isHeading[fmt.Sprintf("Heading %d", i)] = true
		isHeading[fmt.Sprintf("Analysis %d of %d: portfolio", i+1, n)] = true
		records = append(records, patent.AnalysisRecord{AnalysisType: "portfolio", Model: "m", Response: b.String(),
			Timestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	summary := patent.ReportSummary{Total: n, Types: []string{"portfolio"}, Models: []string{"m"}}
	data := mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)
	savePDF(t, "headings.pdf", data)
	pages := pageRows(t, data)
	if len(pages) < 20 {
		t.Fatalf("%d pages, want many", len(pages))
	}
	seen := assertHeadingsKept(t, pages, func(s string) bool { return isHeading[s] })
	if seen != len(isHeading) {
		t.Errorf("found %d of the %d headings", seen, len(isHeading))
	}
}

// TestPDFPartHeadingsKept: the report's own headings (Portfolio,
// Tracking, Analyses, the portfolio's charts and table) stay with what
// follows them whatever the number of patents pushes them down to.
func TestPDFPartHeadingsKept(t *testing.T) {
	parts := map[string]bool{"Portfolio": true, "Tracking": true, "Analyses": true, "Patents analysed": true,
		"CPC classes, share of the search results": true, "Analysis 1 of 1: portfolio": true, "Key themes": true}
	for n := 0; n <= len(fixedPatents); n++ {
		summary, records := fixedReport(n, true)
		data := mustRenderPDF(t, "Acme Corp", time.Now(), summary, records, nil)
		if seen := assertHeadingsKept(t, pageRows(t, data), func(s string) bool { return parts[s] }); seen < 5 {
			t.Errorf("%d patents: found %d headings, want at least 5", n, seen)
		}
	}
}
