// Package jobs runs asynchronous batch analyses as database rows held
// through leases.
//
// # Caveats
//
//   - A job is created pending, held by the process that accepted it
//     (lease owner = that process's id) with a lease of LeaseFor (30 s);
//     the process renews its leases every RenewEvery (10 s) and runs the
//     job itself. There is no queue shared between replicas: a job is
//     never run twice, and never moves to another process.
//   - At start-up and every RenewEvery, every job still pending or running
//     whose lease has expired is failed, with a logged count: its process
//     stopped. With one replica that is the spec's rule (after a restart
//     every job of the old process fails); with several, a rolling update
//     never fails a job a live replica still runs.
//   - Shutdown stops accepting jobs, lets the companies being analysed
//     finish (bounded by the shutdown context), reports the companies not
//     started as not analysed, and fails the unfinished jobs with the
//     reason, so clients are not left waiting for the lease to expire.
//   - A job belongs to the user who submitted it (Job.UserID), and every
//     analysis it stores records that user as requested_by. Who may read
//     a job is decided at the HTTP edge (Job.VisibleTo).
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Lease timing (decisions.md).
const (
	LeaseFor   = 30 * time.Second
	RenewEvery = 10 * time.Second
)

// finishTimeout bounds the write that records a job's end, which runs
// after the job's own context may have been cancelled.
const finishTimeout = 10 * time.Second

// ErrShuttingDown is returned by Submit once Shutdown has begun. It is a
// kind of patent.ErrUnavailable.
var ErrShuttingDown = patent.NewKindError(patent.ErrUnavailable, "the service is shutting down")

// Store is the job table; *store.Store implements it.
type Store interface {
	CreateJob(ctx context.Context, j patent.Job, owner string, leaseFor time.Duration) (patent.Job, error)
	StartJob(ctx context.Context, id, owner string, leaseFor time.Duration) error
	JobProgress(ctx context.Context, id, owner string, completed int, leaseFor time.Duration) error
	FinishJob(ctx context.Context, id, owner, status string, result *patent.BatchResult, errMsg string, compose patent.Deliveries[patent.Job]) error
	RenewLeases(ctx context.Context, owner string, leaseFor time.Duration) (int64, error)
	FailExpiredJobs(ctx context.Context, reason string) (int64, error)
}

// Batcher analyses a batch; *analysis.Analyzer implements it.
type Batcher interface {
	AnalyzeBatch(ctx context.Context, names []patent.CompanyName, workers int, opts patent.AnalyzeOptions,
		quit <-chan struct{}, progress func(done int)) patent.BatchResult
}

// Notifier composes the webhook deliveries of a job that ended; the store
// keeps them in the transaction that records the end (decisions.md: a job
// end and its deliveries commit together). It may be nil (no webhooks). It
// is called with the job as stored, before the end commits.
type Notifier = patent.Deliveries[patent.Job]

// Runner accepts and runs jobs. It is safe for concurrent use.
type Runner struct {
	store   Store
	batch   Batcher
	owner   string
	logger  *slog.Logger
	slots   chan struct{}
	notify  Notifier
	quit    chan struct{}
	mu      sync.Mutex
	closing bool
	running sync.WaitGroup
	// ctx is the context jobs run in: it outlives requests and is
	// cancelled only when Shutdown's deadline passes.
	ctx    context.Context
	cancel context.CancelFunc
}

// NewRunner returns a Runner whose jobs run at most maxConcurrent at once
// (the others wait, pending, with their leases renewed). owner identifies
// this process in lease columns (OwnerID). The jobs run in a context
// derived from base: its values carry over, its cancellation does not, so
// that jobs go on draining after the shutdown signal until Shutdown's
// deadline cancels them.
func NewRunner(base context.Context, st Store, batch Batcher, owner string, maxConcurrent int, notify Notifier, logger *slog.Logger) *Runner {
	ctx, cancel := context.WithCancel(context.WithoutCancel(base))
	return &Runner{store: st, batch: batch, owner: owner, logger: logger, slots: make(chan struct{}, max(maxConcurrent, 1)),
		notify: notify, quit: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// OwnerID names this process in job leases: host, pid and a random suffix
// (a restarted container may reuse both).
func OwnerID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

// Owner is this process's lease id.
func (r *Runner) Owner() string { return r.owner }

// Submit stores a pending job of user userID for companies and starts it
// in the background. The job belongs to that user, and the analyses it
// stores record the user as requested_by (decisions.md).
func (r *Runner) Submit(ctx context.Context, userID int64, companies []patent.CompanyName, workers int, model string) (patent.Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return patent.Job{}, ErrShuttingDown
	}
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
		TraceParent: traceParent(ctx)}, r.owner, LeaseFor)
	if err != nil {
		return patent.Job{}, err
	}
	r.running.Add(1)
	go r.run(j, companies)
	return j, nil
}

