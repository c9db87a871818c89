package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type jobRow struct {
	ID          string `gorm:"primaryKey"`
	UserID      *int64
	Status      string
	Total       int
	Completed   int
	Model       *string
	Request     string
	Result      *string
	Error       *string
	UnitID      *int64
	StartedAt   *time.Time
	TraceParent *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (jobRow) TableName() string { return "jobs" }

// jobRequest is the stored form of what a job was asked to do.
type jobRequest struct {
	Companies  []string `json:"companies"`
	MaxWorkers int      `json:"max_workers"`
}

func (r jobRow) toDomain() (patent.Job, error) {
	j := patent.Job{ID: r.ID, UserID: derefID(r.UserID), Status: r.Status, Total: r.Total, Completed: r.Completed, Model: deref(r.Model),
		Error: r.Error, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), TraceParent: deref(r.TraceParent),
		UnitID: derefID(r.UnitID), StartedAt: utcPtr(r.StartedAt)}
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

// unfinished are the statuses of a job that has not ended.
var unfinished = []string{patent.JobPending, patent.JobRunning}

// CreateJob stores a pending job of j.UserID, with j.TraceParent (NULL
// when empty), and queues its JobStart, with attempts runs
// (JOBS_MAX_ATTEMPTS; 0: DefaultJobAttempts), in the same transaction.
// When the user has maxPerUser unfinished jobs already (maxPerUser > 0),
// it stores nothing and returns a *patent.TooManyJobsError (its RetryAfter
// zero). Submissions and the workers' picks are ordered by one lock, so
// two submissions at once cannot both pass the limit.
func (s Jobs) CreateJob(ctx context.Context, j patent.Job, maxPerUser, attempts int) (patent.Job, error) {
	req, err := json.Marshal(jobRequest{Companies: j.Companies, MaxWorkers: j.MaxWorkers})
	if err != nil {
		return patent.Job{}, err
	}
	now := utc(s.now())
	row := jobRow{ID: j.ID, UserID: optID(j.UserID), Status: patent.JobPending, Total: len(j.Companies), Model: opt(j.Model), Request: string(req),
		TraceParent: opt(j.TraceParent), CreatedAt: now, UpdatedAt: now}
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		if err := s.lockKey(tx, lockJobs); err != nil {
			return err
		}
		if maxPerUser > 0 {
			var n int64
			if err := tx.Model(&jobRow{}).Where("user_id = ? AND status IN ?", j.UserID, unfinished).Count(&n).Error; err != nil {
				return err
			}
			if n >= int64(maxPerUser) {
				return &patent.TooManyJobsError{Limit: maxPerUser}
			}
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		_, err := s.enqueue(ctx, tx, attempts, patent.JobStart{JobID: row.ID})
		return err
	})
	var full *patent.TooManyJobsError
	if errors.As(err, &full) {
		return patent.Job{}, full // its text is what the client reads
	}
	if err != nil {
		return patent.Job{}, fmt.Errorf("create job: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain()
}

// Job returns a job, or patent.ErrNotFound.
func (s Jobs) Job(ctx context.Context, id string) (patent.Job, error) {
	var row jobRow
	if err := s.db.WithContext(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return patent.Job{}, fmt.Errorf("job %s: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain()
}

// ListJobs returns a page of the jobs f selects (of one status, of one
// user), newest first (ties broken by id, descending): at most limit jobs
// and PageBytes of their stored requests, results and errors (at least
// one job, however big its result). next is the cursor of the following
// page, after the last job returned, empty on the last one.
func (s Jobs) ListJobs(ctx context.Context, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error) {
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
	newest := clause.OrderBy{Columns: []clause.OrderByColumn{
		{Column: clause.Column{Name: "created_at"}, Desc: true},
		{Column: clause.Column{Name: "id"}, Desc: true},
	}}
	// The page is sized before it is loaded (PageBytes).
	var keys []pageKey[string]
	err := q.Select("created_at AS at, id, CAST(octet_length(request) AS BIGINT) + " +
		"COALESCE(CAST(octet_length(result) AS BIGINT), 0) + COALESCE(CAST(octet_length(error) AS BIGINT), 0) AS size").
		Order(newest).Limit(limit + 1).Scan(&keys).Error
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	rows, next, err := listPage(keys, limit, func(ids []string) ([]jobRow, error) {
		var rows []jobRow
		err := s.db.WithContext(ctx).Where("id IN ?", ids).Order(newest).Find(&rows).Error
		return rows, err
	}, jobRow.key)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	out, err := jobsOf(rows)
	return out, next, err
}

// jobsOf is rows as jobs.
func jobsOf(rows []jobRow) ([]patent.Job, error) {
	out := make([]patent.Job, 0, len(rows))
	for _, r := range rows {
		j, err := r.toDomain()
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// key is r's place in the listing and the bytes of its stored text.
func (r jobRow) key() pageKey[string] {
	return pageKey[string]{At: r.CreatedAt, ID: r.ID, Size: int64(len(r.Request) + len(deref(r.Result)) + len(deref(r.Error)))}
}

// ErrJobLost is returned when a job is no longer held by the unit that
// reports on it (the sweep failed it after its unit was given up).
var ErrJobLost = fmt.Errorf("job no longer held by its unit: %w", patent.ErrConflict)

// HeldJob returns the running job unit holds (a JobStart's UnitID run
// again after its process died or a shutdown cut it short); ok is false
// when it holds none.
func (s Jobs) HeldJob(ctx context.Context, unit int64) (j patent.Job, ok bool, err error) {
	var row jobRow
	err = s.db.WithContext(ctx).Where("unit_id = ? AND status = ?", unit, patent.JobRunning).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return patent.Job{}, false, nil
	}
	if err != nil {
		return patent.Job{}, false, fmt.Errorf("held job of unit %d: %w", unit, err)
	}
	j, err = row.toDomain()
	return j, err == nil, err
}

// PendingHeads returns, for each user with pending jobs, the oldest of
// them and how many of the user's jobs are running: what the jobs core
// picks the next job among (patent.FairestJob). Jobs without an owner
// count as one user.
func (s Jobs) PendingHeads(ctx context.Context) ([]patent.JobCandidate, error) {
	var rows []struct {
		ID        string
		UserID    *int64
		CreatedAt time.Time
		Running   int
	}
	err := s.db.WithContext(ctx).Raw(`SELECT j.id, j.user_id, j.created_at,
			(SELECT COUNT(*) FROM jobs r WHERE r.status = ? AND COALESCE(r.user_id, 0) = COALESCE(j.user_id, 0)) AS running
		FROM jobs j WHERE j.status = ? AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.status = ?
			AND COALESCE(o.user_id, 0) = COALESCE(j.user_id, 0) AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.id < j.id)))`,
		patent.JobRunning, patent.JobPending, patent.JobPending).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("pending jobs: %w", err)
	}
	out := make([]patent.JobCandidate, len(rows))
	for i, r := range rows {
		out[i] = patent.JobCandidate{JobID: r.ID, UserID: derefID(r.UserID), CreatedAt: r.CreatedAt.UTC(), Running: r.Running}
	}
	return out, nil
}

// StartJob marks pending job id running, started now and held by unit,
// and returns it; ok is false when the job is no longer pending (another
// unit started it meanwhile, or it failed).
func (s Jobs) StartJob(ctx context.Context, id string, unit int64) (j patent.Job, ok bool, err error) {
	now := utc(s.now())
	var row jobRow
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&jobRow{}).Where("id = ? AND status = ?", id, patent.JobPending).
			Updates(map[string]any{"status": patent.JobRunning, "unit_id": unit, "started_at": now, "updated_at": now})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		ok = true
		return tx.Take(&row, "id = ?", id).Error
	})
	if err != nil || !ok {
		return patent.Job{}, false, wrapErr("start job "+id, err)
	}
	j, err = row.toDomain()
	return j, err == nil, err
}

// wrapErr wraps err with what failed, nil staying nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// JobProgress records that a job held by unit has finished completed of
// its companies; a count lower than the recorded one (a job run again from
// the start) leaves it as it is. Returns ErrJobLost when unit no longer
// holds the job.
func (s Jobs) JobProgress(ctx context.Context, id string, unit int64, completed int) error {
	res := s.db.WithContext(ctx).Model(&jobRow{}).
		Where("id = ? AND unit_id = ? AND status = ?", id, unit, patent.JobRunning).
		Updates(map[string]any{"completed": gorm.Expr("CASE WHEN completed < ? THEN ? ELSE completed END", completed, completed),
			"updated_at": utc(s.now())})
	if res.Error != nil {
		return fmt.Errorf("update job %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("job %s: %w", id, ErrJobLost)
	}
	return nil
}

// FinishJob records the end of a job held by unit: j as it ended
// (status completed or failed, its result, the error of a failed one). In
// the same transaction it stores deliveries, the job.completed webhook
// deliveries the caller composed for j (decisions.md: a job end and its
// deliveries commit together; none without webhooks). Returns ErrJobLost
// when unit no longer holds the job.
func (s Jobs) FinishJob(ctx context.Context, j patent.Job, unit int64, deliveries []patent.Delivery) error {
	values, err := endValues(j, utc(s.now()))
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&jobRow{}).Where("id = ? AND unit_id = ? AND status = ?", j.ID, unit, patent.JobRunning).Updates(values)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrJobLost
		}
		return s.insertDeliveries(ctx, tx, deliveries)
	})
	if err != nil {
		return fmt.Errorf("finish job %s: %w", j.ID, err)
	}
	return nil
}

