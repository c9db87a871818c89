package export_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The CJK names in the analysis below, and what the report shows of them
// without a fallback font.
const (
	cjkNames      = "比亚迪股份有限公司, 华为技术有限公司, トヨタ自動車株式会社, 삼성전자 주식회사"
	longWord      = "Pneumonoultramicroscopicsilicovolcanoconiosis"
	scriptLiteral = `<script>alert("pwned")</script>`
)

var cjkSubstituted = regexp.MustCompile(`[^\s,]`).ReplaceAllString(cjkNames, "\uFFFD")

// markdownAnalysis uses every construct the report renders.
var markdownAnalysis = `# Portfolio overview

Acme's **portfolio** centres on *battery chemistry*, with ***one*** outlier and ` + "`inline_code()`" + ` in it.
See [the lead patent](https://patents.google.com/patent/US10906193B2/en) and <https://example.com/auto>.

## Key themes

- Cathode materials
  - Lithium iron phosphate
    - Coated particles
- Separators with a ceramic coating, a bullet long enough to wrap onto a second line under its own text rather than under the bullet
- Assignees: ` + cjkNames + `

1. First filing
2. Second filing
   1. Continuation in part

### Filings

| Patent | Title | Assignee | Filed | Claims | Notes |
|---|---|---|:-:|--:|---|
| US10906193B2 | Battery cell with a long descriptive title that has to wrap in its column | 比亚迪股份有限公司 | 2021-03-04 | 20 | ` + strings.Repeat(longWord, 3) + ` |
| CN114000001A | 锂离子电池的正极材料 | 华为技术有限公司 | 2022-01-15 | 9 | pending |

> A quoted remark from the analyst,
> on two lines.

` + "```go\nfunc main() {\n\tfmt.Println(\"hello, 特許\")\n}\n```" + `

` + scriptLiteral + `

Inline <b>HTML</b> &amp; an entity stay as written; \*escaped\* stars do not.

A very long word: ` + strings.Repeat(longWord, 8) + `

---

#### Closing

Final paragraph.
`

// mustTestFonts returns the Go fonts with the subset of the CJK fallback
// font that the tests use (testdata/fonts/README.md).
func mustTestFonts(tb testing.TB) *export.Fonts {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fonts", "DroidSansFallback-subset.ttf"))
	if err != nil {
		tb.Fatal(err)
	}
	fonts, err := export.NewFonts(data, nil)
	if err != nil {
		tb.Fatalf("NewFonts: %v", err)
	}
	return fonts
}

// mustRenderWith renders a report of the one analysis text with opts.
func mustRenderWith(tb testing.TB, opts export.PDFOptions, text string) []byte {
	tb.Helper()
	records := []patent.AnalysisRecord{{
		AnalysisType: patent.AnalysisPortfolio,
		Model:        "openai/gpt-4o-mini",
		Response:     text,
		Timestamp:    time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
	}}
	var buf bytes.Buffer
	at := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	if err := export.PDFWithOptions(&buf, opts, "Acme Corp", at, patent.ReportSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{"openai/gpt-4o-mini"}}, records, nil); err != nil {
		tb.Fatalf("PDFWithOptions: %v", err)
	}
	return buf.Bytes()
}

// mustPdftotext runs poppler's pdftotext on data with args, or skips the
// test when it is not installed (Debian package poppler-utils).
func mustPdftotext(t *testing.T, data []byte, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not on PATH (Debian package poppler-utils): the rendered text is not checked")
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append(append([]string{"-enc", "UTF-8"}, args...), path, "-")...).Output()
	if err != nil {
		t.Fatalf("pdftotext %v: %v", args, err)
	}
	return string(out)
}

