package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// trackingRunRow is one scheduled run of a tracked company (migration
// 0007). The rows are inserted by RecordRun and RecordFailure only, in
// the transaction that records the run.
type trackingRunRow struct {
	ID               int64 `gorm:"primaryKey"`
	TrackedCompanyID int64
	RunAt            time.Time
	PatentCount      *int // nil: the search failed
	Success          bool
	Alert            bool
}

func (trackingRunRow) TableName() string { return "tracking_runs" }

func (r trackingRunRow) toDomain() patent.TrackingRun {
	return patent.TrackingRun{RunAt: r.RunAt.UTC(), PatentCount: r.PatentCount, Success: r.Success, Alert: r.Alert}
}

// TrackingHistory returns the company tracked under name, in any letter
// case, and its scheduled runs at or after since, oldest first (ties in
// the order they were recorded). It is the series of GET
// /admin/tracked/{company_name}/history and of the PDF report's patent
// count chart. Returns patent.ErrNotFound when the company is not tracked.
//
// The history is that of the current tracking: a company untracked and
// tracked again starts with no runs (decisions.md; migration 0007).
func (s *Store) TrackingHistory(ctx context.Context, name patent.CompanyName, since time.Time) (patent.TrackedCompany, []patent.TrackingRun, error) {
	db := s.db.WithContext(ctx)
	tc, err := trackedByName(db, name)
	if err != nil {
		return patent.TrackedCompany{}, nil, fmt.Errorf("history of %q: %w", name, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	var rows []trackingRunRow
	if err := db.Where("tracked_company_id = ? AND run_at >= ?", tc.ID, utc(since)).Order("run_at, id").Find(&rows).Error; err != nil {
		return patent.TrackedCompany{}, nil, fmt.Errorf("history of %q: %w", name, err)
	}
	runs := make([]patent.TrackingRun, len(rows))
	for i, r := range rows {
		runs[i] = r.toDomain()
	}
	return tc.toDomain(), runs, nil
}

// pruneBatch is the most rows one statement of PruneTrackingRuns deletes:
// a first prune after a long time (or after TRACKING_HISTORY_DAYS was
// lowered) takes many short transactions instead of one long one that
// would hold SQLite's one writer, or a large PostgreSQL lock set, for long.
const pruneBatch = 1000

// PruneTrackingRuns deletes the tracking runs before before, in batches of
// pruneBatch rows, each its own statement, and returns how many. It stops
// at the first error (the rows deleted until then stay deleted) or when
// ctx ends.
func (s *Store) PruneTrackingRuns(ctx context.Context, before time.Time) (int64, error) {
	before = utc(before)
	var total int64
	for {
		res := s.db.WithContext(ctx).Exec(`DELETE FROM tracking_runs WHERE id IN
			(SELECT id FROM tracking_runs WHERE run_at < ? ORDER BY run_at, id LIMIT ?)`, before, pruneBatch)
		if res.Error != nil {
			return total, fmt.Errorf("prune tracking runs: %w", res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < pruneBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("prune tracking runs: %w", err)
		}
	}
}

// AnalysesPerMonth counts the company's non-cached analyses (exact name,
// any letter case, as the exports match it) since since, per calendar
// month in UTC ("YYYY-MM", as /analytics/trends counts them), from since's
// month to now's, oldest first, months without analyses included with a
// count of 0. Key is the company as given. It is the series of the PDF
// report's analyses-per-month chart.
//
// The months are computed here, not by SQL date functions, so PostgreSQL
// and SQLite agree; the analysis times are read through a cursor, so
// memory stays flat however many there are.
func (s *Store) AnalysesPerMonth(ctx context.Context, company string, since time.Time) ([]patent.MonthCount, error) {
	since = utc(since)
	end := utc(s.now())
	first := time.Date(since.Year(), since.Month(), 1, 0, 0, 0, 0, time.UTC)
	var out []patent.MonthCount
	index := map[string]int{}
	for m := first; !m.After(end); m = m.AddDate(0, 1, 0) {
		index[m.Format("2006-01")] = len(out)
		out = append(out, patent.MonthCount{Month: m.Format("2006-01"), Key: company})
	}
	rows, err := s.db.WithContext(ctx).Model(&analysisRow{}).Select("analyzed_at").
		Where("NOT cached AND lower(company_name) = lower(?) AND analyzed_at >= ? AND analyzed_at <= ?", company, since, end).Rows()
	if err != nil {
		return nil, fmt.Errorf("analyses per month of %q: %w", company, err)
	}
	defer rows.Close()
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			return nil, fmt.Errorf("analyses per month of %q: %w", company, err)
		}
		if i, ok := index[at.UTC().Format("2006-01")]; ok {
			out[i].Count++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analyses per month of %q: %w", company, err)
	}
	return out, nil
}