// endValues are the columns of j as it ended.
func endValues(j patent.Job, now time.Time) (map[string]any, error) {
	values := map[string]any{"status": j.Status, "updated_at": now}
	if j.Result != nil {
		b, err := json.Marshal(j.Result)
		if err != nil {
			return nil, err
		}
		values["result"] = string(b)
		values["completed"] = len(j.Result.Results)
	}
	if j.Error != nil {
		values["error"] = *j.Error
	}
	return values, nil
}

// FailJob fails a job that did not end by itself, as it was read (j:
// pending, or running with its progress and unit), with reason, and stores
// deliveries, its job.completed deliveries as the caller composed them, in
// the same transaction; the unit that held the job, if any, ends with it
// (cancelled). A job that moved meanwhile (taken up, progressed, ended) is
// left as it is: failed is false.
func (s Jobs) FailJob(ctx context.Context, j patent.Job, reason string, deliveries []patent.Delivery) (failed bool, err error) {
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		q := tx.Model(&jobRow{}).Where("id = ? AND status = ? AND status IN ? AND completed = ?", j.ID, j.Status, unfinished, j.Completed)
		if j.UnitID != 0 {
			q = q.Where("unit_id = ?", j.UnitID)
		} else {
			q = q.Where("unit_id IS NULL")
		}
		res := q.Updates(map[string]any{"status": patent.JobFailed, "error": reason, "updated_at": utc(s.now())})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		failed = true
		if err := s.cancelUnit(ctx, tx, j.UnitID); err != nil {
			return err
		}
		return s.insertDeliveries(ctx, tx, deliveries)
	})
	if err != nil {
		return false, fmt.Errorf("fail job %s: %w", j.ID, err)
	}
	return failed, nil
}