func TestPDFMarkdown(t *testing.T) {
	for _, tt := range []struct {
		name  string
		opts  export.PDFOptions
		cjk   string // how the CJK names come back
		noCJK bool   // the CJK characters must not appear
	}{
		{"go fonts", export.PDFOptions{}, cjkSubstituted, true},
		{"cjk font", export.PDFOptions{Fonts: mustTestFonts(t)}, cjkNames, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := mustRenderWith(t, tt.opts, markdownAnalysis)
			savePDF(t, "markdown-"+strings.ReplaceAll(tt.name, " ", "-")+".pdf", data)
			raw := mustPdftotext(t, data)
			text := flat(raw)

			// No Markdown syntax is left.
			for _, markup := range []string{"##", "**", "|---", "---|", "```", "- Cathode", "> A quoted", "](", "<https://", "\\*"} {
				if strings.Contains(text, markup) {
					t.Errorf("report shows Markdown %q", markup)
				}
			}
			for _, want := range []string{
				"Portfolio overview", "Key themes", "Filings", "Closing",
				"Acme's portfolio centres on battery chemistry, with one outlier and inline_code() in it.",
				"See the lead patent (https://patents.google.com/patent/US10906193B2/en) and https://example.com/auto.",
				"• Cathode materials", "◦ Lithium iron phosphate", "▪ Coated particles",
				"1. First filing", "2. Second filing", "1. Continuation in part",
				"A quoted remark from the analyst, on two lines.",
				`func main() {`, `fmt.Println("hello,`, // the code block
				scriptLiteral, // raw HTML, as written
				"Inline <b>HTML</b> &amp; an entity stay as written; *escaped* stars do not.",
				"Final paragraph.",
				"Assignees: " + tt.cjk,
			} {
				if !strings.Contains(text, want) {
					t.Errorf("report lacks %q; it reads:\n%s", want, raw)
				}
			}
			if tt.noCJK && strings.ContainsAny(text, "比亚迪华为トヨタ삼성") {
				t.Error("report claims to show CJK characters without a font that has them")
			}
			// The long words are all there, cut across lines.
			joined := strings.Join(strings.Fields(raw), "")
			if !strings.Contains(joined, strings.Repeat(longWord, 8)) {
				t.Error("the very long word is not all there")
			}
			if !strings.Contains(joined, strings.Repeat(longWord, 3)) {
				t.Error("the long word in the table is not all there")
			}
			// The table is laid out as columns: the header cells on one line.
			if !regexp.MustCompile(`Patent\s+Title\s+Assignee\s+Filed\s+Claims\s+Notes`).MatchString(raw) {
				t.Errorf("table header not on one line:\n%s", raw)
			}
			assertInsideMargins(t, data)
		})
	}
}

// assertInsideMargins checks with pdftotext -bbox that every word of
// every page is drawn inside the margins.
func assertInsideMargins(t *testing.T, data []byte) {
	t.Helper()
	out := mustPdftotext(t, data, "-bbox")
	const pageWidth, pageHeight, margin = 595.28, 841.89, 56.7
	attr := regexp.MustCompile(`(xMin|yMin|xMax|yMax)="([0-9.]+)"`)
	words := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "<word ") {
			continue
		}
		words++
		v := map[string]float64{}
		for _, m := range attr.FindAllStringSubmatch(line, -1) {
			f, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			v[m[1]] = f
		}
		if v["xMin"] < margin-0.5 || v["xMax"] > pageWidth-margin+0.5 || v["yMin"] < 0 || v["yMax"] > pageHeight {
			t.Errorf("word outside the margins (x %.1f to %.1f, y %.1f to %.1f): %s", v["xMin"], v["xMax"], v["yMin"], v["yMax"], line)
		}
	}
	if words == 0 {
		t.Errorf("pdftotext -bbox found no words")
	}
}

// TestPDFWideTable: a table of many columns, and one whose cells are all
// long, still fit the page; one of too many columns becomes records.
func TestPDFWideTable(t *testing.T) {
	var wide, many strings.Builder
	wide.WriteString("|" + strings.Repeat(" Column heading |", 8) + "\n|" + strings.Repeat("---|", 8) + "\n")
	for range 3 {
		wide.WriteString("|" + strings.Repeat(" "+strings.Repeat("cellvalue", 6)+" |", 8) + "\n")
	}
	for i := range 30 {
		fmt.Fprintf(&many, "| h%d ", i)
	}
	many.WriteString("|\n" + strings.Repeat("|---", 30) + "|\n")
	for i := range 30 {
		fmt.Fprintf(&many, "| v%d ", i)
	}
	many.WriteString("|\n")
	data := mustRenderWith(t, export.PDFOptions{}, wide.String()+"\n\n"+many.String())
	savePDF(t, "wide-table.pdf", data)
	text := flat(mustPdftotext(t, data))
	for _, want := range []string{"h0: v0", "h29: v29"} {
		if !strings.Contains(text, want) {
			t.Errorf("table of 30 columns lacks the record line %q:\n%s", want, text)
		}
	}
	assertInsideMargins(t, data)
}

