package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
)

var ctx = context.Background()

// gateBatcher is a Batcher whose companies each wait for a release, or
// for the batch's context to end. With recorded, it sends there the
// progress it has told the runner, once the runner has recorded it.
type gateBatcher struct {
	release  chan struct{}
	recorded chan int
	mu       sync.Mutex
	calls    int
}

var _ jobs.Batcher = (*gateBatcher)(nil)

func (g *gateBatcher) AnalyzeBatch(ctx context.Context, names []patent.CompanyName, _ int, opts patent.AnalyzeOptions, progress interface{ Done(completed int) }) patent.BatchResult {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	res := patent.BatchResult{Model: opts.Model}
	for i, n := range names {
		select {
		case <-g.release:
			res.Results = append(res.Results, patent.CompanyAnalysis{CompanyName: n.String(), Success: true, PatentCount: 1})
			progress.Done(i + 1)
			if g.recorded != nil {
				g.recorded <- i + 1
			}
		case <-ctx.Done():
			msg := "not analysed: " + context.Cause(ctx).Error()
			res.Results = append(res.Results, patent.CompanyAnalysis{CompanyName: n.String(), Error: &msg})
		}
	}
	return res
}

func (g *gateBatcher) batches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// waitStatus waits until the stored job id is in status want.
func waitStatus(t *testing.T, st *store.Store, id, want string) patent.Job {
	t.Helper()
	var j patent.Job
	var err error
	if !wait.Until(30*time.Second, func() bool {
		j, err = st.Jobs().Job(ctx, id)
		return err == nil && j.Status == want
	}) {
		t.Fatalf("job %s status %q (err %v), want %q", id, j.Status, err, want)
	}
	return j
}

// world is a store, its work queue and a runner on it.
type world struct {
	st     *store.Store
	q      *queue.Queue
	runner *jobs.Runner
}

// newWorld opens a store of dialect with a queue of workers job workers
// running batch's jobs, started, and notify composing their ends.
func newWorld(t *testing.T, dialect string, batch jobs.Batcher, cfg jobs.Config, workers int, notify jobs.Notifier, logger *slog.Logger) *world {
	t.Helper()
	dsn := storetest.DSN(t, dialect)
	w := &world{st: storetest.OpenAt(t, dialect, dsn, time.Now)}
	w.runner = jobs.NewRunner(cfg, w.st.Jobs(), w.st.Jobs(), batch, notify, logger, time.Now)
	w.q = storetest.NewQueue(t, w.st, dsn, queue.Config{JobWorkers: workers, JobTimeout: cfg.Timeout + time.Minute}, queue.Workers{Jobs: w.runner})
	storetest.StartQueue(t, w.q)
	return w
}

// notifier is a jobs.Notifier that keeps the jobs it composed for and
// composes one delivery each (none when quiet).
type notifier struct {
	mu    sync.Mutex
	jobs  []patent.Job
	quiet bool
}

var _ jobs.Notifier = (*notifier)(nil)

func (n *notifier) JobDeliveries(j patent.Job) ([]patent.Delivery, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.jobs = append(n.jobs, j)
	if n.quiet {
		return nil, nil
	}
	return []patent.Delivery{{ID: "msg_" + j.ID + "_" + j.Status, Event: "job.completed", URL: "https://hooks.example/h",
		URLHost: "https://hooks.example", Payload: []byte(`{}`)}}, nil
}

func (n *notifier) composed() []patent.Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.jobs)
}

var defaults = jobs.Config{MaxPerUser: 10, Timeout: time.Minute}