func (r *Runner) run(j patent.Job, companies []patent.CompanyName) {
	defer r.running.Done()
	ctx, span := startRun(r.ctx, j)
	defer span.End()
	log := r.logger.With("job_id", j.ID)
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-r.quit:
		r.finish(ctx, j, patent.JobFailed, nil, "the service shut down before the job started", log)
		return
	}
	if err := r.store.StartJob(ctx, j.ID, r.owner, LeaseFor); err != nil {
		log.WarnContext(ctx, "job could not start", "err", err.Error())
		return
	}
	log.InfoContext(ctx, "job started", "companies", len(companies))
	opts := patent.AnalyzeOptions{Model: j.Model, RequestedBy: patent.RequesterID(j.UserID)}
	result := r.batch.AnalyzeBatch(ctx, companies, j.MaxWorkers, opts, r.quit, func(done int) {
		if err := r.store.JobProgress(ctx, j.ID, r.owner, done, LeaseFor); err != nil {
			log.WarnContext(ctx, "job progress not recorded", "err", err.Error())
		}
	})
	select {
	case <-r.quit:
		r.finish(ctx, j, patent.JobFailed, &result, "the service shut down before the job finished", log)
	default:
		r.finish(ctx, j, patent.JobCompleted, &result, "", log)
	}
}

func (r *Runner) finish(ctx context.Context, j patent.Job, status string, result *patent.BatchResult, msg string, log *slog.Logger) {
	// A context of its own (keeping the job's span): the job's may be
	// cancelled by now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := r.store.FinishJob(ctx, j.ID, r.owner, status, result, msg, r.notify); err != nil {
		log.WarnContext(ctx, "job end not recorded", "status", status, "err", err.Error())
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("job.status", status))
	log.InfoContext(ctx, "job finished", "status", status)
}

// Run renews this process's leases and fails other processes' expired
// jobs, at once and every RenewEvery, until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	r.sweep(ctx)
	t := time.NewTicker(RenewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.store.RenewLeases(ctx, r.owner, LeaseFor); err != nil && ctx.Err() == nil {
				r.logger.Warn("renewing job leases failed", "err", err.Error())
			}
			r.sweep(ctx)
		}
	}
}

// sweep fails the jobs whose lease expired.
func (r *Runner) sweep(ctx context.Context) {
	n, err := r.store.FailExpiredJobs(ctx, "the process running the job stopped (its lease expired)")
	switch {
	case err != nil && ctx.Err() == nil:
		r.logger.Warn("failing expired jobs failed", "err", err.Error())
	case n > 0:
		r.logger.Warn("failed jobs whose process stopped", "count", n)
	}
}

// Shutdown stops accepting jobs and waits, until ctx ends, for the
// companies being analysed; unfinished jobs are failed. Jobs still running
// at ctx's end have their calls cancelled, and Shutdown returns at most
// writeGrace later; a job whose end was not recorded by then fails when its
// lease expires (another replica's sweep).
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if !r.closing {
		r.closing = true
		close(r.quit)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.running.Wait(); close(done) }()
	select {
	case <-done:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		// The cancelled jobs record their end (each write capped by
		// finishTimeout); Shutdown waits for that at most writeGrace more,
		// so the process keeps to its shutdown budget whatever the
		// database does.
		select {
		case <-done:
		case <-time.After(writeGrace):
		}
		return fmt.Errorf("jobs: shutdown: %w", ctx.Err())
	}
}

// writeGrace is how long after the shutdown deadline Shutdown waits for the
// cancelled jobs to record their end (the scheduler allows the same).
const writeGrace = 2 * time.Second
