package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Trends counts the non-cached analyses since since, per calendar month
// (UTC) and company, and per month and analysis type, oldest month first.
// The months are computed here, not by SQL date functions, so PostgreSQL
// and SQLite agree: one range-bounded GROUP BY per month.
func (s Analyses) Trends(ctx context.Context, since time.Time) (byCompany, byType []patent.MonthCount, err error) {
	since = utc(since)
	end := utc(s.now())
	for m := time.Date(since.Year(), since.Month(), 1, 0, 0, 0, 0, time.UTC); m.Before(end) || m.Equal(end); m = m.AddDate(0, 1, 0) {
		lo, hi := maxTime(m, since), m.AddDate(0, 1, 0)
		month := m.Format("2006-01")
		var rows []struct {
			CompanyName  string
			AnalysisType string
			N            int64
		}
		err := s.db.WithContext(ctx).Model(&analysisRow{}).
			Select("company_name, analysis_type, COUNT(*) AS n").
			Where("NOT cached AND analyzed_at >= ? AND analyzed_at < ?", lo, hi).
			Group("company_name, analysis_type").Scan(&rows).Error
		if err != nil {
			return nil, nil, fmt.Errorf("trends for %s: %w", month, err)
		}
		perCompany := map[string]int64{}
		perType := map[string]int64{}
		for _, r := range rows {
			perCompany[r.CompanyName] += r.N
			perType[r.AnalysisType] += r.N
		}
		byCompany = append(byCompany, sortedCounts(month, perCompany)...)
		byType = append(byType, sortedCounts(month, perType)...)
	}
	return byCompany, byType, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sortedCounts lists a month's counts, largest first, then by key.
func sortedCounts(month string, counts map[string]int64) []patent.MonthCount {
	out := make([]patent.MonthCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, patent.MonthCount{Month: month, Key: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// UsageSince sums the analyses since since. Cached analyses count only in
// Cached; everything else is over non-cached ones.
func (s Analyses) UsageSince(ctx context.Context, since time.Time) (patent.Usage, error) {
	since = utc(since)
	u := patent.Usage{ByType: map[string]int64{}, ByModel: map[string]int64{}}
	base := func() *gorm.DB { return s.db.WithContext(ctx).Model(&analysisRow{}).Where("analyzed_at >= ?", since) }
	var totals struct {
		Total, Cached, Prompt, Completion int64
	}
	err := base().Select(`COUNT(CASE WHEN NOT cached THEN 1 END) AS total,
		COUNT(CASE WHEN cached THEN 1 END) AS cached,
		COALESCE(SUM(CASE WHEN NOT cached THEN prompt_tokens ELSE 0 END), 0) AS prompt,
		COALESCE(SUM(CASE WHEN NOT cached THEN completion_tokens ELSE 0 END), 0) AS completion`).Scan(&totals).Error
	if err != nil {
		return patent.Usage{}, fmt.Errorf("usage totals: %w", err)
	}
	u.Total, u.Cached, u.PromptTokens, u.CompletionTokens = totals.Total, totals.Cached, totals.Prompt, totals.Completion
	type kc struct {
		K string
		N int64
	}
	var rows []kc
	if err := base().Where("NOT cached").Select("analysis_type AS k, COUNT(*) AS n").Group("analysis_type").Scan(&rows).Error; err != nil {
		return patent.Usage{}, fmt.Errorf("usage by type: %w", err)
	}
	for _, r := range rows {
		u.ByType[r.K] = r.N
	}
	rows = nil
	if err := base().Where("NOT cached").Select("COALESCE(model, '') AS k, COUNT(*) AS n").Group("model").Scan(&rows).Error; err != nil {
		return patent.Usage{}, fmt.Errorf("usage by model: %w", err)
	}
	for _, r := range rows {
		u.ByModel[r.K] += r.N
	}
	rows = nil
	if err := base().Where("NOT cached AND company_name IS NOT NULL").Select("company_name AS k, COUNT(*) AS n").
		Group("company_name").Order("n DESC, k").Limit(10).Scan(&rows).Error; err != nil {
		return patent.Usage{}, fmt.Errorf("top companies: %w", err)
	}
	for _, r := range rows {
		u.TopCompanies = append(u.TopCompanies, patent.MonthCount{Key: r.K, Count: r.N})
	}
	return u, nil
}

// HasAnalyses reports whether the company (exact name, any letter case)
// has a stored non-cached analysis.
func (s Analyses) HasAnalyses(ctx context.Context, company string) (bool, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&analysisRow{}).Where("NOT cached AND lower(company_name) = lower(?)", company).
		Limit(1).Pluck("id", &ids).Error
	if err != nil {
		return false, fmt.Errorf("find analyses of %q: %w", company, err)
	}
	return len(ids) > 0, nil
}

// EachAnalysis calls fn with the company's non-cached analyses, newest
// first, reading them through a database cursor so memory stays flat
// however many there are. An error from fn stops the iteration and is
// returned.
func (s Analyses) EachAnalysis(ctx context.Context, company string, fn func(patent.AnalysisRecord) error) error {
	rows, err := s.db.WithContext(ctx).Model(&analysisRow{}).
		Where("NOT cached AND lower(company_name) = lower(?)", company).
		Order("analyzed_at DESC, id DESC").Rows()
	if err != nil {
		return fmt.Errorf("read analyses of %q: %w", company, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r analysisRow
		if err := s.db.ScanRows(rows, &r); err != nil {
			return fmt.Errorf("read analyses of %q: %w", company, err)
		}
		if err := fn(r.toDomain()); err != nil {
			return err
		}
	}
	return rows.Err()
}
