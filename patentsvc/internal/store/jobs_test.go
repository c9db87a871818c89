package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// createJob stores a pending job of user with no per-user limit.
func createJob(t *testing.T, s *store.Store, id string, user int64, companies ...string) patent.Job {
	t.Helper()
	j, err := s.Jobs().CreateJob(ctx, patent.Job{ID: id, UserID: user, Companies: companies, MaxWorkers: 2, Model: "m"}, 0, 0)
	if err != nil {
		t.Fatalf("CreateJob(%s) = %v", id, err)
	}
	return j
}

// claim takes a job up for unit as the jobs core does, from the store's
// primitives: the job the unit holds (HeldJob), or else the fairest head
// of PendingHeads (patent.FairestJob), started for the unit (StartJob). It
// returns the job's id ("" for none).
func claim(t *testing.T, s *store.Store, unit int64) string {
	t.Helper()
	j, ok, err := s.Jobs().HeldJob(ctx, unit)
	if err != nil {
		t.Fatalf("HeldJob(%d) = %v", unit, err)
	}
	if !ok {
		heads, err := s.Jobs().PendingHeads(ctx)
		if err != nil {
			t.Fatalf("PendingHeads = %v", err)
		}
		pick, any := patent.FairestJob(heads)
		if !any {
			return ""
		}
		if j, ok, err = s.Jobs().StartJob(ctx, pick.JobID, unit); err != nil || !ok {
			t.Fatalf("StartJob(%s, %d) = %v, %v", pick.JobID, unit, ok, err)
		}
	}
	if j.Status != patent.JobRunning || j.UnitID != unit || j.StartedAt == nil {
		t.Fatalf("job of unit %d = %+v, want running, held by the unit, started", unit, j)
	}
	return j.ID
}

// TestJobLifecycle: a job is stored pending with its start queued in the
// same transaction; a unit takes it up, takes the same job up again when it
// is run again, and alone may report progress and the end.
func TestJobLifecycle(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		j := createJob(t, s, "job-1", 7, "Acme", "IBM")
		if j.Status != patent.JobPending || j.Total != 2 || j.Progress() != 0 || j.UnitID != 0 || j.StartedAt != nil {
			t.Fatalf("CreateJob = %+v", j)
		}
		units := storetest.Units(t, s, "job_start")
		if len(units) != 1 || units[0].State != "available" || !strings.Contains(units[0].Args, `"job_id":"job-1"`) {
			t.Fatalf("units after CreateJob = %+v, want one available job start for job-1", units)
		}
		if got := claim(t, s, 101); got != "job-1" {
			t.Fatalf("first claim = %q, want job-1", got)
		}
		if got := claim(t, s, 101); got != "job-1" {
			t.Fatalf("claim by the same unit, run again = %q, want job-1 again", got)
		}
		if got := claim(t, s, 102); got != "" {
			t.Fatalf("claim by another unit = %q, want none left", got)
		}
		if err := s.Jobs().JobProgress(ctx, "job-1", 102, 1); !errors.Is(err, store.ErrJobLost) {
			t.Fatalf("JobProgress by another unit = %v, want ErrJobLost", err)
		}
		if err := s.Jobs().JobProgress(ctx, "job-1", 101, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Jobs().JobProgress(ctx, "job-1", 101, 0); err != nil { // run again from the start
			t.Fatal(err)
		}
		got, _ := s.Jobs().Job(ctx, "job-1")
		if got.Status != patent.JobRunning || got.Completed != 1 || got.Progress() != 0.5 || got.Companies[1] != "IBM" || got.MaxWorkers != 2 {
			t.Fatalf("Job = %+v, want running with 1 of 2 done (progress never goes back)", got)
		}
		res := &patent.BatchResult{Model: "m", Results: []patent.CompanyAnalysis{{CompanyName: "Acme", Success: true}, {CompanyName: "IBM"}}}
		if err := finishJob(s, "job-1", 102, patent.JobCompleted, res, ""); !errors.Is(err, store.ErrJobLost) {
			t.Fatalf("FinishJob by another unit = %v, want ErrJobLost", err)
		}
		if err := finishJob(s, "job-1", 101, patent.JobCompleted, res, ""); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Jobs().Job(ctx, "job-1")
		if got.Status != patent.JobCompleted || got.Result == nil || len(got.Result.Results) != 2 || got.Completed != 2 {
			t.Fatalf("finished Job = %+v", got)
		}
		if err := finishJob(s, "job-1", 101, patent.JobFailed, nil, "x"); !errors.Is(err, store.ErrJobLost) {
			t.Fatalf("finishing twice = %v, want ErrJobLost", err)
		}
		if _, err := s.Jobs().Job(ctx, "nope"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("Job(unknown) = %v", err)
		}
	})
}

