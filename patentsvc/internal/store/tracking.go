package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type trackedCompanyRow struct {
	ID              int64 `gorm:"primaryKey"`
	CompanyName     string
	LastPatentCount int
	LastAnalysisAt  *time.Time
	NextRunAt       time.Time
	CreatedAt       time.Time
	// ConsecutiveFailures: migration 0006.
	ConsecutiveFailures int
	// UnitID: the unit of its current due time (migration 0009).
	UnitID *int64
	// SeenSince: migration 0011.
	SeenSince *time.Time
}

func (trackedCompanyRow) TableName() string { return "tracked_companies" }

func (r trackedCompanyRow) toDomain() patent.TrackedCompany {
	t := patent.TrackedCompany{ID: r.ID, CompanyName: r.CompanyName, LastPatentCount: r.LastPatentCount,
		NextRunAt: r.NextRunAt.UTC(), CreatedAt: r.CreatedAt.UTC(), ConsecutiveFailures: r.ConsecutiveFailures}
	if r.LastAnalysisAt != nil {
		at := r.LastAnalysisAt.UTC()
		t.LastAnalysisAt = &at
	}
	return t
}

// ListTracked returns the tracked companies in the order they were added.
func (s Tracking) ListTracked(ctx context.Context) ([]patent.TrackedCompany, error) {
	var rows []trackedCompanyRow
	if err := s.db.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list tracked companies: %w", err)
	}
	out := make([]patent.TrackedCompany, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// CreateTracked starts tracking a company, due at first.DueAt, and queues
// first, the first scheduled run the tracking core composed, in the same
// transaction (decisions.md: the first run of a newly tracked company at
// once), with the company's id and the ids its alerts will have filled in,
// for whichever replica takes it up first. When a company of the same
// name, in any letter case, is tracked already, it returns a
// *patent.AlreadyTrackedError (a kind of patent.ErrConflict) carrying that
// company's current state.
//
// The insert skips a conflicting row instead of failing (a failed statement
// would end a PostgreSQL transaction), and the row it conflicted with is
// read in the same transaction; on PostgreSQL that row may be untracked
// between the two statements, and then the insert is tried again.
func (s Tracking) CreateTracked(ctx context.Context, name patent.CompanyName, first patent.ScheduledRun) (patent.TrackedCompany, error) {
	now := utc(s.now())
	var row trackedCompanyRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		for range 3 {
			row = trackedCompanyRow{CompanyName: name.String(), NextRunAt: utc(first.DueAt), CreatedAt: now}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 1 {
				_, err := s.queueRuns(ctx, tx, []trackedCompanyRow{row}, first.TraceParent)
				return err
			}
			cur, err := trackedByName(tx, name)
			if err == nil {
				return &patent.AlreadyTrackedError{Tracked: cur.toDomain()}
			}
			if !errors.Is(err, gorm.ErrRecordNotFound) {
				return err
			}
		}
		return patent.ErrConflict // tracked and untracked over and over meanwhile
	})
	if err != nil {
		return patent.TrackedCompany{}, fmt.Errorf("track %q: %w", name, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// queueRuns queues, in tx, the scheduled run of each company's current
// due time, with traceParent and the ids its alerts will have (reserved
// now: patent.ScheduledRun.AlertIDs), records the units on the companies
// and returns how many were queued anew (not queued already by another
// replica).
func (s *base) queueRuns(ctx context.Context, tx *gorm.DB, rows []trackedCompanyRow, traceParent string) (int, error) {
	ids, err := s.reserveAlertIDs(tx, len(rows)*patent.AlertsPerRun)
	if err != nil {
		return 0, err
	}
	units := make([]patent.Unit, len(rows))
	for i, r := range rows {
		units[i] = patent.ScheduledRun{TrackedID: r.ID, DueAt: utc(r.NextRunAt), TraceParent: traceParent, CompanyName: r.CompanyName,
			AlertIDs: ids[i*patent.AlertsPerRun : (i+1)*patent.AlertsPerRun]}
	}
	queued, err := s.enqueue(ctx, tx, 0, units...)
	if err != nil {
		return 0, err
	}
	fresh := 0
	for i, r := range rows {
		if !queued[i].duplicate {
			fresh++
		}
		if err := tx.Model(&trackedCompanyRow{}).Where("id = ?", r.ID).Update("unit_id", queued[i].id).Error; err != nil {
			return 0, err
		}
	}
	return fresh, nil
}

// ReserveAlertIDs reserves n alert ids (for the alerts of a scheduled run
// queued without them, by an older version).
func (s Tracking) ReserveAlertIDs(ctx context.Context, n int) ([]int64, error) {
	var ids []int64
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		var err error
		ids, err = s.reserveAlertIDs(tx, n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reserve alert ids: %w", err)
	}
	return ids, nil
}

// reserveAlertIDs takes n ids from the alerts' sequence in tx (PostgreSQL:
// the column's sequence, whose values are never handed out twice, even
// when tx rolls back; SQLite: its AUTOINCREMENT counter, moved on under
// the one writer SQLite allows). An alert stored later with one of them
// keeps it; the ids of alerts never raised are gaps.
func (s *base) reserveAlertIDs(tx *gorm.DB, n int) ([]int64, error) {
	if n <= 0 {
		return nil, nil
	}
	var ids []int64
	if s.dialect == Postgres {
		err := tx.Raw("SELECT nextval(pg_get_serial_sequence('alerts', 'id')) FROM generate_series(1, ?) ORDER BY 1", n).Scan(&ids).Error
		return ids, err
	}
	if err := tx.Exec(`INSERT INTO sqlite_sequence (name, seq) SELECT 'alerts', COALESCE((SELECT MAX(id) FROM alerts), 0)
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'alerts')`).Error; err != nil {
		return nil, err
	}
	var last int64
	if err := tx.Raw("UPDATE sqlite_sequence SET seq = seq + ? WHERE name = 'alerts' RETURNING seq", n).Scan(&last).Error; err != nil {
		return nil, err
	}
	for i := range n {
		ids = append(ids, last-int64(n)+1+int64(i))
	}
	return ids, nil
}

// trackedByName reads the company tracked under name in any letter case.
func trackedByName(tx *gorm.DB, name patent.CompanyName) (trackedCompanyRow, error) {
	var row trackedCompanyRow
	err := tx.Where("lower(company_name) = ?", name.Key()).Take(&row).Error
	return row, err
}

// DeleteTracked stops tracking the company whose name matches name in any
// letter case, and cancels its queued run (a run in progress is cancelled
// through River, and records nothing: the company is gone). Returns
// patent.ErrNotFound when none does.
func (s Tracking) DeleteTracked(ctx context.Context, name patent.CompanyName) error {
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		row, err := trackedByName(tx, name)
		if err != nil {
			return translate(err, patent.ErrNotFound, patent.ErrConflict)
		}
		if err := tx.Delete(&trackedCompanyRow{}, "id = ?", row.ID).Error; err != nil {
			return err
		}
		if row.UnitID == nil {
			return nil
		}
		sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
		if !ok {
			return fmt.Errorf("store: not a transaction (%T)", tx.Statement.ConnPool)
		}
		if _, err := s.units.JobCancelTx(ctx, sqlTx, *row.UnitID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("untrack %q: %w", name, err)
	}
	return nil
}

// TrackedCompany returns tracked company id, or patent.ErrNotFound when it
// is no longer tracked.
func (s Tracking) TrackedCompany(ctx context.Context, id int64) (patent.TrackedCompany, error) {
	var row trackedCompanyRow
	if err := s.db.WithContext(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return patent.TrackedCompany{}, fmt.Errorf("tracked company %d: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// QueueDue queues the scheduled run of up to limit tracked companies that
// are due and whose unit is no longer alive (it ran for an earlier due
// time, or River gave it up), oldest due first. It returns how many
// companies it looked at (limit means there may be more) and how many
// runs it queued anew. Replicas may call it at once: on PostgreSQL each
// locks the rows it takes (FOR UPDATE SKIP LOCKED) and skips the others',
// and a run queued twice for one due time is queued once (the queue's
// identity of a scheduled run is the company and the due time).
func (s Tracking) QueueDue(ctx context.Context, limit int) (seen, queued int, err error) {
	now := utc(s.now())
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []trackedCompanyRow
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		q := "SELECT * FROM tracked_companies t WHERE t.next_run_at <= ? AND (t.unit_id IS NULL OR NOT " + unitAlive("t.unit_id") +
			") ORDER BY t.next_run_at, t.id LIMIT ?" + lock
		if err := tx.Raw(q, now, limit).Scan(&rows).Error; err != nil || len(rows) == 0 {
			return err
		}
		queued, err = s.queueRuns(ctx, tx, rows, "")
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("queue due companies: %w", err)
	}
	return len(rows), queued, nil
}

// RecordRun stores the outcome of a scheduled run whose search answered,
// in one transaction: on the tracked company the new patent count and
// time of analysis, the consecutive failed runs ending with this one (0
// when it succeeded) and the next run; the publication numbers the run saw
// (tracked_patents, for the next runs' diff) and, on its first such run,
// since when they are kept; the run's row in the company's history
// (tracking_runs: at, count, success when failures is 0, its new and
// dropped patents); and out.Alerts, the alerts the run raised (each with
// its id, reserved when the run was queued, and its time), with
// deliveries, the webhook deliveries the caller composed for them. The
// history row says alert only when an alert is committed with it, and an
// alert is never committed without its row and deliveries (decisions.md).
//
// The run is recorded only while the company is still due at due (the
// due time its run was queued for): a due time is recorded once, however
// often its unit runs, and recorded reports whether this call did. A
// company untracked meanwhile is ignored too: nothing is stored, its alerts
// neither (untracking dropped its history, and with it the baseline the
// alerts compare against).
func (s Tracking) RecordRun(ctx context.Context, id int64, due time.Time, out patent.RunOutcome, deliveries []patent.Delivery) (recorded bool, err error) {
	at, next := utc(out.At), utc(out.Next)
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&trackedCompanyRow{}).Where("id = ? AND next_run_at = ?", id, utc(due)).
			Updates(map[string]any{"last_patent_count": out.Count, "last_analysis_at": at, "consecutive_failures": out.Failures, "next_run_at": next})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		recorded = true
		if err := keepSeen(tx, id, at, out.Seen, out.Baseline); err != nil {
			return err
		}
		count := out.Count
		run := trackingRunRow{TrackedCompanyID: id, RunAt: at, PatentCount: &count, Success: out.Failures == 0, Alert: len(out.Alerts) > 0,
			NewPatents: publicationsColumn(out.Changes.New), NewPatentIDs: idsColumn(out.Changes.NewIDs()),
			DroppedPatents: idsColumn(out.Changes.Dropped), Changed: !out.Changes.Empty()}
		if err := tx.Create(&run).Error; err != nil {
			return err
		}
		for _, a := range out.Alerts {
			if _, err := s.createAlert(tx, a); err != nil {
				return err
			}
		}
		return s.insertDeliveries(ctx, tx, deliveries)
	})
	if err != nil {
		return false, fmt.Errorf("record run of tracked company %d: %w", id, err)
	}
	return recorded, nil
}

// keepSeen records in tx the publication numbers a run of tracked company
// id saw at at: each is in the last run, and those not seen before are
// added; the company's seen_since is set at at by its baseline run.
func keepSeen(tx *gorm.DB, id int64, at time.Time, seen []string, baseline bool) error {
	if baseline {
		if err := tx.Model(&trackedCompanyRow{}).Where("id = ? AND seen_since IS NULL", id).Update("seen_since", at).Error; err != nil {
			return err
		}
	}
	if err := tx.Model(&trackedPatentRow{}).Where("tracked_company_id = ? AND in_last_run", id).Update("in_last_run", false).Error; err != nil {
		return err
	}
	rows := make([]trackedPatentRow, 0, len(seen))
	dup := map[string]bool{}
	for _, p := range seen {
		if !dup[p] {
			dup[p] = true
			rows = append(rows, trackedPatentRow{TrackedCompanyID: id, PatentID: p, FirstSeenAt: at, InLastRun: true})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tracked_company_id"}, {Name: "patent_id"}},
		DoUpdates: clause.Assignments(map[string]any{"in_last_run": true}),
	}).CreateInBatches(&rows, 200).Error
}

// trackedPatentRow is a publication number a tracked company's runs saw
// (migration 0011).
type trackedPatentRow struct {
	TrackedCompanyID int64  `gorm:"primaryKey;autoIncrement:false"`
	PatentID         string `gorm:"primaryKey"`
	FirstSeenAt      time.Time
	InLastRun        bool
}

func (trackedPatentRow) TableName() string { return "tracked_patents" }

// SeenPatents returns tracked company id as it stands and what its
// earlier runs saw of the publication numbers ids (those of them seen,
// those of its latest run whose search answered, and since when runs keep
// them), or patent.ErrNotFound when it is no longer tracked. It reads only the rows
// of ids and of the latest run, however long the company is tracked.
func (s Tracking) SeenPatents(ctx context.Context, id int64, ids []string) (patent.SeenPatents, error) {
	db := s.db.WithContext(ctx)
	var tc trackedCompanyRow
	if err := db.Take(&tc, "id = ?", id).Error; err != nil {
		return patent.SeenPatents{}, fmt.Errorf("patents seen by tracked company %d: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	q := db.Where("tracked_company_id = ?", id)
	if len(ids) > 0 {
		q = q.Where("in_last_run OR patent_id IN ?", ids)
	} else {
		q = q.Where("in_last_run")
	}
	var rows []trackedPatentRow
	if err := q.Order("patent_id").Find(&rows).Error; err != nil {
		return patent.SeenPatents{}, fmt.Errorf("patents seen by tracked company %d: %w", id, err)
	}
	asked := make(map[string]bool, len(ids))
	for _, p := range ids {
		asked[p] = true
	}
	out := patent.SeenPatents{Company: tc.toDomain(), Known: map[string]bool{}, Last: []string{}}
	if tc.SeenSince != nil {
		since := tc.SeenSince.UTC()
		out.Since = &since
	}
	for _, r := range rows {
		if asked[r.PatentID] {
			out.Known[r.PatentID] = true
		}
		if r.InLastRun {
			out.Last = append(out.Last, r.PatentID)
		}
	}
	return out, nil
}

// RecordFailure stores a scheduled run at at that failed before it had a
// patent count (the search failed), in one transaction: on the tracked
// company the consecutive failed runs ending with this one and the next
// run (the count and the time of the last analysis stay as they were), and
// the run's row in the company's history, without a count. As RecordRun,
// it records only while the company is still due at due, and reports
// whether it did.
func (s Tracking) RecordFailure(ctx context.Context, id int64, due, at time.Time, failures int, next time.Time) (recorded bool, err error) {
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&trackedCompanyRow{}).Where("id = ? AND next_run_at = ?", id, utc(due)).
			Updates(map[string]any{"consecutive_failures": failures, "next_run_at": utc(next)})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		recorded = true
		return tx.Create(&trackingRunRow{TrackedCompanyID: id, RunAt: utc(at)}).Error
	})
	if err != nil {
		return false, fmt.Errorf("record failed run of tracked company %d: %w", id, err)
	}
	return recorded, nil
}

