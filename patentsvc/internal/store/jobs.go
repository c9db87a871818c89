package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type jobRow struct {
	ID             string `gorm:"primaryKey"`
	UserID         *int64
	Status         string
	Total          int
	Completed      int
	Model          *string
	Request        string
	Result         *string
	Error          *string
	LeaseOwner     *string
	LeaseExpiresAt *time.Time
	TraceParent    *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (jobRow) TableName() string { return "jobs" }

// jobRequest is the stored form of what a job was asked to do.
type jobRequest struct {
	Companies  []string `json:"companies"`
	MaxWorkers int      `json:"max_workers"`
}

func (r jobRow) toDomain() (patent.Job, error) {
	j := patent.Job{ID: r.ID, UserID: derefID(r.UserID), Status: r.Status, Total: r.Total, Completed: r.Completed, Model: deref(r.Model),
		Error: r.Error, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), TraceParent: deref(r.TraceParent)}
	var req jobRequest
	if err := json.Unmarshal([]byte(r.Request), &req); err != nil {
		return patent.Job{}, fmt.Errorf("job %s: decode request: %w", r.ID, err)
	}
	j.Companies, j.MaxWorkers = req.Companies, req.MaxWorkers
	if r.Result != nil {
		var res patent.BatchResult
		if err := json.Unmarshal([]byte(*r.Result), &res); err != nil {
			return patent.Job{}, fmt.Errorf("job %s: decode result: %w", r.ID, err)
		}
		j.Result = &res
	}
	return j, nil
}