// LostJobs returns the running jobs whose work stopped without ending
// them: the replica running the job's unit is dead (RunnerStopped: its
// liveness session ended, see session.go), or the unit is no longer alive
// (River gave it up after its runs failed, or it was cancelled). Each is
// as read, for FailJob.
func (s Jobs) LostJobs(ctx context.Context) ([]patent.LostJob, error) {
	db := s.db.WithContext(ctx)
	alive, err := s.aliveFunc(db)
	if err != nil {
		return nil, fmt.Errorf("lost jobs: %w", err)
	}
	var units []struct {
		ID        string
		UnitState *string
		Runner    *string
	}
	err = db.Raw("SELECT jobs.id, r.state AS unit_state, "+s.lastRunner()+" AS runner FROM jobs LEFT JOIN river_job r ON r.id = jobs.unit_id "+
		"WHERE jobs.status = ?", patent.JobRunning).Scan(&units).Error
	if err != nil {
		return nil, fmt.Errorf("lost jobs: %w", err)
	}
	lost := map[string]bool{} // id: whether its runner stopped
	for _, u := range units {
		switch state := deref(u.UnitState); {
		case !slices.Contains(liveUnitStates, rivertype.JobState(state)):
			lost[u.ID] = false // the unit ended, or was deleted, without the job
		case state == "running" && !alive(deref(u.Runner)):
			lost[u.ID] = true
		}
	}
	if len(lost) == 0 {
		return nil, nil
	}
	var rows []jobRow
	if err := db.Where("id IN ? AND status = ?", slices.Collect(maps.Keys(lost)), patent.JobRunning).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("lost jobs: %w", err)
	}
	jobs, err := jobsOf(rows)
	if err != nil {
		return nil, err
	}
	out := make([]patent.LostJob, len(jobs))
	for i, j := range jobs {
		out[i] = patent.LostJob{Job: j, RunnerStopped: lost[j.ID]}
	}
	return out, nil
}

