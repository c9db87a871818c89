package store

import (
	"context"
	"fmt"
	"time"

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
	t := patent.TrackedCompany{ID: r.ID, CompanyName: r.CompanyName, LastPatentCount: r.LastPatentCount, CreatedAt: r.CreatedAt.UTC()}
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

// CreateAlert stores an alert stamped now and returns it.
func (s *Store) CreateAlert(ctx context.Context, a patent.Alert) (patent.Alert, error) {
	row := alertRow{CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: utc(s.now())}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
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
