package store

import (
	"context"
	"errors"
	"fmt"
	"time"

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
func (s *Store) ListTracked(ctx context.Context) ([]patent.TrackedCompany, error) {
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

// CreateTracked starts tracking a company, due for its first scheduled run
// at once. When a company of the same name, in any letter case, is tracked
// already, it returns a *patent.AlreadyTrackedError (a kind of
// patent.ErrConflict) carrying that company's current state.
//
// The insert skips a conflicting row instead of failing (a failed statement
// would end a PostgreSQL transaction), and the row it conflicted with is
// read in the same transaction; on PostgreSQL that row may be untracked
// between the two statements, and then the insert is tried again.
func (s *Store) CreateTracked(ctx context.Context, name patent.CompanyName) (patent.TrackedCompany, error) {
	now := utc(s.now())
	var row trackedCompanyRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		for range 3 {
			row = trackedCompanyRow{CompanyName: name.String(), NextRunAt: now, CreatedAt: now}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
			if res.Error != nil || res.RowsAffected == 1 {
				return res.Error
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

// trackedByName reads the company tracked under name in any letter case.
func trackedByName(tx *gorm.DB, name patent.CompanyName) (trackedCompanyRow, error) {
	var row trackedCompanyRow
	err := tx.Where("lower(company_name) = ?", name.Key()).Take(&row).Error
	return row, err
}

// DeleteTracked stops tracking the company whose name matches name in any
// letter case. Returns patent.ErrNotFound when none does.
func (s *Store) DeleteTracked(ctx context.Context, name patent.CompanyName) error {
	res := s.db.WithContext(ctx).Where("lower(company_name) = ?", name.Key()).Delete(&trackedCompanyRow{})
	if res.Error != nil {
		return fmt.Errorf("untrack %q: %w", name, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("untrack %q: %w", name, patent.ErrNotFound)
	}
	return nil
}

// ClaimDue claims up to limit tracked companies whose next run is due,
// oldest due first, by moving their next run hold into the future: a
// claimed company is not due again until the claim lapses, so a replica
// (or a new leader) cannot run it twice, and a run that never reports back
// (a crash) is retried once the hold has passed, not skipped. On
// PostgreSQL the rows are locked with FOR UPDATE SKIP LOCKED, so claims
// made at the same moment split the due rows instead of waiting.
func (s *Store) ClaimDue(ctx context.Context, limit int, hold time.Duration) ([]patent.TrackedCompany, error) {
	out, err := s.claim(ctx, "", nil, limit, hold)
	if err != nil {
		return nil, fmt.Errorf("claim due companies: %w", err)
	}
	return out, nil
}

// ClaimTracked claims the tracked company id as ClaimDue would, if it is
// due: the run of a newly tracked company started at once, on the replica
// that tracked it, instead of at the dispatcher's next tick. It reports
// false when the company is not due (a dispatcher claimed it first, or it
// ran already) or no longer tracked. A company is claimed by one of
// ClaimDue and ClaimTracked only, whichever replicas call them.
func (s *Store) ClaimTracked(ctx context.Context, id int64, hold time.Duration) (patent.TrackedCompany, bool, error) {
	out, err := s.claim(ctx, "id = ? AND ", []any{id}, 1, hold)
	if err != nil {
		return patent.TrackedCompany{}, false, fmt.Errorf("claim tracked company %d: %w", id, err)
	}
	if len(out) == 0 {
		return patent.TrackedCompany{}, false, nil
	}
	return out[0], true, nil
}

// claim claims up to limit due companies that also match where (a
// condition ending in AND, with its args; empty for any).
func (s *Store) claim(ctx context.Context, where string, args []any, limit int, hold time.Duration) ([]patent.TrackedCompany, error) {
	now := utc(s.now())
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []trackedCompanyRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		q := "SELECT * FROM tracked_companies WHERE " + where + "next_run_at <= ? ORDER BY next_run_at, id LIMIT ?" + lock
		if err := tx.Raw(q, append(args, now, limit)...).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		return tx.Model(&trackedCompanyRow{}).Where("id IN ?", ids).Update("next_run_at", now.Add(hold)).Error
	})
	if err != nil {
		return nil, err
	}
	out := make([]patent.TrackedCompany, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// RecordRun stores the outcome of a scheduled run whose search answered,
// in one transaction: on the tracked company the new patent count and
// time of analysis, the consecutive failed runs ending with this one (0
// when it succeeded) and the next run; the run's row in the company's
// history (tracking_runs: at, count, success when failures is 0); and,
// when alert is not nil, the alert the run raised, stamped now, with the
// webhook deliveries compose returns for it (compose may be nil). The
// history row says alert only when the alert is committed with it, and an
// alert is never committed without its row and deliveries (decisions.md).
//
// A company untracked meanwhile is ignored: nothing is stored, its alert
// neither (untracking dropped its history, and with it the baseline the
// alert compares against).
func (s *Store) RecordRun(ctx context.Context, id int64, count int, at time.Time, failures int, next time.Time,
	alert *patent.Alert, compose patent.Deliveries[patent.Alert]) error {
	at, next = utc(at), utc(next)
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&trackedCompanyRow{}).Where("id = ?", id).
			Updates(map[string]any{"last_patent_count": count, "last_analysis_at": at, "consecutive_failures": failures, "next_run_at": next})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		run := trackingRunRow{TrackedCompanyID: id, RunAt: at, PatentCount: &count, Success: failures == 0, Alert: alert != nil}
		if err := tx.Create(&run).Error; err != nil {
			return err
		}
		if alert == nil {
			return nil
		}
		_, err := s.createAlert(tx, *alert, compose)
		return err
	})
	if err != nil {
		return fmt.Errorf("record run of tracked company %d: %w", id, err)
	}
	return nil
}

// RecordFailure stores a scheduled run at at that failed before it had a
// patent count (the search failed), in one transaction: on the tracked
// company the consecutive failed runs ending with this one and the next
// run (the count and the time of the last analysis stay as they were), and
// the run's row in the company's history, without a count. A company
// untracked meanwhile is ignored.
func (s *Store) RecordFailure(ctx context.Context, id int64, at time.Time, failures int, next time.Time) error {
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&trackedCompanyRow{}).Where("id = ?", id).
			Updates(map[string]any{"consecutive_failures": failures, "next_run_at": utc(next)})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return tx.Create(&trackingRunRow{TrackedCompanyID: id, RunAt: utc(at)}).Error
	})
	if err != nil {
		return fmt.Errorf("record failed run of tracked company %d: %w", id, err)
	}
	return nil
}