// UnfinishedJobs returns up to limit pending or running jobs, of user
// userID (0: of every user), oldest first.
func (s Jobs) UnfinishedJobs(ctx context.Context, userID int64, limit int) ([]patent.Job, error) {
	q := s.db.WithContext(ctx).Where("status IN ?", unfinished)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	var rows []jobRow
	if err := q.Order("created_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("unfinished jobs: %w", err)
	}
	return jobsOf(rows)
}

// JobPace returns how long the latest n jobs that ran to their end took
// per company, their median, across the cluster (the time from their
// start to their end, divided by their companies); ok is false when no
// job has ended yet.
func (s Jobs) JobPace(ctx context.Context, n int) (perCompany time.Duration, ok bool, err error) {
	var rows []jobRow
	err = s.db.WithContext(ctx).Select("total", "started_at", "updated_at").
		Where("status IN ? AND started_at IS NOT NULL AND total > 0", []string{patent.JobCompleted, patent.JobFailed}).
		Order("updated_at DESC").Limit(n).Find(&rows).Error
	if err != nil {
		return 0, false, fmt.Errorf("job pace: %w", err)
	}
	paces := make([]time.Duration, 0, len(rows))
	for _, r := range rows {
		if d := r.UpdatedAt.Sub(*r.StartedAt); d >= 0 {
			paces = append(paces, d/time.Duration(r.Total))
		}
	}
	if len(paces) == 0 {
		return 0, false, nil
	}
	slices.Sort(paces)
	return paces[len(paces)/2], true, nil
}

// RefillJobStarts queues a JobStart, with attempts runs, for every
// pending job beyond the job starts alive and not holding a job (a unit
// given up or cancelled before it took a job up, or jobs stored before
// the queue existed), so that every pending job has a unit to start it.
// Returns how many it queued.
func (s Jobs) RefillJobStarts(ctx context.Context, attempts int) (int64, error) {
	var queued int64
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := s.lockKey(tx, lockJobs); err != nil {
			return err
		}
		var pending, free int64
		if err := tx.Model(&jobRow{}).Where("status = ?", patent.JobPending).Count(&pending).Error; err != nil {
			return err
		}
		err := tx.Raw(`SELECT COUNT(*) FROM river_job r WHERE r.kind = ? AND r.state IN `+liveStatesSQL+
			` AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.unit_id = r.id AND j.status = ?)`, patent.KindJobStart, patent.JobRunning).Scan(&free).Error
		if err != nil || pending <= free {
			return err
		}
		var ids []string
		if err := tx.Model(&jobRow{}).Where("status = ?", patent.JobPending).Order("created_at, id").
			Limit(int(pending-free)).Pluck("id", &ids).Error; err != nil {
			return err
		}
		units := make([]patent.Unit, len(ids))
		for i, id := range ids {
			units[i] = patent.JobStart{JobID: id}
		}
		queued = int64(len(units))
		_, err = s.enqueue(ctx, tx, attempts, units...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("refill job starts: %w", err)
	}
	return queued, nil
}
