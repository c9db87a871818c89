package queue

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// fakeSession is a liveness session the test ends (lose) and opens again
// (reopen).
type fakeSession struct {
	ctx  context.Context
	lose context.CancelCauseFunc
}

var _ Session = (*fakeSession)(nil)

func newFakeSession() *fakeSession {
	s := &fakeSession{}
	s.reopen()
	return s
}

func (s *fakeSession) ID() string                { return "host/1/0000abcd" }
func (s *fakeSession) Context() context.Context  { return s.ctx }
func (s *fakeSession) reopen()                   { s.ctx, s.lose = context.WithCancelCause(context.Background()) }
func (s *fakeSession) end(cause error) (ok bool) { s.lose(cause); return true }

// cores are the three kinds' cores, each blocking until its context ends
// when block is set, and recording the unit it got.
type cores struct {
	block   bool
	entered chan struct{} // receives once a blocking core runs
	run     patent.ScheduledRun
	start   patent.JobStart
	err     error
}

func (c *cores) wait(ctx context.Context) error {
	if c.block {
		c.entered <- struct{}{}
		<-ctx.Done()
		return context.Cause(ctx)
	}
	return c.err
}

func (c *cores) Run(ctx context.Context, u patent.ScheduledRun) error { c.run = u; return c.wait(ctx) }
func (c *cores) Work(ctx context.Context, u patent.JobStart) error    { c.start = u; return c.wait(ctx) }
func (c *cores) Deliver(ctx context.Context, _ patent.DeliveryAttempt) error {
	return c.wait(ctx)
}

// TestWorkersHandTheUnitOver: each worker calls its core with the unit,
// the run's attempt and the job start's own unit id filled in; a replica
// without the core fails the unit.
func TestWorkersHandTheUnitOver(t *testing.T) {
	c := &cores{}
	sess := newFakeSession()
	run := &ScheduledRunWorker{Runs: c, unit: unit{time.Minute, sess}}
	due := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	job := &rivertype.JobRow{ID: 42, Attempt: 2}
	if err := run.Work(t.Context(), &river.Job[patent.ScheduledRun]{JobRow: job, Args: patent.ScheduledRun{TrackedID: 7, DueAt: due}}); err != nil {
		t.Fatal(err)
	}
	if c.run.TrackedID != 7 || !c.run.DueAt.Equal(due) || c.run.Attempt != 2 {
		t.Errorf("the run's core got %+v, want company 7 due %v on attempt 2", c.run, due)
	}
	start := &JobStartWorker{Jobs: c, unit: unit{time.Minute, sess}}
	if err := start.Work(t.Context(), &river.Job[patent.JobStart]{JobRow: job, Args: patent.JobStart{JobID: "j"}}); err != nil {
		t.Fatal(err)
	}
	if c.start.JobID != "j" || c.start.UnitID != 42 {
		t.Errorf("the job's core got %+v, want job j under unit 42", c.start)
	}
	none := &DeliveryWorker{unit: unit{time.Minute, sess}}
	if err := none.Work(t.Context(), &river.Job[patent.DeliveryAttempt]{JobRow: job}); !errors.Is(err, errNoWorker) {
		t.Errorf("a worker without its core = %v, want errNoWorker", err)
	}
}

// TestUnitEndsWithTheSession: a unit running when the replica's session
// ends is stopped at once (its context ends, cause ErrSessionLost): a
// job start is cancelled (its job fails through the sweep), a run and a
// delivery are offered again at once without counting an attempt. A unit
// taken up while the replica has no session is not run: it is offered
// again a moment later.
func TestUnitEndsWithTheSession(t *testing.T) {
	for _, tt := range []struct {
		kind   string
		cancel bool
	}{{patent.KindJobStart, true}, {patent.KindScheduledRun, false}, {patent.KindDelivery, false}} {
		t.Run(tt.kind, func(t *testing.T) {
			sess := newFakeSession()
			c := &cores{block: true, entered: make(chan struct{}, 1)}
			u := unit{time.Hour, sess}
			work := map[string]func() error{
				patent.KindJobStart: func() error {
					return (&JobStartWorker{Jobs: c, unit: u}).Work(t.Context(), &river.Job[patent.JobStart]{JobRow: &rivertype.JobRow{}})
				},
				patent.KindScheduledRun: func() error {
					return (&ScheduledRunWorker{Runs: c, unit: u}).Work(t.Context(), &river.Job[patent.ScheduledRun]{JobRow: &rivertype.JobRow{}})
				},
				patent.KindDelivery: func() error {
					return (&DeliveryWorker{Deliveries: c, unit: u}).Work(t.Context(), &river.Job[patent.DeliveryAttempt]{JobRow: &rivertype.JobRow{}})
				},
			}[tt.kind]
			done := make(chan error, 1)
			go func() { done <- work() }()
			<-c.entered
			sess.end(errors.New("connection reset"))
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the unit did not stop when the session ended")
			}
			var cancelled *rivertype.JobCancelError
			var snoozed *rivertype.JobSnoozeError
			switch {
			case tt.cancel && !errors.As(err, &cancelled):
				t.Errorf("Work = %v, want the unit cancelled", err)
			case !tt.cancel && (!errors.As(err, &snoozed) || snoozed.Duration != 0):
				t.Errorf("Work = %v, want the unit offered again at once", err)
			}
			if !errors.Is(err, ErrSessionLost) && tt.cancel {
				t.Errorf("Work = %v, want the cause ErrSessionLost kept", err)
			}
			// Taken up again while the session is still down: not run.
			c.block = false
			err = work()
			if !errors.As(err, &snoozed) || snoozed.Duration != waitForSession {
				t.Errorf("Work without a session = %v, want offered again in %v", err, waitForSession)
			}
		})
	}
}

// TestUnitTimeout: a unit's context ends at its kind's timeout (cause
// ErrUnitTimedOut), while River (its rescuer, the backstop of work alive
// but stuck) is told RescueMargin more, so that a unit alive but late,
// recording its end, is never taken for another run; a *patent.LaterError
// snoozes the unit for its duration.
func TestUnitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := unit{time.Minute, newFakeSession()}
		ctx, end, err := u.begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer end()
		time.Sleep(59 * time.Second)
		if ctx.Err() != nil {
			t.Fatal("the unit's context ended before its timeout")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !errors.Is(context.Cause(ctx), ErrUnitTimedOut) {
			t.Errorf("cause at the timeout = %v, want ErrUnitTimedOut", context.Cause(ctx))
		}
	})
	u := unit{time.Minute, newFakeSession()}
	if got := u.riverTimeout(); got != time.Minute+RescueMargin || RescueMargin < 15*time.Second {
		t.Errorf("River's timeout %v, want 1m + RescueMargin (%v, above the 10 s writes that record a late unit's end)", got, RescueMargin)
	}
	var snoozed *rivertype.JobSnoozeError
	if err := u.outcome(context.Background(), patent.Later(time.Hour), runAgain); !errors.As(err, &snoozed) || snoozed.Duration != time.Hour {
		t.Errorf("outcome(Later(1h)) = %v, want snoozed an hour", err)
	}
	if err := u.outcome(context.Background(), errors.New("boom"), cancelUnit); err == nil || errors.As(err, &snoozed) {
		t.Errorf("outcome(an error) = %v, want the error (a failed attempt)", err)
	}
}
