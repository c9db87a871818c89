package queue

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// ScheduledRunWorker runs a tracked company's scheduled run: Runs.Run
// (schedule.Scheduler.Run). A run cut by the end of the replica's session
// is run again, on whichever replica takes it up; it records its due time
// once, however often it runs.
type ScheduledRunWorker struct {
	river.WorkerDefaults[patent.ScheduledRun]
	Runs ScheduledRuns
	unit unit
}

// Work runs the unit.
func (w *ScheduledRunWorker) Work(ctx context.Context, j *river.Job[patent.ScheduledRun]) error {
	if w.Runs == nil {
		return errNoWorker
	}
	u := j.Args
	u.Attempt = j.Attempt
	return w.unit.run(ctx, runAgain, func(ctx context.Context) error { return w.Runs.Run(ctx, u) })
}

// Timeout is the kind's timeout and RescueMargin (unit.riverTimeout).
func (w *ScheduledRunWorker) Timeout(*river.Job[patent.ScheduledRun]) time.Duration {
	return w.unit.riverTimeout()
}

// JobStartWorker starts the fairest pending job and runs it: Jobs.Work
// (jobs.Runner.Work). A job cut by the end of the replica's session is
// not run again: its unit is cancelled, and the jobs sweep fails the job
// with its webhook, as for a replica that died.
type JobStartWorker struct {
	river.WorkerDefaults[patent.JobStart]
	Jobs JobStarts
	unit unit
}

// Work runs the unit.
func (w *JobStartWorker) Work(ctx context.Context, j *river.Job[patent.JobStart]) error {
	if w.Jobs == nil {
		return errNoWorker
	}
	u := j.Args
	u.UnitID = j.ID
	return w.unit.run(ctx, cancelUnit, func(ctx context.Context) error { return w.Jobs.Work(ctx, u) })
}

// Timeout is the kind's timeout and RescueMargin (unit.riverTimeout).
func (w *JobStartWorker) Timeout(*river.Job[patent.JobStart]) time.Duration {
	return w.unit.riverTimeout()
}

// DeliveryWorker makes a webhook delivery's due attempt: Deliveries.Deliver
// (webhook.Dispatcher.Deliver). An attempt cut by the end of the
// replica's session is made again (the receiver may get it twice, with the
// same webhook-id).
type DeliveryWorker struct {
	river.WorkerDefaults[patent.DeliveryAttempt]
	Deliveries Deliveries
	unit       unit
}

// Work runs the unit.
func (w *DeliveryWorker) Work(ctx context.Context, j *river.Job[patent.DeliveryAttempt]) error {
	if w.Deliveries == nil {
		return errNoWorker
	}
	return w.unit.run(ctx, runAgain, func(ctx context.Context) error { return w.Deliveries.Deliver(ctx, j.Args) })
}

// Timeout is the kind's timeout and RescueMargin (unit.riverTimeout).
func (w *DeliveryWorker) Timeout(*river.Job[patent.DeliveryAttempt]) time.Duration {
	return w.unit.riverTimeout()
}

// unit holds what every kind's run shares: its timeout and the replica's
// liveness session.
type unit struct {
	timeout time.Duration
	session Session
}

// run runs work, the core's call, in the context begin gives it, and maps
// its answer to River's (outcome), loss saying what becomes of a unit cut
// by the end of the replica's session.
func (u unit) run(ctx context.Context, loss onLoss, work func(ctx context.Context) error) error {
	ctx, end, err := u.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	return u.outcome(ctx, work(ctx), loss)
}

// begin returns the context a unit runs in: it ends at the kind's timeout
// (cause ErrUnitTimedOut) and when the replica's session ends (cause
// ErrSessionLost); end releases it. A unit taken up while the replica has
// no session is not run: it is offered again a moment later (not an
// attempt).
func (u unit) begin(ctx context.Context) (context.Context, func(), error) {
	var sess context.Context
	if u.session != nil {
		sess = u.session.Context()
		if sess.Err() != nil {
			return nil, nil, river.JobSnooze(waitForSession)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := func() bool { return false }
	if sess != nil {
		stop = context.AfterFunc(sess, func() { cancel(ErrSessionLost) })
	}
	if u.timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, u.timeout, ErrUnitTimedOut)
		return ctx, func() { cancelTimeout(); stop(); cancel(nil) }, nil
	}
	return ctx, func() { stop(); cancel(nil) }, nil
}

// onLoss is what becomes of a unit cut by the end of its replica's
// session.
type onLoss int

const (
	runAgain   onLoss = iota // offered again at once, not counted as an attempt
	cancelUnit               // ended for good; its kind's sweep resolves its work
)

// outcome maps the core's answer to River's: a unit cut by the end of the
// replica's session is run again or cancelled (loss); a *patent.LaterError
// snoozes the unit (run again later, not an attempt); another error is a
// failed attempt.
func (u unit) outcome(ctx context.Context, err error, loss onLoss) error {
	if err != nil && errors.Is(context.Cause(ctx), ErrSessionLost) {
		if loss == cancelUnit {
			return river.JobCancel(err)
		}
		return river.JobSnooze(0)
	}
	var later *patent.LaterError
	if errors.As(err, &later) {
		return river.JobSnooze(later.After)
	}
	return err
}

// riverTimeout is what River knows of the kind's timeout: the kind's own
// (the unit's context ends then, begin) plus RescueMargin. River's rescuer
// takes a unit running longer than this for another run, so a unit whose
// work ran to its deadline still has RescueMargin to record its end
// (those writes outlive the unit's context) before it could be run twice.
func (u unit) riverTimeout() time.Duration {
	if u.timeout <= 0 {
		return 0
	}
	return u.timeout + RescueMargin
}
