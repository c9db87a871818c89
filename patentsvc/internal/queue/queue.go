// Package queue keeps the service's queued work on River
// (riverqueue/river): the scheduled runs of tracked companies, the
// asynchronous batch jobs and the webhook deliveries, as units in the
// database that every replica's workers drain (decisions.md, "patentsvc:
// work every replica shares, bounded and fair").
//
// # Caveats
//
//   - Units are inserted with InsertTx in the caller's transaction, the one
//     that stores the work they are about (a tracked company, a job, a
//     delivery), so neither is ever committed without the other.
//   - Each kind of unit has its own River queue and its own number of
//     workers per replica (Config); a replica with 0 workers for a kind
//     leaves those units to the others, but registers every kind, because
//     River's rescuer, on whichever replica leads, needs a kind's worker to
//     rescue its units.
//   - A unit whose process dies (kill -9, a lost node) stays running in
//     River until River's rescuer, on the leader, sees it has run longer
//     than its kind's timeout (Config) and RescueMargin, and makes it
//     available again, up to MaxAttempts runs; this is what a crash
//     costs. The margin keeps a unit alive but late (recording its end
//     after its deadline) from being run twice at once. A unit cut short by a
//     shutdown (Shutdown's deadline) is made available again at once and
//     is not counted as an attempt.
//   - Handlers are told apart from River: they take and return domain
//     values. A handler's error is an attempt that failed (River retries
//     it with back-off, up to MaxAttempts); a *patent.LaterError runs the
//     unit again after its duration without counting an attempt.
//   - River's tables live beside the service's (migration line "main",
//     applied by Migrate under the store's migration lock). The store reads
//     river_job's id and state to tell whether a unit is still alive.
package queue

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Dialects of the database the queue lives in (the store's).
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// The kinds of unit, as River stores them (river_job.kind), and their
// queues.
const (
	KindScheduledRun = "scheduled_run"
	KindJobStart     = "job_start"
	KindDelivery     = "webhook_delivery"

	QueueScheduled = "scheduled"
	QueueJobs      = "jobs"
	QueueWebhooks  = "webhooks"
)

// Runs of one unit before River gives it up (discards it): a run that
// fails, panics or whose process dies counts; a shutdown's interruption
// and a *patent.LaterError do not. The store's sweeps deal with the work
// of a discarded unit (a job fails, a delivery fails, a tracked company is
// queued again). A job start's are Config.JobAttempts (JOBS_MAX_ATTEMPTS).
const (
	ScheduledRunAttempts = 3
	DefaultJobAttempts   = 3
	DeliveryAttempts     = 5
)

// RescueMargin is how much longer than its kind's timeout a unit is left
// running before River's rescuer may run it again: longer than any write
// that records a unit's end after its work's deadline (10 s at most), so
// a unit alive but late is never run twice at once. It is part of what a
// crash costs (docs/operations.md, "What a crash costs").
const RescueMargin = 30 * time.Second

// stopGrace bounds the hard stop after Shutdown's deadline: the work's
// contexts are cancelled and River records the interrupted units as
// available again.
const stopGrace = 3 * time.Second

// Handlers run the units; main wires them to the core services. A nil
// handler fails its units (only a replica without workers for that kind
// should have one).
type Handlers struct {
	// ScheduledRun runs a tracked company's scheduled run.
	ScheduledRun func(ctx context.Context, u patent.ScheduledRun) error
	// JobStart starts and runs the fairest pending job.
	JobStart func(ctx context.Context, u patent.JobStart) error
	// Delivery makes a webhook delivery's due attempt.
	Delivery func(ctx context.Context, u patent.DeliveryAttempt) error
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
	// cancelled, and after which River's rescuer takes a unit whose process
	// died for another run (SCHEDULE_RUN_TIMEOUT, JOBS_TIMEOUT, and a
	// webhook attempt's timeout with a margin).
	ScheduledTimeout, JobTimeout, DeliveryTimeout time.Duration
	// JobAttempts is how many times a job start is run (its process died,
	// or it failed) before River gives it up and the sweep fails its job
	// (JOBS_MAX_ATTEMPTS); DefaultJobAttempts when 0.
	JobAttempts int
	// ID names this replica in River's records of who ran a unit
	// (river_job.attempted_by); a name of the host and process when empty.
	ID string
}

// Queue inserts and runs units. It is safe for concurrent use.
type Queue struct {
	client      *river.Client[*sql.Tx]
	db          *sql.DB
	dialect     string
	jobAttempts int
	listener    *pgxpool.Pool // nil without ListenDSN
	logger      *slog.Logger
}

// New builds the queue on db, the store's connection pool (units are
// inserted in the store's transactions). It registers a worker for every
// kind and works the kinds whose worker count is above 0; Start starts
// them.
func New(ctx context.Context, db *sql.DB, cfg Config, h Handlers, logger *slog.Logger) (*Queue, error) {
	q := &Queue{db: db, dialect: cfg.Dialect, jobAttempts: cmp.Or(cfg.JobAttempts, DefaultJobAttempts), logger: logger}
	driver, err := q.driver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	if err := errors.Join(
		river.AddWorkerSafely(workers, newWorker(cfg.ScheduledTimeout, scheduledRun(h.ScheduledRun))),
		river.AddWorkerSafely(workers, newWorker(cfg.JobTimeout, jobStart(h.JobStart))),
		river.AddWorkerSafely(workers, newWorker(cfg.DeliveryTimeout, delivery(h.Delivery))),
	); err != nil {
		q.closeListener()
		return nil, fmt.Errorf("queue: %w", err)
	}
	queues := map[string]river.QueueConfig{}
	for name, n := range map[string]int{QueueScheduled: cfg.ScheduledWorkers, QueueJobs: cfg.JobWorkers, QueueWebhooks: cfg.DeliveryWorkers} {
		if n > 0 {
			queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	// The client-wide timeout is the shortest kind's: River's rescuer looks
	// at units running longer than it and RescueMargin, then skips those
	// whose own kind's (worker.Timeout) has not passed.
	shortest, rescue := min(cfg.ScheduledTimeout, cfg.JobTimeout, cfg.DeliveryTimeout), time.Duration(0)
	if shortest > 0 {
		rescue = shortest + RescueMargin
	}
	client, err := river.NewClient(driver, &river.Config{
		ID:                   cmp.Or(cfg.ID, ClientID()),
		Logger:               logger.With("component", "river"),
		Workers:              workers,
		Queues:               queues,
		JobTimeout:           shortest,
		RescueStuckJobsAfter: rescue,
		MaxAttempts:          DeliveryAttempts,
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
// another replica, without counting an attempt. It returns at most
// stopGrace after ctx ends, with an error when work was cut short.
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

// InsertTx queues units in tx, the caller's transaction, and returns them
// as stored, in order. A scheduled run queued already for the same due
// time, or a delivery's attempts still alive, are not queued twice: the
// unit is the one queued before, marked Duplicate.
func (q *Queue) InsertTx(ctx context.Context, tx *sql.Tx, units ...patent.Unit) ([]patent.Queued, error) {
	if len(units) == 0 {
		return nil, nil
	}
	params := make([]river.InsertManyParams, len(units))
	for i, u := range units {
		p, err := q.insertParams(u)
		if err != nil {
			return nil, err
		}
		params[i] = p
	}
	res, err := q.client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, fmt.Errorf("queue: insert: %w", err)
	}
	return inOrder(params, res)
}

// inOrder returns River's answer to a batch insert in the order of the
// units inserted, matched by kind and arguments: River does not promise
// its rows come back in order (SQLite's RETURNING has none), and a unit
// taken for another would point a row at the wrong unit.
func inOrder(params []river.InsertManyParams, res []*rivertype.JobInsertResult) ([]patent.Queued, error) {
	byKey := make(map[string][]*rivertype.JobInsertResult, len(res))
	for _, r := range res {
		k, err := unitKey(r.Job.Kind, r.Job.EncodedArgs)
		if err != nil {
			return nil, err
		}
		byKey[k] = append(byKey[k], r)
	}
	out := make([]patent.Queued, len(params))
	for i, p := range params {
		args, err := json.Marshal(p.Args)
		if err != nil {
			return nil, fmt.Errorf("queue: insert: %w", err)
		}
		k, err := unitKey(p.Args.Kind(), args)
		if err != nil {
			return nil, err
		}
		rs := byKey[k]
		if len(rs) == 0 {
			return nil, fmt.Errorf("queue: insert: no unit came back for a %s", p.Args.Kind())
		}
		out[i] = patent.Queued{UnitID: rs[0].Job.ID, Duplicate: rs[0].UniqueSkippedAsDuplicate}
		byKey[k] = rs[1:]
	}
	return out, nil
}

// unitKey is a unit's kind and arguments in one canonical form (the
// database may re-encode JSON: PostgreSQL's jsonb orders keys and drops
// spaces).
func unitKey(kind string, args []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("queue: a unit's arguments: %w", err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("queue: a unit's arguments: %w", err)
	}
	return kind + " " + string(canon), nil
}

// liveStates are the states of a unit that may still run.
var liveStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// insertParams are River's arguments and options for a unit.
func (q *Queue) insertParams(u patent.Unit) (river.InsertManyParams, error) {
	switch u := u.(type) {
	case patent.ScheduledRun:
		// One unit per due time, also once it completed: a due time runs
		// once (until River's cleaner drops the completed unit, a day
		// later, when the company has long been due again).
		return river.InsertManyParams{Args: scheduledRunArgs{TrackedID: u.TrackedID, DueAt: u.DueAt.UTC(), TraceParent: u.TraceParent},
			InsertOpts: &river.InsertOpts{Queue: QueueScheduled, MaxAttempts: ScheduledRunAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}}, nil
	case patent.JobStart:
		// Not unique: a job start takes up the fairest pending job, not
		// necessarily its own, and one with none left to take ends at once.
		return river.InsertManyParams{Args: jobStartArgs{JobID: u.JobID},
			InsertOpts: &river.InsertOpts{Queue: QueueJobs, MaxAttempts: q.jobAttempts}}, nil
	case patent.DeliveryAttempt:
		return river.InsertManyParams{Args: deliveryArgs{DeliveryID: u.DeliveryID},
			InsertOpts: &river.InsertOpts{Queue: QueueWebhooks, MaxAttempts: DeliveryAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}}, nil
	}
	return river.InsertManyParams{}, fmt.Errorf("queue: unknown unit %T", u)
}

// ClientID names this process in River's records: the host, the process id
// and a random suffix (a restarted container may reuse both).
func ClientID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%x", host, os.Getpid(), b)
}

// Migrate applies River's migrations, each version in a transaction of
// its own (a PostgreSQL enum value added by one version cannot be used in
// its transaction), through inTx: the store runs it under its migration
// lock, after its own migrations, so replicas starting at once apply each
// version once.
func Migrate(ctx context.Context, inTx func(func(*sql.Tx) error) error, dialect string) error {
	var driver riverdriver.Driver[*sql.Tx]
	switch dialect {
	case Postgres:
		driver = riverdatabasesql.New(nil)
	case SQLite:
		driver = riversqlite.New(nil)
	default:
		return fmt.Errorf("queue: unknown dialect %q", dialect)
	}
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("queue: migrate: %w", err)
	}
	for _, v := range m.AllVersions() {
		err := inTx(func(tx *sql.Tx) error {
			// MigrateTx is deprecated because several versions in one
			// transaction can fail; here each transaction holds one version,
			// and it must be ours (under the store's migration lock).
			//lint:ignore SA1019 one version per transaction, the case the deprecation allows
			_, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: v.Version})
			return err
		})
		if err != nil {
			return fmt.Errorf("queue: migrate to version %d: %w", v.Version, err)
		}
	}
	return nil
}
