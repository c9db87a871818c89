package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// compareBody is GET /compare's body.
type compareBody struct {
	Companies []struct {
		CompanyName  string    `json:"company_name"`
		AnalysedAt   time.Time `json:"analysed_at"`
		PatentCount  int       `json:"patent_count"`
		Granted      int       `json:"granted"`
		Applications int       `json:"applications"`
		CPC          []struct {
			Code  string  `json:"code"`
			Share float64 `json:"share"`
		} `json:"cpc"`
		ByYear    []struct{ Year, Count int } `json:"by_year"`
		Countries []struct {
			Country string `json:"country"`
		} `json:"countries"`
	} `json:"companies"`
	Pairs []struct {
		A, B       string
		Similarity float64 `json:"similarity"`
		Shared     []struct {
			Code   string  `json:"code"`
			ShareA float64 `json:"share_a"`
			ShareB float64 `json:"share_b"`
		} `json:"shared"`
	} `json:"pairs"`
	Distinctive []struct {
		CompanyName string `json:"company_name"`
		Codes       []struct {
			Code string `json:"code"`
		} `json:"codes"`
	} `json:"distinctive"`
	Timestamp time.Time `json:"timestamp"`
}

// seedCompared stores, for each of five companies, a portfolio analysis
// with the largest CPC list the facts allow (patent.MaxPortfolioCPC codes,
// the longest codes a summary gives: full groups), fifty countries and
// thirty years, overlapping in part; and one company with no facts.
func seedCompared(t *testing.T, en *env) []string {
	t.Helper()
	names := []string{"Acme Corp", "Globex", "Initech", "Umbrella", "Soylent"}
	for i, name := range names {
		p := &patent.Portfolio{Granted: 10 + i, Applications: 5}
		for j := range patent.MaxPortfolioCPC {
			p.CPC = append(p.CPC, patent.CPCShare{Code: fmt.Sprintf("H%02dL%04d/%05d", (i+j)%12, j, i*100+j), Share: 0.9 - 0.08*float64(j)})
		}
		for y := range 30 {
			p.ByYear = append(p.ByYear, patent.YearCount{Year: 1997 + y, Count: y%7 + 1})
		}
		for c := range patent.MaxPortfolioCountries {
			p.Countries = append(p.Countries, patent.CountryCount{Country: fmt.Sprintf("C%02d", c), Active: c, Inactive: 1})
		}
		add(t, en, patent.AnalysisRecord{CompanyName: name, AnalysisType: patent.AnalysisPortfolio, Response: "facts",
			Timestamp: epoch.Add(-time.Duration(i) * time.Hour), Portfolio: p, Patents: []patent.PatentRef{{PatentID: "US1"}, {PatentID: "US2"}}})
	}
	// Globex's newest facts share two codes with Acme's
	// (H00L0000/00000, H01L0001/00001) and have one of their own.
	add(t, en, patent.AnalysisRecord{CompanyName: "Globex", AnalysisType: patent.AnalysisPortfolio, Response: "newer facts",
		Timestamp: epoch, Portfolio: &patent.Portfolio{CPC: []patent.CPCShare{
			{Code: "H00L0000/00000", Share: 0.5}, {Code: "H01L0001/00001", Share: 0.3}, {Code: "B60L", Share: 0.4}}}})
	add(t, en, patent.AnalysisRecord{CompanyName: "Hooli", AnalysisType: patent.AnalysisPortfolio, Response: "no facts", Timestamp: epoch})
	return names
}

func add(t *testing.T, en *env, a patent.AnalysisRecord) {
	t.Helper()
	if _, err := en.st.Analyses().CreateAnalysis(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

func compareTarget(path string, names ...string) string {
	q := url.Values{"company": names}
	return path + "?" + q.Encode()
}

// TestCompare: two companies compared from their latest stored facts, in
// request order, names matched case-insensitively, with a similarity
// neither 0 nor 1, the codes they share and those only one has; no search
// and no model call; on both databases.
func TestCompare(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tb := en.newUser(t, "ada@example.com")
		seedCompared(t, en)
		serp, llm := en.world.Serp.CallCount(), en.world.LLM.CallCount()

		rec := en.do(t, request{target: compareTarget("/compare", "globex", "ACME CORP"), token: tb.AccessToken})
		wantStatus(t, rec, http.StatusOK)
		var c compareBody
		decode(t, rec, &c)
		if len(c.Companies) != 2 || c.Companies[0].CompanyName != "globex" || c.Companies[1].CompanyName != "ACME CORP" {
			t.Fatalf("companies = %+v", c.Companies)
		}
		if g := c.Companies[0]; len(g.CPC) != 3 || g.CPC[0].Code != "H00L0000/00000" || !g.AnalysedAt.Equal(epoch) || g.CPC == nil || g.ByYear == nil || g.Countries == nil {
			t.Errorf("Globex = %+v, want its newest facts", g)
		}
		if a := c.Companies[1]; a.PatentCount != 2 || a.Granted != 10 || a.Applications != 5 || len(a.CPC) != 10 || len(a.ByYear) != 30 {
			t.Errorf("Acme = %+v", a)
		}
		if len(c.Pairs) != 1 || c.Pairs[0].A != "globex" || c.Pairs[0].B != "ACME CORP" || c.Pairs[0].Similarity <= 0 || c.Pairs[0].Similarity >= 1 {
			t.Errorf("pairs = %+v, want one strictly between 0 and 1", c.Pairs)
		}
		// By the smaller share: H00L0000/00000 (0.5 and 0.9) before
		// H01L0001/00001 (0.3 and 0.82).
		if s := c.Pairs[0].Shared; len(s) != 2 || s[0].Code != "H00L0000/00000" || s[0].ShareA != 0.5 || s[0].ShareB != 0.9 || s[1].Code != "H01L0001/00001" {
			t.Errorf("shared = %+v, want H00L0000/00000 at 0.5 and 0.9, then H01L0001/00001", s)
		}
		if d := c.Distinctive; len(d) != 2 || len(d[0].Codes) != 1 || d[0].Codes[0].Code != "B60L" || len(d[1].Codes) != 8 {
			t.Errorf("distinctive = %+v", d)
		}
		if !c.Timestamp.Equal(epoch) {
			t.Errorf("timestamp = %v, want the clock's %v", c.Timestamp, epoch)
		}
		if en.world.Serp.CallCount() != serp || en.world.LLM.CallCount() != llm {
			t.Errorf("the comparison called the search (%d) or the model (%d)", en.world.Serp.CallCount()-serp, en.world.LLM.CallCount()-llm)
		}
	})
}

