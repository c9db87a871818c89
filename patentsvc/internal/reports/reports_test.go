package reports_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/reports"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var ctx = context.Background()

// now is the reports' clock: late in November 2026.
var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// TestReport: the report's summary counts every non-cached analysis of
// the company (and no other company's, and no cached one), lists the
// distinct types and models sorted, takes the portfolio facts of the
// newest portfolio analysis that kept them, renders at most
// patent.ReportMaxAnalyses analyses newest first, and has the tracking
// chart only for a tracked company.
func TestReport(t *testing.T) {
	st := storetest.Open(t, store.SQLite, clock)
	facts := &patent.Portfolio{Granted: 2}
	add := func(a patent.AnalysisRecord) {
		t.Helper()
		if _, err := st.Analyses().CreateAnalysis(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// Oldest first: a portfolio analysis with facts, one without (stored
	// before facts were kept), a patent analysis; another company's and a
	// cached one, which the report must not count.
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Model: "m/b", Response: "old facts",
		Timestamp: now.AddDate(0, -2, 0), Portfolio: facts, Patents: []patent.PatentRef{{PatentID: "US1"}}})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Model: "m/a", Response: "no facts",
		Timestamp: now.AddDate(0, -1, 0)})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisSinglePatent, PatentID: "US2", Model: "m/a", Response: "one patent",
		Timestamp: now.Add(-time.Hour)})
	add(patent.AnalysisRecord{CompanyName: "Other", AnalysisType: patent.AnalysisPortfolio, Model: "m/z", Response: "x", Timestamp: now})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Model: "m/cached", Response: "x", Cached: true, Timestamp: now})

	rep := reports.New(st.Analyses(), st.Tracking(), clock)
	r, err := rep.Report(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.Company != "Acme" || !r.Generated.Equal(now) {
		t.Errorf("report of %q at %v, want Acme at %v", r.Company, r.Generated, now)
	}
	if r.Summary.Total != 3 || len(r.Analyses) != 3 {
		t.Errorf("total %d, %d analyses; want 3 and 3", r.Summary.Total, len(r.Analyses))
	}
	if want := []string{patent.AnalysisPortfolio, patent.AnalysisSinglePatent}; !slices.Equal(r.Summary.Types, want) {
		t.Errorf("types %v, want %v", r.Summary.Types, want)
	}
	if want := []string{"m/a", "m/b"}; !slices.Equal(r.Summary.Models, want) {
		t.Errorf("models %v, want %v", r.Summary.Models, want)
	}
	if r.Analyses[0].Response != "one patent" || r.Analyses[2].Response != "old facts" {
		t.Errorf("analyses not newest first: %q ... %q", r.Analyses[0].Response, r.Analyses[2].Response)
	}
	if r.Summary.Portfolio == nil || r.Summary.Portfolio.Granted != 2 || len(r.Summary.Patents) != 1 ||
		!r.Summary.PortfolioAt.Equal(now.AddDate(0, -2, 0)) {
		t.Errorf("portfolio facts %+v, %v at %v; want the oldest analysis's, the only one that kept them", r.Summary.Portfolio, r.Summary.Patents, r.Summary.PortfolioAt)
	}
	if r.Summary.Tracked || len(r.Summary.Runs) != 0 {
		t.Errorf("an untracked company's report has tracking: %v, %d runs", r.Summary.Tracked, len(r.Summary.Runs))
	}
	var counted int64
	for _, m := range r.Summary.Months {
		counted += m.Count
	}
	if counted != 3 {
		t.Errorf("the analyses chart counts %d over its months, want 3: %+v", counted, r.Summary.Months)
	}

	if _, err := storetest.Track(ctx, st, "Acme", now); err != nil {
		t.Fatal(err)
	}
	if r, err := rep.Report(ctx, "ACME"); err != nil || !r.Summary.Tracked {
		t.Errorf("a tracked company's report: tracked %v, %v; want its tracking part", r.Summary.Tracked, err)
	}
}

