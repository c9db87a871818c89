package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type trackedCompanyRow struct {
	ID              int64 `gorm:"primaryKey"`
	CompanyName     string
	LastPatentCount int
	LastAnalysisAt  *time.Time
	NextRunAt       time.Time
	CreatedAt       time.Time
}

func (trackedCompanyRow) TableName() string { return "tracked_companies" }

func (r trackedCompanyRow) toDomain() patent.TrackedCompany {
	t := patent.TrackedCompany{ID: r.ID, CompanyName: r.CompanyName, LastPatentCount: r.LastPatentCount,
		NextRunAt: r.NextRunAt.UTC(), CreatedAt: r.CreatedAt.UTC()}
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
// at once. Returns patent.ErrConflict when a company of the same name, in
// any letter case, is tracked already.
func (s *Store) CreateTracked(ctx context.Context, name patent.CompanyName) (patent.TrackedCompany, error) {
	now := utc(s.now())
	row := trackedCompanyRow{CompanyName: name.String(), NextRunAt: now, CreatedAt: now}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return patent.TrackedCompany{}, fmt.Errorf("track %q: %w", name, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
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
	now := utc(s.now())
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []trackedCompanyRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Raw("SELECT * FROM tracked_companies WHERE next_run_at <= ? ORDER BY next_run_at, id LIMIT ?"+lock, now, limit).
			Scan(&rows).Error; err != nil {
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
		return nil, fmt.Errorf("claim due companies: %w", err)
	}
	out := make([]patent.TrackedCompany, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// RecordRun stores a scheduled run's outcome: the new patent count and time
// of analysis, and the next run. A company untracked meanwhile is ignored.
func (s *Store) RecordRun(ctx context.Context, id int64, count int, at, next time.Time) error {
	at, next = utc(at), utc(next)
	err := s.db.WithContext(ctx).Model(&trackedCompanyRow{}).Where("id = ?", id).
		Updates(map[string]any{"last_patent_count": count, "last_analysis_at": at, "next_run_at": next}).Error
	if err != nil {
		return fmt.Errorf("record run of tracked company %d: %w", id, err)
	}
	return nil
}

// Reschedule sets a tracked company's next run (after a failed run).
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
	row := alertRow{CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: utc(s.now())}
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return withDeliveries(s, tx, compose, row.toDomain())
	})
	if err != nil {
		return patent.Alert{}, fmt.Errorf("create alert: %w", err)
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
