// Package jobs runs asynchronous batch analyses as units of the work
// queue that every replica drains (decisions.md, "patentsvc: work every
// replica shares, bounded and fair").
//
// # Caveats
//
//   - Submit stores a pending job and queues a JobStart in the same
//     transaction, or refuses (a *patent.TooManyJobsError) when the user
//     has JOBS_MAX_PER_USER unfinished jobs.
//   - A JobStart does not start the job that queued it but the fairest
//     pending one at the moment a worker takes it up: the oldest job of the
//     user with the fewest running (Store.ClaimJob). There are as many
//     job starts as pending jobs, so every job starts; the pick is made
//     when a worker is free, so one user's backlog never holds another
//     user's first job back by more than one job slot. (River orders its
//     units by priority and time only; per-user fairness is the one part
//     of the queueing written here.)
//   - A job runs on whichever replica's worker took its unit up, at most
//     JOBS_MAX_CONCURRENT at once per replica, and for at most
//     JOBS_TIMEOUT: then it ends failed, with the companies finished so far
//     and the others reported as not analysed.
//   - A job whose process dies is held by its unit, which the queue runs
//     again once JOBS_TIMEOUT has passed (River's rescuer), on any replica:
//     the job starts over (the companies analysed already come from the
//     caches). After JOBS_MAX_ATTEMPTS such runs the queue gives the unit
//     up and the sweep fails the job. A shutdown's deadline cuts a job
//     short the same way, but its unit is run again at once, elsewhere (on
//     SQLite, one process, the next start fails the job instead).
//   - Every end of a job, the sweep's failures included, stores its
//     job.completed webhook deliveries in the transaction that records the
//     end.
//   - At the start of a process on SQLite (one process only), the jobs
//     its predecessor left pending or running fail, as the spec's start-up
//     rule says (FailUnfinished); on PostgreSQL, another replica may be
//     running them, and pending jobs wait for any replica's worker.
//   - A job belongs to the user who submitted it (Job.UserID), and every
//     analysis it stores records that user as requested_by. Who may read
//     a job is decided at the HTTP edge (Job.VisibleTo).
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// SweepEvery is how often Run sweeps: the jobs whose unit the queue gave
// up fail, and pending jobs without a unit get one.
const SweepEvery = 10 * time.Second

// EndGrace is how much longer than JOBS_TIMEOUT the queue lets a job's
// unit run: the job's own deadline passes first, and its end is recorded
// before the queue would cut the unit.
const EndGrace = 5 * time.Second

// finishTimeout bounds the write that records a job's end, which runs
// after the job's own context may have ended.
const finishTimeout = 10 * time.Second

// defaultRetryAfter is the Retry-After of a refused submission when none of
// the user's jobs is running yet to tell the pace.
const defaultRetryAfter = 30 * time.Second

// Reasons a job fails without ending by itself.
const (
	reasonOrphaned = "the processes running the job stopped each time it ran; it is not run again"
	reasonRestart  = "the service restarted before the job ended"
)

// Store is the job table; *store.Store implements it.
type Store interface {
	// CreateJob stores a pending job and queues its JobStart; it refuses
	// with a *patent.TooManyJobsError when the user has maxPerUser
	// unfinished jobs.
	CreateJob(ctx context.Context, j patent.Job, maxPerUser int) (patent.Job, error)
	ListJobs(ctx context.Context, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error)
	// ClaimJob returns the job unit holds, or else the fairest pending job,
	// now running and held by unit; ok is false when there is none.
	ClaimJob(ctx context.Context, unit int64) (j patent.Job, ok bool, err error)
	JobProgress(ctx context.Context, id string, unit int64, completed int) error
	FinishJob(ctx context.Context, id string, unit int64, status string, result *patent.BatchResult, errMsg string, compose patent.Deliveries[patent.Job]) error
	FailOrphanedJobs(ctx context.Context, reason string, compose patent.Deliveries[patent.Job]) (int64, error)
	FailUnfinishedJobs(ctx context.Context, reason string, compose patent.Deliveries[patent.Job]) (int64, error)
	RefillJobStarts(ctx context.Context) (int64, error)
}

