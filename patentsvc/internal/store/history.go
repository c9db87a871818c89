package store

import (
	"context"
	"fmt"
	"strconv"
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
	// NewPatents (their details), NewPatentIDs, DroppedPatents and
	// Changed: migration 0011 (JSON, facts.go).
	NewPatents     *string
	NewPatentIDs   *string
	DroppedPatents *string
	Changed        bool
}

func (trackingRunRow) TableName() string { return "tracking_runs" }

func (r trackingRunRow) toDomain() patent.TrackingRun {
	return patent.TrackingRun{RunAt: r.RunAt.UTC(), PatentCount: r.PatentCount, Success: r.Success, Alert: r.Alert,
		NewPatents: readIDs(r.NewPatentIDs), DroppedPatents: readIDs(r.DroppedPatents)}
}

// TrackingHistory returns the company tracked under name, in any letter
// case, and its scheduled runs at or after since, oldest first (ties in
// the order they were recorded). It is the series of GET
// /admin/tracked/{company_name}/history and of the PDF report's patent
// count chart. Returns patent.ErrNotFound when the company is not tracked.
//
// The history is that of the current tracking: a company untracked and
// tracked again starts with no runs (decisions.md; migration 0007).
func (s Tracking) TrackingHistory(ctx context.Context, name patent.CompanyName, since time.Time) (patent.TrackedCompany, []patent.TrackingRun, error) {
	db := s.db.WithContext(ctx)
	tc, err := trackedByName(db, name)
	if err != nil {
		return patent.TrackedCompany{}, nil, fmt.Errorf("history of %q: %w", name, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	var rows []trackingRunRow
	// The new patents' details are the digest's (ListChanges): a history
	// point names their ids only.
	if err := db.Omit("new_patents").Where("tracked_company_id = ? AND run_at >= ?", tc.ID, utc(since)).Order("run_at, id").Find(&rows).Error; err != nil {
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
func (s Tracking) PruneTrackingRuns(ctx context.Context, before time.Time) (int64, error) {
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
func (s Analyses) AnalysesPerMonth(ctx context.Context, company string, since time.Time) ([]patent.MonthCount, error) {
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

// changeRow is a changed run as ListChanges reads it.
type changeRow struct {
	ID             int64
	RunAt          time.Time
	CompanyName    string
	NewPatents     *string
	DroppedPatents *string
}

func (r changeRow) key() pageKey[int64] {
	return pageKey[int64]{At: r.RunAt, ID: r.ID, Size: int64(len(deref(r.NewPatents)) + len(deref(r.DroppedPatents)))}
}

// ListChanges returns a page of the scheduled runs at or after since that
// found new or dropped patents, of every company still tracked, newest
// first (ties by id, newest first): at most limit runs and PageBytes of
// patent lists (at least one run). next is the cursor of the following
// page, "" on the last; a cursor that does not decode starts from the
// beginning, as every listing's (the changes digest, GET /admin/changes).
func (s Tracking) ListChanges(ctx context.Context, since time.Time, limit int, after string) ([]patent.PatentChangeRun, string, error) {
	const from = "tracking_runs r JOIN tracked_companies t ON t.id = r.tracked_company_id"
	q := s.db.WithContext(ctx).Table(from).Where("r.changed AND r.run_at >= ?", utc(since))
	if c, ok := decodeCursor(after); ok {
		if id, err := strconv.ParseInt(c.id, 10, 64); err == nil {
			q = q.Where("(r.run_at, r.id) < (?, ?)", c.at, id)
		}
	}
	var keys []pageKey[int64]
	err := q.Select("r.run_at AS at, r.id AS id, COALESCE(octet_length(r.new_patents), 0) + COALESCE(octet_length(r.dropped_patents), 0) AS size").
		Order("r.run_at DESC, r.id DESC").Limit(limit + 1).Scan(&keys).Error
	if err != nil {
		return nil, "", fmt.Errorf("list patent changes: %w", err)
	}
	rows, next, err := listPage(keys, limit, func(ids []int64) ([]changeRow, error) {
		var rows []changeRow
		err := s.db.WithContext(ctx).Table(from).
			Select("r.id, r.run_at, t.company_name, r.new_patents, r.dropped_patents").
			Where("r.id IN ?", ids).Order("r.run_at DESC, r.id DESC").Scan(&rows).Error
		return rows, err
	}, changeRow.key)
	if err != nil {
		return nil, "", fmt.Errorf("list patent changes: %w", err)
	}
	out := make([]patent.PatentChangeRun, len(rows))
	for i, r := range rows {
		out[i] = patent.PatentChangeRun{CompanyName: r.CompanyName, RunAt: r.RunAt.UTC(),
			Changes: patent.PatentChanges{New: readPublications(r.NewPatents), Dropped: readIDs(r.DroppedPatents)}}
	}
	return out, next, nil
}
