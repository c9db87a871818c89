// Package queue runs the service's queued work on River
// (riverqueue/river): the scheduled runs of tracked companies, the
// asynchronous batch jobs and the webhook deliveries, units in the
// database that every replica's workers drain (decisions.md, "patentsvc:
// work every replica shares, bounded and fair"). The store inserts the
// units, in the transactions that store their work; this package runs
// them.
//
// # Caveats
//
//   - Each kind of unit is a worker type (ScheduledRunWorker,
//     JobStartWorker, DeliveryWorker) whose Work calls one method of the
//     core that owns the kind (Workers). Each kind has its own River queue
//     (patent.QueueScheduledRuns, ...) and its own number of workers per
//     replica (Config); a
//     replica with 0 workers for a kind leaves those units to the others,
//     but registers every kind.
//   - A unit runs in a context that ends at its kind's timeout, and when
//     the replica's liveness session ends (Session): a replica cut from
//     the database stops its work at once, for the other replicas take it
//     over (decisions.md, "patentsvc: a dead replica's work resumes in
//     seconds"). A scheduled run or a delivery cut that way is run again
//     (snoozed, not an attempt); a job start is cancelled (its job fails,
//     through the jobs sweep, as a job whose replica died does).
//   - A unit whose replica dies is resolved by the sweeps of the live ones
//     as soon as its session has ended (the store's ReleaseDeadUnits and
//     LostJobs), not by a timeout. River's own rescuer stays as the
//     backstop of work alive but stuck: it takes a unit running longer
//     than its kind's timeout and RescueMargin for another run.
//   - A worker's error is an attempt that failed (River retries it with
//     back-off, up to the unit's runs); a *patent.LaterError runs the unit
//     again after its duration without counting an attempt. A unit cut
//     short by a shutdown (Shutdown's deadline) is made available again
//     at once.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Dialects of the database the queue lives in (the store's).
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// RescueMargin is how much longer than its kind's timeout a unit is left
// running before River's rescuer may run it again: longer than any write
// that records a unit's end after its work's deadline (10 s at most), so
// a unit alive but late is never run twice at once. A dead replica's
// units do not wait for it: the sweeps resolve them once its session
// ends.
const RescueMargin = 30 * time.Second

// SweepEvery is how often every replica's sweeps (the jobs', the
// deliveries' and the scheduled runs') resolve the units of replicas that
// died: what a crash costs, past the moment PostgreSQL ends the dead
// replica's session.
const SweepEvery = 5 * time.Second

// stopGrace bounds the hard stop after Shutdown's deadline: the work's
// contexts are cancelled and River records the interrupted units as
// available again.
const stopGrace = 3 * time.Second

// Session is this replica's liveness session; *store.Session implements
// it.
type Session interface {
	// ID names the replica: River records it as the runner of every unit
	// the replica takes up, and the sweeps tell from it whether that
	// runner is alive.
	ID() string
	// Context ends when the session in force ends (the replica is no
	// longer known alive); it is ended already while none is.
	Context() context.Context
}

// ScheduledRuns runs scheduled runs; *schedule.Scheduler implements it.
type ScheduledRuns interface {
	Run(ctx context.Context, u patent.ScheduledRun) error
}

// JobStarts starts jobs; *jobs.Runner implements it.
type JobStarts interface {
	Work(ctx context.Context, u patent.JobStart) error
}

// Deliveries makes webhook delivery attempts; *webhook.Dispatcher
// implements it.
type Deliveries interface {
	Deliver(ctx context.Context, u patent.DeliveryAttempt) error
}

// Workers are the cores that run each kind of unit. A nil one fails its
// kind's units (only a replica without workers for that kind should have
// one: a scheduler disabled, an analyzer not configured).
type Workers struct {
	Runs       ScheduledRuns
	Jobs       JobStarts
	Deliveries Deliveries
}

// Config holds the queue's settings.
type Config struct {
	// Dialect is Postgres or SQLite: the database of db (New).
	Dialect string
	// ListenDSN, on PostgreSQL, is the database the insert notifications
	// are listened for on (one connection of its own), so that a unit is
	// taken up at once by any replica; empty: the workers poll every second.
	ListenDSN string
	// Workers per replica for each kind; 0 leaves that kind to the other
	// replicas (SCHEDULE_MAX_CONCURRENT, JOBS_MAX_CONCURRENT, and the
	// webhook deliverers).
	ScheduledWorkers, JobWorkers, DeliveryWorkers int
	// Timeouts: how long one run of a unit may take before its context is
	// cancelled (SCHEDULE_RUN_TIMEOUT, JOBS_TIMEOUT, each with a margin,
	// and a webhook attempt's timeout with a margin).
	ScheduledTimeout, JobTimeout, DeliveryTimeout time.Duration
}