type alertRow struct {
	ID          int64 `gorm:"primaryKey"`
	CompanyName string
	AlertType   string
	Message     string
	OldValue    float64
	NewValue    float64
	CreatedAt   time.Time
	// Patents: a new_patents alert's patents (migration 0011).
	Patents *string
}

func (alertRow) TableName() string { return "alerts" }

func (r alertRow) toDomain() patent.Alert {
	return patent.Alert{ID: r.ID, CompanyName: r.CompanyName, AlertType: r.AlertType, Message: r.Message,
		OldValue: r.OldValue, NewValue: r.NewValue, CreatedAt: r.CreatedAt.UTC(), Patents: readPublications(r.Patents)}
}

// CreateAlert stores an alert (with its id when it has one, reserved
// with ReserveAlertIDs; stamped now when it has no time) and, in the same
// transaction, deliveries, the webhook deliveries the caller composed for
// it (decisions.md: an alert is never committed without its deliveries,
// nor a delivery without its alert), and returns the alert as stored.
func (s Tracking) CreateAlert(ctx context.Context, a patent.Alert, deliveries []patent.Delivery) (patent.Alert, error) {
	var stored patent.Alert
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		var err error
		if stored, err = s.createAlert(tx, a); err != nil {
			return err
		}
		return s.insertDeliveries(ctx, tx, deliveries)
	})
	if err != nil {
		return patent.Alert{}, fmt.Errorf("create alert: %w", err)
	}
	return stored, nil
}

// createAlert stores a in tx, with its id and time when it has them.
func (s *base) createAlert(tx *gorm.DB, a patent.Alert) (patent.Alert, error) {
	at := utc(a.CreatedAt)
	if a.CreatedAt.IsZero() {
		at = utc(s.now())
	}
	row := alertRow{ID: a.ID, CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: at, Patents: publicationsColumn(a.Patents)}
	if err := tx.Create(&row).Error; err != nil {
		return patent.Alert{}, err
	}
	return row.toDomain(), nil
}

// ListAlerts returns up to limit alerts, newest first.
func (s Tracking) ListAlerts(ctx context.Context, limit int) ([]patent.Alert, error) {
	var rows []alertRow
	if err := s.db.WithContext(ctx).Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	out := make([]patent.Alert, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}
