package export_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// comparedFixtures are five companies as their stored portfolio analyses
// leave them: the largest CPC lists the facts allow (ten codes each),
// overlapping in part, ten years of publications, long names.
func comparedFixtures() []patent.ComparedCompany {
	codes := [][]string{
		{"H01M", "B60L", "H02J", "G01R", "Y02E", "Y02T", "H01G", "C01B", "B60K", "H02M"},
		{"H01M", "B60L", "G06F", "H04L", "Y02E", "G06N", "B60W", "H02J", "G05D", "B62D"},
		{"G06F", "H04L", "G06N", "H04W", "G06Q", "G06T", "H04N", "G10L", "G06V", "H04B"},
		{"A61B", "A61K", "G16H", "A61M", "C12Q", "G01N", "A61P", "C07K", "G06N", "G06F"},
		{"B60L", "B60W", "B62D", "G05D", "B60K", "F16H", "B60R", "G01S", "G08G", "H01M"},
	}
	names := []string{"Acme Battery Corp", "Globex Mobility Systems International Holdings", "Initech", "Umbrella Health & Life Sciences Inc.", "Soylent Motors"}
	var out []patent.ComparedCompany
	for i, cs := range codes {
		var shares []patent.CPCShare
		for j, c := range cs {
			shares = append(shares, patent.CPCShare{Code: c, Share: float64(int((0.62-0.055*float64(j))*1000+float64(i*7))) / 1000})
		}
		var years []patent.YearCount
		for y := 2017; y <= 2026; y++ {
			years = append(years, patent.YearCount{Year: y, Count: 1 + (y*7+i*3)%9})
		}
		out = append(out, patent.ComparedCompany{Name: names[i], AnalysedAt: time.Date(2026, 11, 20+i, 8, 0, 0, 0, time.UTC), PatentCount: 10,
			Portfolio: patent.Portfolio{CPC: shares, ByYear: years, Granted: 14 + i, Applications: 6 - i}})
	}
	return out
}

func renderComparison(t *testing.T, n int) []byte {
	t.Helper()
	c := patent.Compare(comparedFixtures()[:n], time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	var buf bytes.Buffer
	if err := export.ComparisonPDF(&buf, export.PDFOptions{}, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestComparisonGolden renders the comparison of 2, 3 and 5 companies
// (the most: ten CPC codes each, the largest list the facts allow) and
// compares each first page, as pdftoppm draws it, with its golden image
// (less than 1% of the ink may differ). -update rewrites them;
// -chartout=DIR writes the pages out to look at.
func TestComparisonGolden(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not found (Debian: apt-get install poppler-utils); the comparison's pages are not compared with their golden images")
	}
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			matchesGoldenPage(t, renderComparison(t, n), 1, fmt.Sprintf("testdata/compare-%d.golden.png", n), fmt.Sprintf("compare-%d", n))
		})
	}
}

// TestComparisonParts: the report says what the contract lists, in its
// order: the title with the names, the generation date, the companies, the
// similarity matrix and each pair's shared classes, the CPC shares side by
// side, the publication years, the distinctive classes; five companies
// of ten codes each keep to a few pages.
func TestComparisonParts(t *testing.T) {
	data := renderComparison(t, 5)
	pages := mustPageTexts(t, data)
	text := flat(strings.Join(pages, " "))
	rest := text
	for _, want := range []string{"Portfolio comparison: Acme Battery Corp, Globex Mobility Systems International Holdings, Initech,",
		"Generated 2026-11-29 10:00 UTC", "Companies", "Acme Battery Corp Analysed 2026-11-20; 10 patents analysed; 20 search results: 14 granted, 6 applications",
		"Similarity", "1.000", "Acme Battery Corp and 0.600; shared: H01M 62.0% / 62.7%",
		"Initech and Soylent 0.000; no class in common",
		"CPC classes side by side", "H01M", "Search results per publication year", "2026",
		"Distinctive classes", "Acme Battery Corp G01R", "Globex Mobility Systems none: another company has each of its classes"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Errorf("the comparison lacks %q after what comes before it:\n%s", want, text)
			continue
		}
		rest = rest[i+len(want):]
	}
	if len(pages) > 5 {
		t.Errorf("five companies take %d pages, want at most 5", len(pages))
	}
}

// TestComparisonFilename: the names lowercased, spaces as underscores,
// joined by _vs_, then the date.
func TestComparisonFilename(t *testing.T) {
	c := patent.Comparison{Companies: []patent.ComparedCompany{{Name: "Acme Corp"}, {Name: "Globex"}, {Name: "AT&T Inc."}},
		Generated: time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("", -3600))}
	if got, want := export.ComparisonFilename(c), "compare-acme_corp_vs_globex_vs_at&t_inc.-2026-11-30.pdf"; got != want {
		t.Errorf("ComparisonFilename = %q, want %q", got, want)
	}
}