// TestReportBounds: a company with more than patent.ReportMaxAnalyses
// analyses gets the newest of them in its report, and all of them counted.
func TestReportBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a thousand analyses")
	}
	st := storetest.Open(t, store.SQLite, clock)
	n := patent.ReportMaxAnalyses + 5
	for i := range n {
		a := patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Model: "m",
			Response: fmt.Sprint(i), Timestamp: now.Add(time.Duration(i-n) * time.Minute)}
		if _, err := st.Analyses().CreateAnalysis(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	r, err := reports.New(st.Analyses(), st.Tracking(), clock).Report(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Total != n || len(r.Analyses) != patent.ReportMaxAnalyses {
		t.Fatalf("total %d, %d rendered; want %d and %d", r.Summary.Total, len(r.Analyses), n, patent.ReportMaxAnalyses)
	}
	if first := r.Analyses[0].Response; first != fmt.Sprint(n-1) {
		t.Errorf("the first rendered analysis is #%s, want the newest, #%d", first, n-1)
	}
}

// TestNothingToExport: a company without analyses is a kind of
// patent.ErrNotFound whose text is the contract's message, for the CSV
// export and the report alike.
func TestNothingToExport(t *testing.T) {
	st := storetest.Open(t, store.SQLite, clock)
	rep := reports.New(st.Analyses(), st.Tracking(), clock)
	const want = "No analysis results found for Nobody Inc"
	if err := rep.Exportable(ctx, "Nobody Inc"); !errors.Is(err, patent.ErrNotFound) || err.Error() != want {
		t.Errorf("Exportable = %v, want %q (ErrNotFound)", err, want)
	}
	if _, err := rep.Report(ctx, "Nobody Inc"); !errors.Is(err, patent.ErrNotFound) || err.Error() != want {
		t.Errorf("Report = %v, want %q (ErrNotFound)", err, want)
	}
}

// TestAnalyticsPeriods: trends and usage count the analyses of the last
// days days, as of the reports' clock.
func TestAnalyticsPeriods(t *testing.T) {
	st := storetest.Open(t, store.SQLite, clock)
	for _, age := range []time.Duration{time.Hour, 10 * 24 * time.Hour, 40 * 24 * time.Hour} {
		a := patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Model: "m", Response: "x", Timestamp: now.Add(-age)}
		if _, err := st.Analyses().CreateAnalysis(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	rep := reports.New(st.Analyses(), st.Tracking(), clock)
	for days, want := range map[int]int64{1: 1, 30: 2, 365: 3} {
		u, err := rep.Usage(ctx, days)
		if err != nil || u.Total != want {
			t.Errorf("Usage(%d days) = %d, %v; want %d", days, u.Total, err, want)
		}
		byCompany, _, err := rep.Trends(ctx, days)
		var n int64
		for _, m := range byCompany {
			n += m.Count
		}
		if err != nil || n != want {
			t.Errorf("Trends(%d days) count %d, %v; want %d", days, n, err, want)
		}
	}
}

// TestCompare: each company is its latest non-cached portfolio analysis
// that kept its facts (not a newer one without facts, not a cached one,
// not a single-patent analysis), names match case-insensitively, companies
// stay in request order, and the first without such an analysis is the
// 404 error naming it.
func TestCompare(t *testing.T) {
	st := storetest.Open(t, store.SQLite, clock)
	add := func(a patent.AnalysisRecord) {
		t.Helper()
		if _, err := st.Analyses().CreateAnalysis(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	old := &patent.Portfolio{CPC: []patent.CPCShare{{Code: "A61B", Share: 1}}}
	acme := &patent.Portfolio{CPC: []patent.CPCShare{{Code: "H04L", Share: 0.6}, {Code: "G06F", Share: 0.4}}, Granted: 3}
	globex := &patent.Portfolio{CPC: []patent.CPCShare{{Code: "H04L", Share: 0.5}, {Code: "B60L", Share: 0.5}}}
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "old", Timestamp: now.AddDate(0, -2, 0), Portfolio: old})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "latest with facts", Timestamp: now.AddDate(0, -1, 0),
		Portfolio: acme, Patents: []patent.PatentRef{{PatentID: "US1"}, {PatentID: "US2"}}})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "no facts", Timestamp: now.Add(-time.Hour)})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisSinglePatent, PatentID: "US3", Response: "one", Timestamp: now})
	add(patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "cached", Cached: true, Timestamp: now, Portfolio: old})
	add(patent.AnalysisRecord{CompanyName: "Globex", AnalysisType: patent.AnalysisPortfolio, Response: "g", Timestamp: now.Add(-time.Minute), Portfolio: globex})
	add(patent.AnalysisRecord{CompanyName: "Initech", AnalysisType: patent.AnalysisPortfolio, Response: "no facts", Timestamp: now})

	rep := reports.New(st.Analyses(), st.Tracking(), clock)
	c, err := rep.Compare(ctx, []patent.CompanyName{"globex", "ACME"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Companies) != 2 || c.Companies[0].Name != "globex" || c.Companies[1].Name != "ACME" || !c.Generated.Equal(now) {
		t.Fatalf("companies = %+v at %v", c.Companies, c.Generated)
	}
	a := c.Companies[1]
	if a.Portfolio.Granted != 3 || a.PatentCount != 2 || !a.AnalysedAt.Equal(now.AddDate(0, -1, 0)) {
		t.Errorf("Acme = %+v, want its latest analysis with facts", a)
	}
	if want := patent.Similarity(globex.CPC, acme.CPC); len(c.Pairs) != 1 || c.Pairs[0].Similarity != want || want == 0 || want == 1 {
		t.Errorf("pairs = %+v, want one at %v", c.Pairs, want)
	}

	for names, missing := range map[[2]patent.CompanyName]string{{"Acme", "Initech"}: "Initech", {"Nobody", "Initech"}: "Nobody"} {
		_, err := rep.Compare(ctx, names[:])
		if !errors.Is(err, patent.ErrNotFound) || err.Error() != "No analysis results found for "+missing {
			t.Errorf("Compare(%v) = %v, want the 404 for %s", names, err, missing)
		}
	}
}
