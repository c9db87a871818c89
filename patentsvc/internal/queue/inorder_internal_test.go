package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TestInOrderMatchesByArguments: River's rows, returned in another order
// and re-encoded as a database does (keys reordered, spaces), are matched
// to the units inserted by kind and arguments, not by position.
func TestInOrderMatchesByArguments(t *testing.T) {
	due := time.Date(2026, 11, 27, 8, 30, 0, 123456000, time.UTC)
	var params []river.InsertManyParams
	var res []*rivertype.JobInsertResult
	for i := range 5 {
		params = append(params, river.InsertManyParams{Args: scheduledRunArgs{TrackedID: int64(i + 1), DueAt: due}})
		params = append(params, river.InsertManyParams{Args: jobStartArgs{JobID: fmt.Sprint("j", i)}})
	}
	for i := 4; i >= 0; i-- { // reversed, and the job starts first
		res = append(res, &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: int64(200 + i), Kind: KindJobStart,
			EncodedArgs: fmt.Appendf(nil, `{ "job_id" : "j%d" }`, i)}})
	}
	for i := 4; i >= 0; i-- {
		res = append(res, &rivertype.JobInsertResult{UniqueSkippedAsDuplicate: i == 2, Job: &rivertype.JobRow{ID: int64(100 + i), Kind: KindScheduledRun,
			EncodedArgs: fmt.Appendf(nil, `{"due_at": "2026-11-27T08:30:00.123456Z", "tracked_id": %d}`, i+1)}})
	}
	got, err := inOrder(params, res)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		run, start := got[2*i], got[2*i+1]
		if run.UnitID != int64(100+i) || run.Duplicate != (i == 2) || start.UnitID != int64(200+i) || start.Duplicate {
			t.Errorf("unit %d: run %+v, start %+v; want units %d and %d", i, run, start, 100+i, 200+i)
		}
	}
	if _, err := inOrder(params, res[1:]); err == nil {
		t.Error("a unit without a row: no error")
	}
}

// TestWorkerTimeoutMargin: a unit's context ends at its kind's timeout,
// while River (its rescuer) is told RescueMargin more, so that a unit
// alive but late, recording its end, is never taken for another run.
func TestWorkerTimeoutMargin(t *testing.T) {
	var left time.Duration
	w := newWorker(time.Minute, func(ctx context.Context, _ *river.Job[jobStartArgs]) error {
		d, _ := ctx.Deadline()
		left = time.Until(d)
		return nil
	})
	if err := w.Work(context.Background(), &river.Job[jobStartArgs]{}); err != nil {
		t.Fatal(err)
	}
	if left <= 59*time.Second || left > time.Minute {
		t.Errorf("the unit's context ends in %v, want the kind's timeout (1m)", left)
	}
	if got := w.Timeout(nil); got != time.Minute+RescueMargin || RescueMargin < 15*time.Second {
		t.Errorf("River's timeout %v, want 1m + RescueMargin (%v, above the 10 s writes that record a late unit's end)", got, RescueMargin)
	}
}