// Queue runs units. It is safe for concurrent use.
type Queue struct {
	client   *river.Client[*sql.Tx]
	db       *sql.DB
	dialect  string
	listener *pgxpool.Pool // nil without ListenDSN
	logger   *slog.Logger
}

// New builds the queue's workers on db, the store's connection pool, as
// replica sess.ID(): a worker for every kind, working the kinds whose
// worker count is above 0. Start starts them.
func New(ctx context.Context, db *sql.DB, cfg Config, sess Session, w Workers, logger *slog.Logger) (*Queue, error) {
	q := &Queue{db: db, dialect: cfg.Dialect, logger: logger}
	driver, err := q.driver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	if err := errors.Join(
		river.AddWorkerSafely(workers, &ScheduledRunWorker{Runs: w.Runs, unit: unit{cfg.ScheduledTimeout, sess}}),
		river.AddWorkerSafely(workers, &JobStartWorker{Jobs: w.Jobs, unit: unit{cfg.JobTimeout, sess}}),
		river.AddWorkerSafely(workers, &DeliveryWorker{Deliveries: w.Deliveries, unit: unit{cfg.DeliveryTimeout, sess}}),
	); err != nil {
		q.closeListener()
		return nil, fmt.Errorf("queue: %w", err)
	}
	queues := map[string]river.QueueConfig{}
	for name, n := range map[string]int{patent.QueueScheduledRuns: cfg.ScheduledWorkers, patent.QueueJobStarts: cfg.JobWorkers,
		patent.QueueDeliveries: cfg.DeliveryWorkers} {
		if n > 0 {
			queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	// The client-wide timeout is the shortest kind's: River's rescuer looks
	// at units running longer than it and RescueMargin, then skips those
	// whose own kind's (a worker's Timeout) has not passed.
	shortest, rescue := min(cfg.ScheduledTimeout, cfg.JobTimeout, cfg.DeliveryTimeout), time.Duration(0)
	if shortest > 0 {
		rescue = shortest + RescueMargin
	}
	client, err := river.NewClient(driver, &river.Config{
		ID:                   sess.ID(),
		Logger:               logger.With("component", "river"),
		Workers:              workers,
		Queues:               queues,
		JobTimeout:           shortest,
		RescueStuckJobsAfter: rescue,
	})
	if err != nil {
		q.closeListener()
		return nil, fmt.Errorf("queue: %w", err)
	}
	q.client = client
	return q, nil
}

// driver is River's driver for the dialect: database/sql on the store's
// pool, with a pgx connection for notifications on PostgreSQL when
// ListenDSN is set.
func (q *Queue) driver(ctx context.Context, cfg Config) (riverdriver.Driver[*sql.Tx], error) {
	switch cfg.Dialect {
	case SQLite:
		return riversqlite.New(q.db), nil
	case Postgres:
		if cfg.ListenDSN == "" {
			return riverdatabasesql.New(q.db), nil
		}
		pc, err := pgxpool.ParseConfig(cfg.ListenDSN)
		if err != nil {
			return nil, fmt.Errorf("queue: listener: %w", err)
		}
		pc.MinConns, pc.MaxConns = 0, 1
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("queue: listener: %w", err)
		}
		q.listener = pool
		return riverdatabasesql.NewWithPgxListener(q.db, pool), nil
	}
	return nil, fmt.Errorf("queue: unknown dialect %q", cfg.Dialect)
}

func (q *Queue) closeListener() {
	if q.listener != nil {
		q.listener.Close()
	}
}

// Start starts the workers and River's maintenance (leader election, the
// rescuer, the cleaner). The work runs in contexts derived from ctx: pass
// one whose cancellation is removed, and stop with Shutdown.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("queue: start: %w", err)
	}
	return nil
}

// Shutdown stops taking units up and waits, until ctx ends, for those
// running; then it cancels them, and River makes them available again for
// another replica. It returns at most stopGrace after ctx ends, with an
// error when work was cut short.
func (q *Queue) Shutdown(ctx context.Context) error {
	defer q.closeListener()
	err := q.client.Stop(ctx)
	if err == nil {
		return nil
	}
	hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	return errors.Join(fmt.Errorf("queue: work cut short at shutdown, to be run again: %w", err), q.client.StopAndCancel(hard))
}

// ErrUnitTimedOut is the cause of a unit's context ending at its kind's
// timeout (not a shutdown).
var ErrUnitTimedOut = errors.New("queue: the unit ran longer than its kind's timeout")

// ErrSessionLost is the cause of a unit's context ending because this
// replica's liveness session ended.
var ErrSessionLost = errors.New("queue: this replica's database session ended; its units are taken over")

// errNoWorker fails a unit on a replica built without its core.
var errNoWorker = errors.New("queue: no worker for this kind of unit on this replica")

// waitForSession is how long a unit taken up while the replica has no
// session waits before it is offered again.
const waitForSession = time.Second