// Batcher analyses a batch; *analysis.Analyzer implements it.
type Batcher interface {
	AnalyzeBatch(ctx context.Context, names []patent.CompanyName, workers int, opts patent.AnalyzeOptions, progress func(done int)) patent.BatchResult
}

// Notifier composes the webhook deliveries of a job that ended; the store
// keeps them in the transaction that records the end (decisions.md: a job
// end and its deliveries commit together). It may be nil (no webhooks). It
// is called with the job as stored, before the end commits.
type Notifier = patent.Deliveries[patent.Job]

// Config holds the job settings.
type Config struct {
	// MaxPerUser is JOBS_MAX_PER_USER: a user's unfinished jobs.
	MaxPerUser int
	// Timeout is JOBS_TIMEOUT: the longest a job runs.
	Timeout time.Duration
}

// Runner accepts jobs and runs the units that start them. It is safe for
// concurrent use.
type Runner struct {
	cfg    Config
	store  Store
	batch  Batcher
	notify Notifier
	logger *slog.Logger
	now    func() time.Time
}

// NewRunner returns a Runner.
func NewRunner(cfg Config, st Store, batch Batcher, notify Notifier, logger *slog.Logger, now func() time.Time) *Runner {
	return &Runner{cfg: cfg, store: st, batch: batch, notify: notify, logger: logger, now: now}
}

// Submit stores a pending job of user userID for companies and queues its
// start. The job belongs to that user, and the analyses it stores record
// the user as requested_by (decisions.md). It returns a
// *patent.TooManyJobsError, with the wait before a slot is expected to
// free, when the user has JOBS_MAX_PER_USER unfinished jobs.
func (r *Runner) Submit(ctx context.Context, userID int64, companies []patent.CompanyName, workers int, model string) (patent.Job, error) {
	names := make([]string, len(companies))
	for i, c := range companies {
		names[i] = c.String()
	}
	// Version 7 ids grow with time, so the listing's tie-breaker (id,
	// descending) agrees with submission order.
	id, err := uuid.NewV7()
	if err != nil {
		return patent.Job{}, err
	}
	j, err := r.store.CreateJob(ctx, patent.Job{ID: id.String(), UserID: userID, Companies: names, MaxWorkers: workers, Model: model,
		TraceParent: traceParent(ctx)}, r.cfg.MaxPerUser)
	var full *patent.TooManyJobsError
	if errors.As(err, &full) {
		full.RetryAfter = r.retryAfter(ctx, userID)
	}
	return j, err
}

// retryAfter estimates when one of user's running jobs ends (retryAfterOf);
// defaultRetryAfter when it cannot tell.
func (r *Runner) retryAfter(ctx context.Context, userID int64) time.Duration {
	running, _, err := r.store.ListJobs(ctx, patent.JobFilter{Status: patent.JobRunning, UserID: userID}, 50, "")
	if err != nil {
		running = nil
	}
	return retryAfterOf(running, r.now(), r.cfg.Timeout)
}

// retryAfterOf is the soonest expected end of the running jobs, each from
// its pace so far (the time since it started, per company done; a job
// with none done yet is expected to take as long again as it has run),
// or defaultRetryAfter without a running job, between a second and limit
// (JOBS_TIMEOUT).
func retryAfterOf(running []patent.Job, now time.Time, limit time.Duration) time.Duration {
	best := time.Duration(-1)
	for _, j := range running {
		if j.StartedAt == nil {
			continue
		}
		ran := now.Sub(*j.StartedAt)
		left := ran
		if j.Completed > 0 {
			left = ran / time.Duration(j.Completed) * time.Duration(max(j.Total-j.Completed, 0))
		}
		if best < 0 || left < best {
			best = left
		}
	}
	if best < 0 {
		best = defaultRetryAfter
	}
	return min(max(best, time.Second), max(limit, time.Second))
}