// TestLifecycle: a submitted job is stored pending, a worker of the queue
// starts it, records its progress and its end, and its end is composed
// into webhook deliveries once, with the job as stored.
func TestLifecycle(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			g := &gateBatcher{release: make(chan struct{}), recorded: make(chan int, 2)}
			notify := &notifier{quiet: true}
			w := newWorld(t, d, g, defaults, 1, notify, slog.New(slog.DiscardHandler))

			j, err := w.runner.Submit(ctx, 1, []patent.CompanyName{"Acme", "Beta"}, 2, "openai/gpt-4o-mini")
			if err != nil || j.Status != patent.JobPending || j.Total != 2 || j.ID == "" {
				t.Fatalf("Submit = %+v, %v", j, err)
			}
			waitStatus(t, w.st, j.ID, patent.JobRunning)
			g.release <- struct{}{}
			select {
			case <-g.recorded: // Done(1) has returned: the progress is stored
			case <-time.After(10 * time.Second):
				t.Fatal("progress not told after the first company")
			}
			if got, err := w.st.Jobs().Job(ctx, j.ID); err != nil || got.Completed != 1 || got.Progress() != 0.5 {
				t.Errorf("after the first company: completed %d, progress %v (err %v); want 1, 0.5", got.Completed, got.Progress(), err)
			}
			g.release <- struct{}{}
			done := waitStatus(t, w.st, j.ID, patent.JobCompleted)
			if done.Result == nil || len(done.Result.Results) != 2 || done.Completed != 2 || done.Error != nil || done.StartedAt == nil {
				t.Errorf("completed job = %+v", done)
			}
			if notified := notify.composed(); len(notified) != 1 || notified[0].Status != patent.JobCompleted || notified[0].ID != j.ID ||
				notified[0].Completed != 2 || notified[0].Result == nil {
				t.Errorf("notifications = %+v, want the completed job as it ended", notified)
			}
		})
	}
}