// CreateJob stores a pending job of j.UserID held by owner for leaseFor,
// with j.TraceParent (NULL when empty).
func (s *Store) CreateJob(ctx context.Context, j patent.Job, owner string, leaseFor time.Duration) (patent.Job, error) {
	req, err := json.Marshal(jobRequest{Companies: j.Companies, MaxWorkers: j.MaxWorkers})
	if err != nil {
		return patent.Job{}, err
	}
	now := utc(s.now())
	exp := now.Add(leaseFor)
	row := jobRow{ID: j.ID, UserID: optID(j.UserID), Status: patent.JobPending, Total: len(j.Companies), Model: opt(j.Model), Request: string(req),
		LeaseOwner: &owner, LeaseExpiresAt: &exp, TraceParent: opt(j.TraceParent), CreatedAt: now, UpdatedAt: now}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return patent.Job{}, fmt.Errorf("create job: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain()
}

// Job returns a job, or patent.ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (patent.Job, error) {
	var row jobRow
	if err := s.db.WithContext(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return patent.Job{}, fmt.Errorf("job %s: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain()
}

// ListJobs returns a page of the jobs f selects (of one status, of one
// user), newest first (ties broken by id, descending). next is empty on
// the last page.
func (s *Store) ListJobs(ctx context.Context, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error) {
	q := s.db.WithContext(ctx).Model(&jobRow{})
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.UserID != 0 {
		q = q.Where("user_id = ?", f.UserID)
	}
	if c, ok := decodeCursor(after); ok {
		q = q.Where("(created_at, id) < (?, ?)", c.at, c.id)
	}
	var rows []jobRow
	err := q.Order(clause.OrderBy{Columns: []clause.OrderByColumn{
		{Column: clause.Column{Name: "created_at"}, Desc: true},
		{Column: clause.Column{Name: "id"}, Desc: true},
	}}).Limit(limit + 1).Find(&rows).Error
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[len(rows)-1]
		next = encodeCursor(last.CreatedAt, last.ID)
	}
	out := make([]patent.Job, 0, len(rows))
	for _, r := range rows {
		j, err := r.toDomain()
		if err != nil {
			return nil, "", err
		}
		out = append(out, j)
	}
	return out, next, nil
}

// ErrLeaseLost is returned when a job's lease is no longer held by the
// caller (it expired and the job was failed).
var ErrLeaseLost = fmt.Errorf("job lease lost: %w", patent.ErrConflict)

// updateHeld applies values to job id if owner still holds its lease and it
// is pending or running, renewing the lease for leaseFor.
func (s *Store) updateHeld(ctx context.Context, id, owner string, leaseFor time.Duration, values map[string]any) error {
	now := utc(s.now())
	values["updated_at"] = now
	values["lease_expires_at"] = now.Add(leaseFor)
	res := s.db.WithContext(ctx).Model(&jobRow{}).
		Where("id = ? AND lease_owner = ? AND status IN ?", id, owner, []string{patent.JobPending, patent.JobRunning}).
		Updates(values)
	if res.Error != nil {
		return fmt.Errorf("update job %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("job %s: %w", id, ErrLeaseLost)
	}
	return nil
}

// StartJob marks a held job running.
func (s *Store) StartJob(ctx context.Context, id, owner string, leaseFor time.Duration) error {
	return s.updateHeld(ctx, id, owner, leaseFor, map[string]any{"status": patent.JobRunning})
}

// JobProgress records how many companies a held job has finished.
func (s *Store) JobProgress(ctx context.Context, id, owner string, completed int, leaseFor time.Duration) error {
	return s.updateHeld(ctx, id, owner, leaseFor, map[string]any{"completed": completed})
}

// FinishJob ends a held job: completed with its result, or failed with an
// error (and the partial result, if any). The lease is released. In the
// same transaction it stores the webhook deliveries that compose returns
// for the finished job (decisions.md: a job end and its deliveries commit
// together); compose may be nil. Returns ErrLeaseLost when owner no longer
// holds the job.
func (s *Store) FinishJob(ctx context.Context, id, owner, status string, result *patent.BatchResult, errMsg string, compose patent.Deliveries[patent.Job]) error {
	values := map[string]any{"status": status, "lease_owner": nil, "lease_expires_at": nil, "updated_at": utc(s.now())}
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return err
		}
		values["result"] = string(b)
		values["completed"] = len(result.Results)
	}
	if errMsg != "" {
		values["error"] = errMsg
	}
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&jobRow{}).
			Where("id = ? AND lease_owner = ? AND status IN ?", id, owner, []string{patent.JobPending, patent.JobRunning}).
			Updates(values)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrLeaseLost
		}
		if compose == nil {
			return nil
		}
		var row jobRow
		if err := tx.Take(&row, "id = ?", id).Error; err != nil {
			return err
		}
		j, err := row.toDomain()
		if err != nil {
			return err
		}
		return withDeliveries(s, tx, compose, j)
	})
	if err != nil {
		return fmt.Errorf("finish job %s: %w", id, err)
	}
	return nil
}

// RenewLeases extends the leases of every unfinished job owner holds and
// returns how many.
func (s *Store) RenewLeases(ctx context.Context, owner string, leaseFor time.Duration) (int64, error) {
	now := utc(s.now())
	res := s.db.WithContext(ctx).Model(&jobRow{}).
		Where("lease_owner = ? AND status IN ?", owner, []string{patent.JobPending, patent.JobRunning}).
		Update("lease_expires_at", now.Add(leaseFor))
	if res.Error != nil {
		return 0, fmt.Errorf("renew job leases: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// FailExpiredJobs fails every pending or running job whose lease has
// expired (its process stopped) and returns how many.
func (s *Store) FailExpiredJobs(ctx context.Context, reason string) (int64, error) {
	now := utc(s.now())
	var n int64
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&jobRow{}).
			Where("status IN ? AND (lease_expires_at IS NULL OR lease_expires_at < ?)", []string{patent.JobPending, patent.JobRunning}, now).
			Updates(map[string]any{"status": patent.JobFailed, "error": reason, "lease_owner": nil, "lease_expires_at": nil, "updated_at": now})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("fail expired jobs: %w", err)
	}
	return n, nil
}
