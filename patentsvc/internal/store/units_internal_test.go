package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestInOrderMatchesByIdentity: River's rows, returned in another order
// and re-encoded as a database does (keys reordered, spaces), are matched
// to the units inserted by kind and identity, not by position; a run
// queued already by another replica comes back as that replica's unit,
// with its own reserved alert ids, and still matches.
func TestInOrderMatchesByIdentity(t *testing.T) {
	due := time.Date(2026, 11, 27, 8, 30, 0, 123456000, time.UTC)
	var params []river.InsertManyParams
	var res []*rivertype.JobInsertResult
	for i := range 5 {
		params = append(params, river.InsertManyParams{Args: patent.ScheduledRun{TrackedID: int64(i + 1), DueAt: due, CompanyName: "C",
			AlertIDs: []int64{int64(10 * i), int64(10*i + 1)}}})
		params = append(params, river.InsertManyParams{Args: patent.JobStart{JobID: fmt.Sprint("j", i)}})
	}
	for i := 4; i >= 0; i-- { // reversed, and the job starts first
		res = append(res, &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: int64(200 + i), Kind: patent.KindJobStart,
			EncodedArgs: fmt.Appendf(nil, `{ "job_id" : "j%d" }`, i)}})
	}
	for i := 4; i >= 0; i-- {
		ids := fmt.Sprintf("[%d, %d]", 10*i, 10*i+1)
		if i == 2 {
			ids = "[998, 999]" // queued before, by another replica
		}
		res = append(res, &rivertype.JobInsertResult{UniqueSkippedAsDuplicate: i == 2, Job: &rivertype.JobRow{ID: int64(100 + i), Kind: patent.KindScheduledRun,
			EncodedArgs: fmt.Appendf(nil, `{"alert_ids": %s, "company_name": "C", "due_at": "2026-11-27T08:30:00.123456Z", "tracked_id": %d}`, ids, i+1)}})
	}
	got, err := inOrder(params, res)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		run, start := got[2*i], got[2*i+1]
		if run.id != int64(100+i) || run.duplicate != (i == 2) || start.id != int64(200+i) || start.duplicate {
			t.Errorf("unit %d: run %+v, start %+v; want units %d and %d", i, run, start, 100+i, 200+i)
		}
	}
	if _, err := inOrder(params, res[1:]); err == nil {
		t.Error("a unit without a row: no error")
	}
}