// TestPDFRealCJKFont renders with the full font the image ships, where
// the machine has it (TEST_PDF_FONT_PATH; .ci/run installs Debian's
// fonts-droid-fallback and sets it). REQUIRE_PDF_FONT=1 turns the skip
// into a failure.
func TestPDFRealCJKFont(t *testing.T) {
	path := os.Getenv("TEST_PDF_FONT_PATH")
	if path == "" {
		path = "/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("REQUIRE_PDF_FONT") == "1" {
			t.Fatalf("REQUIRE_PDF_FONT=1 but the font cannot be read: %v", err)
		}
		t.Skipf("no CJK font at %s (Debian package fonts-droid-fallback; or set TEST_PDF_FONT_PATH): %v", path, err)
	}
	fonts, err := export.NewFonts(data, nil)
	if err != nil {
		t.Fatalf("NewFonts(%s): %v", path, err)
	}
	const text = "特許 比亚迪股份有限公司 华为 トヨタ自動車株式会社 삼성전자 주식회사 현대자동차 — 🚀"
	pdf := mustRenderWith(t, export.PDFOptions{Fonts: fonts}, "**"+text+"**\n\n"+text)
	savePDF(t, "real-cjk-font.pdf", pdf)
	got := flat(mustPdftotext(t, pdf))
	want := strings.Replace(text, "🚀", "\uFFFD", 1) // no emoji in either font
	if strings.Count(got, want) != 2 {
		t.Errorf("report shows %q, want %q twice (bold and regular)", got, want)
	}
}

func TestNewFontsRefuses(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "fonts", "DroidSansFallback-subset.ttf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name           string
		regular, bold  []byte
		format         bool // the error wraps ErrFontFormat
		wantErrContain string
	}{
		{name: "collection", regular: append([]byte("ttcf"), make([]byte, 64)...), format: true, wantErrContain: ".ttc"},
		{name: "cff", regular: append([]byte("OTTO"), make([]byte, 64)...), format: true, wantErrContain: "CFF"},
		{name: "not a font", regular: []byte("<html>not a font at all</html>"), format: true, wantErrContain: "not a TrueType font"},
		{name: "short", regular: []byte{0, 1}, format: true, wantErrContain: "2 bytes"},
		{name: "bad bold", regular: good, bold: []byte("ttcf and more bytes"), format: true, wantErrContain: "fallback bold font"},
		{name: "truncated", regular: good[:400], wantErrContain: "fallback font"},
		{name: "bold alone", bold: good, wantErrContain: "without the fallback font"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := export.NewFonts(tt.regular, tt.bold)
			if err == nil {
				t.Fatal("NewFonts accepted it")
			}
			if tt.format != errors.Is(err, export.ErrFontFormat) {
				t.Errorf("NewFonts error %v: wraps ErrFontFormat %v, want %v", err, !tt.format, tt.format)
			}
			if !strings.Contains(err.Error(), tt.wantErrContain) {
				t.Errorf("NewFonts error %q, want it to mention %q", err, tt.wantErrContain)
			}
		})
	}
	if _, err := export.NewFonts(good, good); err != nil {
		t.Errorf("NewFonts(font, font): %v", err)
	}
}

// TestPDFFontsShared: one Fonts draws many reports at once (the server's
// handlers share it); run with -race.
func TestPDFFontsShared(t *testing.T) {
	opts := export.PDFOptions{Fonts: mustTestFonts(t)}
	want := flat(strings.Join(mustPageTexts(t, mustRenderWith(t, opts, markdownAnalysis)), " "))
	var wg sync.WaitGroup
	results := make([][]byte, 8)
	for i := range results {
		wg.Go(func() {
			var buf bytes.Buffer
			records := []patent.AnalysisRecord{{AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", Response: markdownAnalysis,
				Timestamp: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}}
			at := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
			summary := patent.ReportSummary{Total: 1, Types: []string{"portfolio"}, Models: []string{"openai/gpt-4o-mini"}}
			if err := export.PDFWithOptions(&buf, opts, "Acme Corp", at, summary, records, nil); err != nil {
				t.Errorf("PDFWithOptions: %v", err)
			}
			results[i] = buf.Bytes()
		})
	}
	wg.Wait()
	for i, data := range results {
		if got := flat(strings.Join(mustPageTexts(t, data), " ")); got != want {
			t.Errorf("report %d drawn at the same time as others reads differently", i)
		}
	}
}