// TestJobFairness: PendingHeads gives patent.FairestJob what it needs (each
// user's oldest pending job and the user's running count), so a free unit
// takes up the oldest pending job of the user with the fewest running
// (decisions.md), not the oldest job overall.
func TestJobFairness(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for i := range 4 {
			createJob(t, s, fmt.Sprintf("a%d", i), 1, "A")
		}
		createJob(t, s, "b0", 2, "B")
		createJob(t, s, "b1", 2, "B")
		var order []string
		order = append(order, claim(t, s, 1)) // a0: nobody runs anything
		order = append(order, claim(t, s, 2)) // b0: user 2 runs none, user 1 one
		order = append(order, claim(t, s, 3)) // a1: one each, a1 is older than b1
		createJob(t, s, "c0", 3, "C")
		order = append(order, claim(t, s, 4)) // c0: user 3 runs none
		order = append(order, claim(t, s, 5)) // b1: user 2 runs one, user 1 two
		order = append(order, claim(t, s, 6)) // a2
		if want := "[a0 b0 a1 c0 b1 a2]"; fmt.Sprint(order) != want {
			t.Errorf("start order = %v, want %s", order, want)
		}
	})
}

// TestJobLimitPerUser: a user's unfinished jobs are capped (decisions.md,
// JOBS_MAX_PER_USER), also against submissions at once; other users are
// not affected, and a finished job frees a place.
func TestJobLimitPerUser(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		const limit = 3
		var mu sync.Mutex
		var stored, refused int
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := s.Jobs().CreateJob(ctx, patent.Job{ID: fmt.Sprintf("u1-%d", i), UserID: 1, Companies: []string{"A"}}, limit, 0)
				var full *patent.TooManyJobsError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					stored++
				case errors.As(err, &full) && full.Limit == limit && errors.Is(err, patent.ErrTooManyJobs):
					refused++
				default:
					t.Errorf("CreateJob = %v", err)
				}
			})
		}
		wg.Wait()
		if stored != limit || refused != 8-limit {
			t.Fatalf("8 submissions at once: %d stored, %d refused; want %d and %d", stored, refused, limit, 8-limit)
		}
		if n := len(storetest.Units(t, s, "job_start")); n != limit {
			t.Errorf("%d job starts queued, want %d (none for a refused job)", n, limit)
		}
		if _, err := s.Jobs().CreateJob(ctx, patent.Job{ID: "u2-0", UserID: 2, Companies: []string{"B"}}, limit, 0); err != nil {
			t.Errorf("another user's job = %v", err)
		}
		id := claim(t, s, 11)
		if _, err := s.Jobs().CreateJob(ctx, patent.Job{ID: "u1-late", UserID: 1, Companies: []string{"A"}}, limit, 0); !errors.Is(err, patent.ErrTooManyJobs) {
			t.Errorf("a running job still counts: CreateJob = %v", err)
		}
		if err := finishJob(s, id, 11, patent.JobCompleted, nil, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().CreateJob(ctx, patent.Job{ID: "u1-late", UserID: 1, Companies: []string{"A"}}, limit, 0); err != nil {
			t.Errorf("after a job ended: CreateJob = %v", err)
		}
	})
}