// Work runs a JobStart: it takes the fairest pending job up (or the one
// the unit held when its process died), runs it within JOBS_TIMEOUT and
// records its end. It returns an error when the job must run again: its
// end could not be recorded, or the queue's context ended (a shutdown), in
// which case the unit is run again at once on another replica.
func (r *Runner) Work(ctx context.Context, u patent.JobStart) error {
	// JOBS_TIMEOUT runs from the unit's start, waits for the pick included,
	// so that it always ends EndGrace before the unit's own deadline.
	deadline := time.Now().Add(r.cfg.Timeout)
	j, ok, err := r.store.ClaimJob(ctx, u.UnitID)
	if err != nil || !ok {
		return err
	}
	ctx, span := startRun(ctx, j)
	defer span.End()
	log := r.logger.With("job_id", j.ID)
	log.InfoContext(ctx, "job started", "companies", len(j.Companies), "unit", u.UnitID)
	runCtx, cancel := context.WithDeadlineCause(ctx, deadline, errTimedOut(r.cfg.Timeout))
	defer cancel()
	names := make([]patent.CompanyName, len(j.Companies))
	for i, c := range j.Companies {
		names[i] = patent.CompanyName(c) // validated when the job was submitted
	}
	opts := patent.AnalyzeOptions{Model: j.Model, RequestedBy: patent.RequesterID(j.UserID)}
	result := r.batch.AnalyzeBatch(runCtx, names, j.MaxWorkers, opts, func(done int) {
		if err := r.store.JobProgress(ctx, j.ID, u.UnitID, done); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "job progress not recorded", "err", err.Error())
		}
	})
	if ctx.Err() != nil {
		log.InfoContext(ctx, "job cut short; it runs again from the start", "cause", context.Cause(ctx).Error())
		return fmt.Errorf("job %s: %w", j.ID, context.Cause(ctx))
	}
	status, msg := patent.JobCompleted, ""
	if runCtx.Err() != nil {
		status, msg = patent.JobFailed, context.Cause(runCtx).Error()
	}
	return r.finish(ctx, j, u.UnitID, status, &result, msg, log)
}

// errTimedOut is the error of a job that ran past JOBS_TIMEOUT; its
// companies not analysed by then report it too.
func errTimedOut(d time.Duration) error {
	return fmt.Errorf("the job ran longer than JOBS_TIMEOUT (%s)", d)
}

func (r *Runner) finish(ctx context.Context, j patent.Job, unit int64, status string, result *patent.BatchResult, msg string, log *slog.Logger) error {
	// A context of its own (keeping the job's span): the job's may be
	// ending.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := r.store.FinishJob(ctx, j.ID, unit, status, result, msg, r.notify); err != nil {
		log.WarnContext(ctx, "job end not recorded; the job runs again", "status", status, "err", err.Error())
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("job.status", status))
	log.InfoContext(ctx, "job finished", "status", status)
	return nil
}

// Run sweeps at once and every SweepEvery until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		r.Sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep fails the running jobs whose unit the queue gave up (each with its
// job.completed webhook), and queues a start for the pending jobs that
// lack one. Any replica may sweep; the store makes the sweeps safe to run
// at once.
func (r *Runner) Sweep(ctx context.Context) {
	n, err := r.store.FailOrphanedJobs(ctx, reasonOrphaned, r.notify)
	switch {
	case err != nil && ctx.Err() == nil:
		r.logger.Warn("failing orphaned jobs failed", "err", err.Error())
	case n > 0:
		r.logger.Warn("failed jobs whose processes stopped", "count", n)
	}
	q, err := r.store.RefillJobStarts(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		r.logger.Warn("queueing job starts failed", "err", err.Error())
	case q > 0:
		r.logger.Info("queued starts of pending jobs that had none", "count", q)
	}
}

// FailUnfinished fails, with their webhooks, the jobs the process before
// this one left pending or running (the spec's start-up rule): call it at
// start-up, before the queue starts, on SQLite only (a single process, so
// none of them is running).
func (r *Runner) FailUnfinished(ctx context.Context) error {
	n, err := r.store.FailUnfinishedJobs(ctx, reasonRestart, r.notify)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if n > 0 {
		r.logger.Warn("failed jobs left unfinished by the previous process", "count", n)
	}
	return nil
}