// TestTooManyJobs: a user's JOBS_MAX_PER_USER+1st unfinished job is
// refused with the limit and a wait; another user's is not.
func TestTooManyJobs(t *testing.T) {
	g := &gateBatcher{release: make(chan struct{})}
	w := newWorld(t, store.SQLite, g, jobs.Config{MaxPerUser: 2, Timeout: time.Minute}, 1, nil, slog.New(slog.DiscardHandler))
	for range 2 {
		if _, err := w.runner.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := w.runner.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m")
	var full *patent.TooManyJobsError
	if !errors.As(err, &full) || full.Limit != 2 || full.RetryAfterSeconds() < 1 || err.Error() != "Too many unfinished jobs: 2 per user" {
		t.Fatalf("third Submit = %v (%+v), want a TooManyJobsError of limit 2 with a wait", err, full)
	}
	if _, err := w.runner.Submit(ctx, 2, []patent.CompanyName{"Acme"}, 1, "m"); err != nil {
		t.Errorf("another user's Submit = %v", err)
	}
	close(g.release)
}

// TestExpectedWait: the wait of a refused submission is the expected
// wait for the user's oldest unfinished job to end, from the cluster's
// pace, never less than the job's own pace tells (a job running longer
// than the pace is not "1 s"), between 1 s and the job timeout.
func TestExpectedWait(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	const pace = 45 * time.Second // a company's analysis on the cluster
	for _, tt := range []struct {
		name       string
		unfinished []patent.Job
		limit      time.Duration
		want       time.Duration
	}{
		{"none (ended meanwhile)", nil, 30 * time.Minute, time.Second},
		{"just started", []patent.Job{{Total: 1, StartedAt: ago(time.Second)}}, 30 * time.Minute, 44 * time.Second},
		{"running longer than the pace", []patent.Job{{Total: 1, StartedAt: ago(50 * time.Second)}}, 30 * time.Minute, 50 * time.Second},
		{"half done, on pace", []patent.Job{{Total: 4, Completed: 2, StartedAt: ago(90 * time.Second)}}, 30 * time.Minute, 90 * time.Second},
		{"half done, slower than the pace", []patent.Job{{Total: 4, Completed: 2, StartedAt: ago(4 * time.Minute)}}, 30 * time.Minute, 4 * time.Minute},
		{"all done, not yet recorded", []patent.Job{{Total: 2, Completed: 2, StartedAt: ago(time.Minute)}}, 30 * time.Minute, 30 * time.Second},
		{"pending behind a running one", []patent.Job{{Total: 2}, {Total: 1, StartedAt: ago(15 * time.Second)}}, 30 * time.Minute, 2*pace + 30*time.Second},
		{"pending, none running", []patent.Job{{Total: 3}}, 30 * time.Minute, 3 * pace},
		{"capped at JOBS_TIMEOUT", []patent.Job{{Total: 20, StartedAt: ago(time.Second)}}, 10 * time.Minute, 10 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := jobs.ExpectedWait(tt.unfinished, pace, now, tt.limit); got != tt.want {
				t.Errorf("ExpectedWait = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRetryAfterFromThePace: a user refused while their jobs run gets the
// wait the jobs that ended on the cluster tell: with jobs taking 45 s a
// company, about 45 s for a job that just started, not 1 s.
func TestRetryAfterFromThePace(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	st := storetest.Open(t, store.SQLite, clk.Now)
	r := jobs.NewRunner(jobs.Config{MaxPerUser: 1, Timeout: 30 * time.Minute}, st.Jobs(), st.Jobs(), &gateBatcher{}, nil, slog.New(slog.DiscardHandler), clk.Now)
	// Three jobs of one company ended, each after 45 s.
	for i := range 3 {
		j, err := r.Submit(ctx, int64(10+i), []patent.CompanyName{"Acme"}, 1, "m")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.Jobs().StartJob(ctx, j.ID, int64(100+i)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		clk.advance(45 * time.Second)
		if err := st.Jobs().FinishJob(ctx, patent.Job{ID: j.ID, Status: patent.JobCompleted}, int64(100+i), nil); err != nil {
			t.Fatal(err)
		}
	}
	running, err := r.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.Jobs().StartJob(ctx, running.ID, 200); !ok || err != nil {
		t.Fatal(ok, err)
	}
	clk.advance(2 * time.Second)
	_, err = r.Submit(ctx, 1, []patent.CompanyName{"Beta"}, 1, "m")
	var full *patent.TooManyJobsError
	if !errors.As(err, &full) || full.RetryAfterSeconds() != 43 {
		t.Fatalf("Submit over the limit = %v (%+v), want Retry-After 43 s (45 s a job, 2 s run)", err, full)
	}
}

// clock is a test clock that moves when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestTimeout: a job running past JOBS_TIMEOUT ends failed with the
// reason, its finished companies and the others reported as not analysed.
func TestTimeout(t *testing.T) {
	g := &gateBatcher{release: make(chan struct{}, 1)}
	g.release <- struct{}{} // the first company finishes, the second never does
	w := newWorld(t, store.SQLite, g, jobs.Config{MaxPerUser: 10, Timeout: 500 * time.Millisecond}, 1, nil, slog.New(slog.DiscardHandler))
	j, err := w.runner.Submit(ctx, 1, []patent.CompanyName{"Acme", "Beta"}, 1, "m")
	if err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, w.st, j.ID, patent.JobFailed)
	const reason = "the job ran longer than JOBS_TIMEOUT (500ms)"
	if got.Error == nil || *got.Error != reason || got.Result == nil || len(got.Result.Results) != 2 ||
		!got.Result.Results[0].Success || got.Result.Results[1].Error == nil || *got.Result.Results[1].Error != "not analysed: "+reason {
		t.Errorf("timed-out job = %+v, result %+v", got, got.Result)
	}
}

// TestShutdownRunsAgain: a shutdown whose deadline cuts a job short leaves
// it running, held by its unit, which the queue makes available again at
// once: another replica's worker takes the same job up and finishes it.
func TestShutdownRunsAgain(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			stuck := &gateBatcher{release: make(chan struct{})} // never released
			st1 := storetest.OpenAt(t, d, dsn, time.Now)
			first := jobs.NewRunner(defaults, st1.Jobs(), st1.Jobs(), stuck, nil, slog.New(slog.DiscardHandler), time.Now)
			q1 := storetest.NewQueue(t, st1, dsn, queue.Config{JobWorkers: 1, JobTimeout: 2 * time.Minute}, queue.Workers{Jobs: first})
			if err := q1.Start(ctx); err != nil {
				t.Fatal(err)
			}
			j, err := first.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m")
			if err != nil {
				t.Fatal(err)
			}
			running := waitStatus(t, st1, j.ID, patent.JobRunning)
			deadline, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if err := q1.Shutdown(deadline); err == nil {
				t.Error("Shutdown cut a job short and returned nil")
			}
			if got, _ := st1.Jobs().Job(ctx, j.ID); got.Status != patent.JobRunning || got.UnitID != running.UnitID {
				t.Fatalf("job after the cut = %+v, want still running under its unit", got)
			}

			done := &gateBatcher{release: make(chan struct{}, 1)}
			done.release <- struct{}{}
			_ = newReplica(t, d, dsn, done)
			got := waitStatus(t, st1, j.ID, patent.JobCompleted)
			if got.UnitID != running.UnitID || done.batches() != 1 {
				t.Errorf("finished job = %+v (unit %d), %d batches on the second replica; want the same unit, one batch", got, running.UnitID, done.batches())
			}
		})
	}
}

// newReplica starts a second replica (store, queue, runner) on the
// database at dsn.
func newReplica(t *testing.T, d, dsn string, batch jobs.Batcher) *jobs.Runner {
	t.Helper()
	st := storetest.OpenAt(t, d, dsn, time.Now)
	r := jobs.NewRunner(defaults, st.Jobs(), st.Jobs(), batch, nil, slog.New(slog.DiscardHandler), time.Now)
	storetest.StartQueue(t, storetest.NewQueue(t, st, dsn, queue.Config{JobWorkers: 1, JobTimeout: 2 * time.Minute}, queue.Workers{Jobs: r}))
	return r
}

// TestSweepFailsOrphans: a running job whose unit the queue gave up fails
// at the sweep, with its job.completed deliveries composed from the job as
// it ended and stored with the failure, and the count is logged; the
// pending jobs without a unit get one.
func TestSweepFailsOrphans(t *testing.T) {
	var logs bytes.Buffer
	st := storetest.Open(t, store.SQLite, time.Now)
	notify := &notifier{}
	r := jobs.NewRunner(defaults, st.Jobs(), st.Jobs(), &gateBatcher{}, notify, slog.New(slog.NewJSONHandler(&logs, nil)), time.Now)
	j, err := r.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m")
	if err != nil {
		t.Fatal(err)
	}
	unit := storetest.Units(t, st, patent.KindJobStart)[0].ID
	if _, ok, err := st.Jobs().StartJob(ctx, j.ID, unit); !ok || err != nil {
		t.Fatal(ok, err)
	}
	storetest.SetUnitState(t, st, unit, "discarded") // its runs failed JOBS_MAX_ATTEMPTS times
	r.Sweep(ctx)
	got, _ := st.Jobs().Job(ctx, j.ID)
	if got.Status != patent.JobFailed || got.Error == nil || !strings.Contains(*got.Error, "work stopped without ending it") {
		t.Errorf("orphaned job after the sweep = %+v", got)
	}
	if n := notify.composed(); len(n) != 1 || n[0].ID != j.ID || n[0].Status != patent.JobFailed || n[0].Error == nil || *n[0].Error != *got.Error {
		t.Errorf("composed for %+v, want the failed job with its reason", n)
	}
	if d, err := st.Deliveries().Delivery(ctx, "msg_"+j.ID+"_failed"); err != nil || d.Status != patent.DeliveryPending {
		t.Errorf("the failed job's delivery = %+v, %v; want it stored", d, err)
	}
	if !strings.Contains(logs.String(), `"msg":"failed jobs whose work stopped","count":1`) {
		t.Errorf("count not logged: %s", logs.String())
	}
}

// TestRealPipeline runs a job through the real analyzer and fakes: the job
// keeps its submitter, and the analyses it stores record the submitter as
// requested_by.
func TestRealPipeline(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			st := storetest.OpenAt(t, d, dsn, time.Now)
			w := analysistest.NewWorld(t, st)
			w.Company("Acme Corp", 2)
			r := jobs.NewRunner(defaults, st.Jobs(), st.Jobs(), w.Analyzer(nil), nil, slog.New(slog.DiscardHandler), time.Now)
			storetest.StartQueue(t, storetest.NewQueue(t, st, dsn, queue.Config{JobWorkers: 2}, queue.Workers{Jobs: r}))
			j, err := r.Submit(ctx, 42, []patent.CompanyName{"Acme Corp", "Nobody Inc"}, 2, "openai/gpt-4o-mini")
			if err != nil {
				t.Fatal(err)
			}
			done := waitStatus(t, st, j.ID, patent.JobCompleted)
			if done.Result == nil || done.Result.Summary.Successful != 1 || done.Result.Summary.Failed != 1 || done.Progress() != 1 {
				t.Errorf("job = %+v result %+v", done, done.Result)
			}
			if j.UserID != 42 || done.UserID != 42 {
				t.Errorf("job user = %d (submitted), %d (stored), want 42", j.UserID, done.UserID)
			}
			recs := analysistest.Analyses(t, st)
			if len(recs) != 1 || recs[0].RequestedBy != "42" {
				t.Errorf("stored analyses = %+v, want one requested by \"42\"", recs)
			}
		})
	}
}