// TestJobSweeps: a running job whose unit the queue gave up is lost, and
// fails with FailJob, its deliveries in the same transaction; one whose
// unit is alive is not lost; a job that moved since it was read is left
// alone; pending jobs without a free unit get one; every unfinished job
// can fail (the start-up rule), oldest first.
func TestJobSweeps(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for _, id := range []string{"orphan", "alive", "waiting", "lost"} {
			createJob(t, s, id, 1, "A")
		}
		units := storetest.Units(t, s, "job_start")
		if len(units) != 4 {
			t.Fatalf("%d units, want 4", len(units))
		}
		// The first two units take orphan and alive up; the first is then
		// given up by the queue (its runs failed), the second runs on.
		if claim(t, s, units[0].ID) != "orphan" || claim(t, s, units[1].ID) != "alive" {
			t.Fatal("claims out of order")
		}
		storetest.SetUnitState(t, s, units[0].ID, "discarded")
		storetest.SetUnitState(t, s, units[1].ID, "running")
		// The unit queued for "lost" was given up before it took a job up.
		storetest.SetUnitState(t, s, units[3].ID, "discarded")

		lost, err := s.Jobs().LostJobs(ctx)
		if err != nil || len(lost) != 1 || lost[0].Job.ID != "orphan" || lost[0].RunnerStopped {
			t.Fatalf("LostJobs = %+v, %v; want orphan, its unit given up", lost, err)
		}
		ds := []patent.Delivery{{ID: "msg-orphan", Event: "job.completed", URL: "https://a.example/h", URLHost: "https://a.example", Payload: []byte(`{}`)}}
		// A job read before it progressed is not failed from that read.
		stale := lost[0].Job
		if err := s.Jobs().JobProgress(ctx, "orphan", units[0].ID, 1); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Jobs().FailJob(ctx, stale, "its processes stopped", ds); ok || err != nil {
			t.Fatalf("FailJob(as read before it moved) = %v, %v; want left alone", ok, err)
		}
		lost, _ = s.Jobs().LostJobs(ctx)
		if ok, err := s.Jobs().FailJob(ctx, lost[0].Job, "its processes stopped", ds); !ok || err != nil {
			t.Fatalf("FailJob = %v, %v; want failed", ok, err)
		}
		orphan, _ := s.Jobs().Job(ctx, "orphan")
		alive, _ := s.Jobs().Job(ctx, "alive")
		if orphan.Status != patent.JobFailed || orphan.Error == nil || *orphan.Error != "its processes stopped" || alive.Status != patent.JobRunning {
			t.Fatalf("orphan = %+v, alive = %+v", orphan, alive)
		}
		if d, err := s.Deliveries().Delivery(ctx, "msg-orphan"); err != nil || d.Status != patent.DeliveryPending {
			t.Errorf("the orphan's delivery = %+v, %v; want it stored, pending", d, err)
		}
		if got := len(storetest.Units(t, s, "webhook_delivery")); got != 1 {
			t.Errorf("%d delivery units, want 1", got)
		}
		if ok, err := s.Jobs().FailJob(ctx, orphan, "again", nil); ok || err != nil {
			t.Errorf("FailJob of a failed job = %v, %v; want left alone", ok, err)
		}

		// Two pending jobs (waiting, lost), one free unit (the third):
		// one start is queued.
		if q, err := s.Jobs().RefillJobStarts(ctx, 0); err != nil || q != 1 {
			t.Fatalf("RefillJobStarts = %d, %v; want 1", q, err)
		}
		if q, err := s.Jobs().RefillJobStarts(ctx, 0); err != nil || q != 0 {
			t.Fatalf("RefillJobStarts again = %d, %v; want 0", q, err)
		}

		// The start-up rule: every unfinished job, oldest first, fails; the
		// running one's unit ends with it.
		unfinished, err := s.Jobs().UnfinishedJobs(ctx, 0, 10)
		if err != nil || len(unfinished) != 3 || unfinished[0].ID != "alive" || unfinished[1].ID != "waiting" || unfinished[2].ID != "lost" {
			t.Fatalf("UnfinishedJobs = %+v, %v; want alive, waiting, lost", unfinished, err)
		}
		if mine, _ := s.Jobs().UnfinishedJobs(ctx, 2, 10); len(mine) != 0 {
			t.Errorf("UnfinishedJobs(user 2) = %+v, want none", mine)
		}
		for _, j := range unfinished {
			if ok, err := s.Jobs().FailJob(ctx, j, "restarted", nil); !ok || err != nil {
				t.Fatalf("FailJob(%s) = %v, %v", j.ID, ok, err)
			}
		}
		for _, id := range []string{"alive", "waiting", "lost"} {
			if j, _ := s.Jobs().Job(ctx, id); j.Status != patent.JobFailed || *j.Error != "restarted" {
				t.Errorf("%s after the start-up rule = %+v", id, j)
			}
		}
		if u := storetest.Units(t, s, "job_start")[1]; u.State != "cancelled" {
			t.Errorf("the failed running job's unit is %s, want cancelled", u.State)
		}
		if err := s.Jobs().JobProgress(ctx, "alive", units[1].ID, 1); !errors.Is(err, store.ErrJobLost) {
			t.Errorf("progress of a failed job = %v, want ErrJobLost", err)
		}
	})
}

// TestJobPace: the pace is the median time per company of the jobs that
// ended, none before one has.
func TestJobPace(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		if _, ok, err := s.Jobs().JobPace(ctx, 10); ok || err != nil {
			t.Fatalf("JobPace with no job ended = ok %v, %v", ok, err)
		}
		// Jobs of 1, 2 and 4 companies taking 10 s, 60 s and 40 s: 10, 30
		// and 10 s a company; the median is 10 s.
		for i, tc := range []struct {
			companies int
			took      time.Duration
		}{{1, 10 * time.Second}, {2, time.Minute}, {4, 40 * time.Second}} {
			id := fmt.Sprintf("paced-%d", i)
			createJob(t, s, id, 1, strings.Split(strings.Repeat("A,", tc.companies-1)+"A", ",")...)
			if claim(t, s, int64(100+i)) != id {
				t.Fatal("claims out of order")
			}
			clk.advance(tc.took)
			if err := finishJob(s, id, int64(100+i), patent.JobCompleted, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		pace, ok, err := s.Jobs().JobPace(ctx, 10)
		if !ok || err != nil || pace < 10*time.Second || pace > 10*time.Second+time.Millisecond { // the test clock ticks a µs a read
			t.Errorf("JobPace = %v, %v, %v; want 10s", pace, ok, err)
		}
	})
}
