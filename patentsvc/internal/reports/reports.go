// Package reports is the core of what the service tells about stored
// analyses without running one: a company's analyses for the CSV export,
// its PDF report (the summary, the chart series, the newest analyses), and
// the analytics over all companies (trends per month, usage). It reads the
// database through the interfaces it declares; the CSV and PDF formats are
// package export's, which the HTTP layer renders.
package reports

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Analyses reads the stored analyses; store.Analyses implements it.
type Analyses interface {
	// HasAnalyses reports whether the company has a stored non-cached
	// analysis.
	HasAnalyses(ctx context.Context, company string) (bool, error)
	// EachAnalysis calls fn with every stored non-cached analysis of the
	// company, newest first, until fn returns an error (returned).
	EachAnalysis(ctx context.Context, company string, fn func(patent.AnalysisRecord) error) error
	// AnalysesPerMonth counts the company's analyses per month since since.
	AnalysesPerMonth(ctx context.Context, company string, since time.Time) ([]patent.MonthCount, error)
	// Trends counts the non-cached analyses per month since since, by
	// company and by analysis type.
	Trends(ctx context.Context, since time.Time) (byCompany, byType []patent.MonthCount, err error)
	// UsageSince sums the analyses since since.
	UsageSince(ctx context.Context, since time.Time) (patent.Usage, error)
}

// History reads a tracked company's runs; store.Tracking implements it.
type History interface {
	// TrackingHistory returns the tracked company and its runs since
	// since, oldest first; a kind of patent.ErrNotFound when it is not
	// tracked.
	TrackingHistory(ctx context.Context, name patent.CompanyName, since time.Time) (patent.TrackedCompany, []patent.TrackingRun, error)
}

// Service composes the reports. It is safe for concurrent use.
type Service struct {
	analyses Analyses
	history  History
	now      func() time.Time
}

// New returns the reports core over the stored analyses and the tracking
// history.
func New(analyses Analyses, history History, now func() time.Time) *Service {
	return &Service{analyses: analyses, history: history, now: now}
}

// NoAnalysesError is the answer for a company without a stored analysis
// to export: a kind of patent.ErrNotFound whose text is the message the
// contract gives ("No analysis results found for <company>").
func NoAnalysesError(name patent.CompanyName) error {
	return patent.NewKindError(patent.ErrNotFound, fmt.Sprintf("No analysis results found for %s", name))
}

// Exportable returns nil when the company has an analysis to export, and
// NoAnalysesError when it has none.
func (s *Service) Exportable(ctx context.Context, name patent.CompanyName) error {
	ok, err := s.analyses.HasAnalyses(ctx, name.String())
	if err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	if !ok {
		return NoAnalysesError(name)
	}
	return nil
}

// EachAnalysis calls fn with every stored non-cached analysis of the
// company, newest first (the CSV export's rows), until fn fails.
func (s *Service) EachAnalysis(ctx context.Context, name patent.CompanyName, fn func(patent.AnalysisRecord) error) error {
	return s.analyses.EachAnalysis(ctx, name.String(), fn)
}

// Report composes the company's PDF report as of now: the summary over
// all of its analyses (count, types, models, the portfolio facts of the
// newest portfolio analysis that kept them), the newest
// patent.ReportMaxAnalyses analyses, and the chart series over the
// patent.ReportChartMonths months before the current one and the current
// one (the analyses per month; the scheduled runs when it is tracked).
// A company without analyses is NoAnalysesError.
func (s *Service) Report(ctx context.Context, name patent.CompanyName) (patent.Report, error) {
	if err := s.Exportable(ctx, name); err != nil {
		return patent.Report{}, err
	}
	r := patent.Report{Company: name.String(), Generated: s.now().UTC()}
	types, models := map[string]bool{}, map[string]bool{}
	facts := false // the summary has the portfolio facts
	err := s.analyses.EachAnalysis(ctx, name.String(), func(a patent.AnalysisRecord) error {
		r.Summary.Total++
		types[a.AnalysisType] = true
		if a.Model != "" {
			models[a.Model] = true
		}
		if len(r.Analyses) < patent.ReportMaxAnalyses {
			r.Analyses = append(r.Analyses, a)
		}
		// The report opens with the portfolio facts of the newest portfolio
		// analysis that kept them (analyses come newest first; those stored
		// before the facts were kept have none).
		if !facts && a.AnalysisType == patent.AnalysisPortfolio && (a.Portfolio != nil || len(a.Patents) > 0) {
			r.Summary.Portfolio, r.Summary.Patents, r.Summary.PortfolioAt = a.Portfolio, a.Patents, a.Timestamp
			facts = true
		}
		return nil
	})
	if err != nil {
		return patent.Report{}, fmt.Errorf("report %s: %w", name, err)
	}
	r.Summary.Types, r.Summary.Models = sortedKeys(types), sortedKeys(models)
	if err := s.chartSeries(ctx, name, &r); err != nil {
		return patent.Report{}, fmt.Errorf("report %s: %w", name, err)
	}
	return r, nil
}

// errFound stops an iteration over a company's analyses at the one sought.
var errFound = errors.New("reports: found")

// Compare compares the portfolios of names (2 to 5, in request order, as
// patent.ParseCompared gives them) from stored analyses alone, no search
// and no model call: each company is its latest stored non-cached
// portfolio analysis that kept its portfolio facts. The first company
// without one is NoAnalysesError.
func (s *Service) Compare(ctx context.Context, names []patent.CompanyName) (patent.Comparison, error) {
	companies := make([]patent.ComparedCompany, 0, len(names))
	for _, name := range names {
		var found *patent.ComparedCompany
		err := s.analyses.EachAnalysis(ctx, name.String(), func(a patent.AnalysisRecord) error {
			if a.AnalysisType != patent.AnalysisPortfolio || a.Portfolio == nil {
				return nil
			}
			found = &patent.ComparedCompany{Name: name.String(), AnalysedAt: a.Timestamp, PatentCount: len(a.Patents), Portfolio: *a.Portfolio}
			return errFound // analyses come newest first: this is the latest
		})
		if err != nil && !errors.Is(err, errFound) {
			return patent.Comparison{}, fmt.Errorf("compare %s: %w", name, err)
		}
		if found == nil {
			return patent.Comparison{}, NoAnalysesError(name)
		}
		companies = append(companies, *found)
	}
	return patent.Compare(companies, s.now().UTC()), nil
}

// chartSeries reads the report's chart series, over the
// patent.ReportChartMonths months before r.Generated's and its own.
func (s *Service) chartSeries(ctx context.Context, name patent.CompanyName, r *patent.Report) error {
	g := r.Generated
	start := time.Date(g.Year(), g.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -patent.ReportChartMonths, 0)
	_, runs, err := s.history.TrackingHistory(ctx, name, start)
	switch {
	case errors.Is(err, patent.ErrNotFound): // not tracked: no tracking chart
	case err != nil:
		return err
	default:
		r.Summary.Tracked, r.Summary.Runs = true, runs
	}
	r.Summary.Months, err = s.analyses.AnalysesPerMonth(ctx, name.String(), start)
	return err
}

// Trends counts the non-cached analyses per calendar month (UTC) over the
// last days days, by company and by analysis type.
func (s *Service) Trends(ctx context.Context, days int) (byCompany, byType []patent.MonthCount, err error) {
	return s.analyses.Trends(ctx, s.now().AddDate(0, 0, -days))
}

// Usage sums the analyses of the last days days.
func (s *Service) Usage(ctx context.Context, days int) (patent.Usage, error) {
	return s.analyses.UsageSince(ctx, s.now().AddDate(0, 0, -days))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