// racingJobs is the real job table, with another replica that starts the
// job this one picked between its read of the pending jobs and its start,
// once.
type racingJobs struct {
	store.Jobs
	raced bool
}

func (r *racingJobs) PendingHeads(ctx context.Context) ([]patent.JobCandidate, error) {
	heads, err := r.Jobs.PendingHeads(ctx)
	if err == nil && !r.raced {
		r.raced = true
		pick, _ := patent.FairestJob(heads)
		if _, ok, err := r.Jobs.StartJob(ctx, pick.JobID, 999); !ok || err != nil {
			return nil, fmt.Errorf("the other replica could not start %s: %v, %v", pick.JobID, ok, err)
		}
	}
	return heads, err
}

// TestClaim: a unit run again takes up the job it holds; a free unit the
// fairest pending job; one that loses its pick to another replica picks
// again among what is left; none is left when every job runs.
func TestClaim(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	race := &racingJobs{Jobs: st.Jobs()}
	r := jobs.NewRunner(defaults, st.Jobs(), race, &gateBatcher{}, nil, slog.New(slog.DiscardHandler), time.Now)
	var ids []string
	for _, user := range []int64{1, 1, 2} {
		j, err := r.Submit(ctx, user, []patent.CompanyName{"Acme"}, 1, "m")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	// The other replica takes the fairest (user 1's oldest) first; this
	// unit picks again: user 2's job, as user 1 now runs one.
	j, ok, err := r.Claim(ctx, 1)
	if err != nil || !ok || j.ID != ids[2] || j.UnitID != 1 {
		t.Fatalf("claim after losing the pick = %s (unit %d), %v, %v; want %s", j.ID, j.UnitID, ok, err, ids[2])
	}
	if again, ok, err := r.Claim(ctx, 1); err != nil || !ok || again.ID != ids[2] {
		t.Errorf("the same unit run again = %s, %v, %v; want the job it holds, %s", again.ID, ok, err, ids[2])
	}
	if next, ok, err := r.Claim(ctx, 2); err != nil || !ok || next.ID != ids[1] {
		t.Errorf("the next free unit = %s, %v, %v; want %s", next.ID, ok, err, ids[1])
	}
	if none, ok, err := r.Claim(ctx, 3); err != nil || ok {
		t.Errorf("a unit with every job running = %s, %v, %v; want none", none.ID, ok, err)
	}
}