// Reschedule sets a tracked company's next run, leaving everything else
// as it was (a claimed company handed back unrun).
func (s *Store) Reschedule(ctx context.Context, id int64, next time.Time) error {
	err := s.db.WithContext(ctx).Model(&trackedCompanyRow{}).Where("id = ?", id).Update("next_run_at", utc(next)).Error
	if err != nil {
		return fmt.Errorf("reschedule tracked company %d: %w", id, err)
	}
	return nil
}

type alertRow struct {
	ID          int64 `gorm:"primaryKey"`
	CompanyName string
	AlertType   string
	Message     string
	OldValue    float64
	NewValue    float64
	CreatedAt   time.Time
}

func (alertRow) TableName() string { return "alerts" }

func (r alertRow) toDomain() patent.Alert {
	return patent.Alert{ID: r.ID, CompanyName: r.CompanyName, AlertType: r.AlertType, Message: r.Message,
		OldValue: r.OldValue, NewValue: r.NewValue, CreatedAt: r.CreatedAt.UTC()}
}

// CreateAlert stores an alert stamped now, and in the same transaction the
// webhook deliveries that compose returns for it (decisions.md: an alert
// is never committed without its deliveries, nor a delivery without its
// alert), and returns the alert. compose may be nil (no webhooks).
func (s *Store) CreateAlert(ctx context.Context, a patent.Alert, compose patent.Deliveries[patent.Alert]) (patent.Alert, error) {
	var stored patent.Alert
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		var err error
		stored, err = s.createAlert(tx, a, compose)
		return err
	})
	if err != nil {
		return patent.Alert{}, fmt.Errorf("create alert: %w", err)
	}
	return stored, nil
}

// createAlert stores an alert stamped now and its deliveries in tx.
func (s *Store) createAlert(tx *gorm.DB, a patent.Alert, compose patent.Deliveries[patent.Alert]) (patent.Alert, error) {
	row := alertRow{CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: utc(s.now())}
	if err := tx.Create(&row).Error; err != nil {
		return patent.Alert{}, err
	}
	if err := withDeliveries(s, tx, compose, row.toDomain()); err != nil {
		return patent.Alert{}, err
	}
	return row.toDomain(), nil
}

// ListAlerts returns up to limit alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, limit int) ([]patent.Alert, error) {
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