// TestCompareBounded: five companies whose stored portfolios carry the
// largest lists the facts allow answer within a bounded size: ten codes
// each, ten pairs, each pair's shared codes at most ten.
func TestCompareBounded(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	names := seedCompared(t, en)
	rec := en.do(t, request{target: compareTarget("/compare", names...), token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	var c compareBody
	decode(t, rec, &c)
	if len(c.Companies) != 5 || len(c.Pairs) != 10 || len(c.Distinctive) != 5 {
		t.Fatalf("%d companies, %d pairs, %d distinctive", len(c.Companies), len(c.Pairs), len(c.Distinctive))
	}
	for _, co := range c.Companies {
		if len(co.CPC) > patent.MaxPortfolioCPC {
			t.Errorf("%s: %d codes", co.CompanyName, len(co.CPC))
		}
	}
	for _, p := range c.Pairs {
		if len(p.Shared) > patent.MaxPortfolioCPC {
			t.Errorf("%s-%s: %d shared", p.A, p.B, len(p.Shared))
		}
	}
	// 5 x (10 codes, 30 years, 50 countries) and 10 pairs: the bound a
	// stored portfolio allows, measured.
	if n := rec.Body.Len(); n > 48<<10 {
		t.Errorf("the body is %d bytes for the largest comparison, want under 48 KiB", n)
	}
	t.Logf("the largest comparison: %d bytes", rec.Body.Len())

	pdf := en.do(t, request{target: compareTarget("/compare/pdf", names...), token: tb.AccessToken})
	wantStatus(t, pdf, http.StatusOK)
	if n := pdf.Body.Len(); n > 512<<10 {
		t.Errorf("the largest comparison's PDF is %d bytes, want under 512 KiB", n)
	}
}

// TestCompareRefused: fewer than two, more than five, the same company
// twice or an invalid name are 422 on company; a company without stored
// facts is 404 naming the first such company; no token is 401; the PDF
// answers alike.
func TestCompareRefused(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedCompared(t, en)
	for _, path := range []string{"/compare", "/compare/pdf"} {
		for _, names := range [][]string{nil, {"Acme Corp"}, {"Acme Corp", "Globex", "Initech", "Umbrella", "Soylent", "Hooli"},
			{"Acme Corp", "acme corp"}, {"Acme Corp", "-bad"}, {"Acme Corp", strings.Repeat("x", 101)}} {
			rec := en.do(t, request{target: compareTarget(path, names...), token: tb.AccessToken})
			wantStatus(t, rec, http.StatusUnprocessableEntity)
			if !strings.Contains(rec.Body.String(), `"company"`) {
				t.Errorf("%s %v: 422 without the field: %s", path, names, rec.Body)
			}
		}
		for names, missing := range map[[3]string]string{{"Acme Corp", "Nobody", "Hooli"}: "Nobody", {"Hooli", "Acme Corp", "Nobody"}: "Hooli"} {
			rec := en.do(t, request{target: compareTarget(path, names[:]...), token: tb.AccessToken})
			wantStatus(t, rec, http.StatusNotFound)
			if !strings.Contains(rec.Body.String(), `"No analysis results found for `+missing+`"`) {
				t.Errorf("%s %v: %s, want the 404 for %s", path, names, rec.Body, missing)
			}
		}
		wantStatus(t, en.do(t, request{target: compareTarget(path, "Acme Corp", "Globex")}), http.StatusUnauthorized)
	}
}

// TestComparePDF: the report as an attachment named after the companies
// and the date, a PDF whose first page has the title.
func TestComparePDF(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedCompared(t, en)
	rec := en.do(t, request{target: compareTarget("/compare/pdf", "Acme Corp", "Globex"), token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	want := "attachment; filename=compare-acme_corp_vs_globex-" + epoch.Format("2006-01-02") + ".pdf"
	if rec.Header().Get("Content-Type") != "application/pdf" || rec.Header().Get("Content-Disposition") != want {
		t.Errorf("headers %q %q, want application/pdf and %s", rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"), want)
	}
	if !bytes.HasPrefix(rec.Body.Bytes(), []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.20q", rec.Body.Bytes())
	}
}
