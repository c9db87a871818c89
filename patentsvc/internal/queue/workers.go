package queue

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// River's arguments of each kind: the unit's fields, as stored in
// river_job.args. The fields marked unique make the unit's identity
// (InsertTx).
type (
	scheduledRunArgs struct {
		TrackedID   int64     `json:"tracked_id" river:"unique"`
		DueAt       time.Time `json:"due_at" river:"unique"`
		TraceParent string    `json:"trace_parent,omitempty"`
	}
	jobStartArgs struct {
		JobID string `json:"job_id"`
	}
	deliveryArgs struct {
		DeliveryID string `json:"delivery_id" river:"unique"`
	}
)

func (scheduledRunArgs) Kind() string { return KindScheduledRun }
func (jobStartArgs) Kind() string     { return KindJobStart }
func (deliveryArgs) Kind() string     { return KindDelivery }

// worker is a River worker of one kind: it runs the unit through work,
// with the kind's timeout.
type worker[A river.JobArgs] struct {
	river.WorkerDefaults[A]
	timeout time.Duration
	work    func(ctx context.Context, j *river.Job[A]) error
}

func newWorker[A river.JobArgs](timeout time.Duration, work func(ctx context.Context, j *river.Job[A]) error) *worker[A] {
	return &worker[A]{timeout: timeout, work: work}
}

// Work runs the unit within the kind's timeout and maps the handler's
// outcome to River's: a *patent.LaterError snoozes the unit (run again
// later, not an attempt).
func (w *worker[A]) Work(ctx context.Context, j *river.Job[A]) error {
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, w.timeout, ErrUnitTimedOut)
		defer cancel()
	}
	err := w.work(ctx, j)
	var later *patent.LaterError
	if errors.As(err, &later) {
		return river.JobSnooze(later.After)
	}
	return err
}

// Timeout is what River knows of the kind's timeout: the kind's own (the
// unit's context ends then, Work) plus RescueMargin. River's rescuer takes
// a unit running longer than this for another run, so a unit whose work
// ran to its deadline still has RescueMargin to record its end (those
// writes outlive the unit's context) before it could be run twice.
func (w *worker[A]) Timeout(*river.Job[A]) time.Duration {
	if w.timeout <= 0 {
		return 0
	}
	return w.timeout + RescueMargin
}

// ErrUnitTimedOut is the cause of a unit's context ending at its kind's
// timeout (not a shutdown).
var ErrUnitTimedOut = errors.New("queue: the unit ran longer than its kind's timeout")

// errNoHandler fails a unit on a replica built without its handler.
var errNoHandler = errors.New("queue: no handler for this kind of unit on this replica")

func scheduledRun(h func(context.Context, patent.ScheduledRun) error) func(context.Context, *river.Job[scheduledRunArgs]) error {
	return func(ctx context.Context, j *river.Job[scheduledRunArgs]) error {
		if h == nil {
			return errNoHandler
		}
		return h(ctx, patent.ScheduledRun{TrackedID: j.Args.TrackedID, DueAt: j.Args.DueAt, TraceParent: j.Args.TraceParent})
	}
}

func jobStart(h func(context.Context, patent.JobStart) error) func(context.Context, *river.Job[jobStartArgs]) error {
	return func(ctx context.Context, j *river.Job[jobStartArgs]) error {
		if h == nil {
			return errNoHandler
		}
		return h(ctx, patent.JobStart{JobID: j.Args.JobID, UnitID: j.ID})
	}
}

func delivery(h func(context.Context, patent.DeliveryAttempt) error) func(context.Context, *river.Job[deliveryArgs]) error {
	return func(ctx context.Context, j *river.Job[deliveryArgs]) error {
		if h == nil {
			return errNoHandler
		}
		return h(ctx, patent.DeliveryAttempt{DeliveryID: j.Args.DeliveryID})
	}
}
