package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
)

var ctx = context.Background()

// gateBatcher is a Batcher whose companies each wait for a release, or
// for the batch's context to end.
type gateBatcher struct {
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

var _ jobs.Batcher = (*gateBatcher)(nil)

func (g *gateBatcher) AnalyzeBatch(ctx context.Context, names []patent.CompanyName, _ int, opts patent.AnalyzeOptions, progress func(int)) patent.BatchResult {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	res := patent.BatchResult{Model: opts.Model}
	for i, n := range names {
		select {
		case <-g.release:
			res.Results = append(res.Results, patent.CompanyAnalysis{CompanyName: n.String(), Success: true, PatentCount: 1})
			progress(i + 1)
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

func waitStatus(t *testing.T, st *store.Store, id, want string) patent.Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := st.Job(ctx, id)
		if err == nil && j.Status == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s status %q (err %v), want %q", id, j.Status, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	w := &world{}
	st, q := storetest.OpenQueue(t, dialect, time.Now, queue.Config{JobWorkers: workers, JobTimeout: cfg.Timeout + time.Minute},
		queue.Handlers{JobStart: func(ctx context.Context, u patent.JobStart) error { return w.runner.Work(ctx, u) }})
	w.st, w.q = st, q
	w.runner = jobs.NewRunner(cfg, st, batch, notify, logger, time.Now)
	storetest.StartQueue(t, q)
	return w
}

var defaults = jobs.Config{MaxPerUser: 10, Timeout: time.Minute}

// TestLifecycle: a submitted job is stored pending, a worker of the queue
// starts it, records its progress and its end, and its end is composed
// into webhook deliveries once, with the job as stored.
func TestLifecycle(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			g := &gateBatcher{release: make(chan struct{})}
			var notified []patent.Job
			var mu sync.Mutex
			w := newWorld(t, d, g, defaults, 1, func(j patent.Job) ([]patent.Delivery, error) {
				mu.Lock()
				notified = append(notified, j)
				mu.Unlock()
				return nil, nil
			}, slog.New(slog.DiscardHandler))

			j, err := w.runner.Submit(ctx, 1, []patent.CompanyName{"Acme", "Beta"}, 2, "openai/gpt-4o-mini")
			if err != nil || j.Status != patent.JobPending || j.Total != 2 || j.ID == "" {
				t.Fatalf("Submit = %+v, %v", j, err)
			}
			waitStatus(t, w.st, j.ID, patent.JobRunning)
			g.release <- struct{}{}
			deadline := time.Now().Add(10 * time.Second)
			for {
				got, _ := w.st.Job(ctx, j.ID)
				if got.Completed == 1 {
					if got.Progress() != 0.5 {
						t.Errorf("progress = %v, want 0.5", got.Progress())
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("progress not recorded")
				}
				time.Sleep(5 * time.Millisecond)
			}
			g.release <- struct{}{}
			done := waitStatus(t, w.st, j.ID, patent.JobCompleted)
			if done.Result == nil || len(done.Result.Results) != 2 || done.Completed != 2 || done.Error != nil || done.StartedAt == nil {
				t.Errorf("completed job = %+v", done)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(notified) != 1 || notified[0].Status != patent.JobCompleted || notified[0].ID != j.ID {
				t.Errorf("notifications = %+v", notified)
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

// TestRetryAfterOf: the wait of a refused submission is the soonest end of
// the user's running jobs at their pace so far, between 1 s and the job
// timeout; 30 s when none has started (or JOBS_TIMEOUT, when shorter).
func TestRetryAfterOf(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	for _, tt := range []struct {
		name    string
		running []patent.Job
		want    time.Duration
	}{
		{"none running", nil, 30 * time.Second},
		{"not started", []patent.Job{{Total: 3}}, 30 * time.Second},
		{"half done", []patent.Job{{Total: 4, Completed: 2, StartedAt: ago(time.Minute)}}, time.Minute},
		{"none done yet", []patent.Job{{Total: 4, StartedAt: ago(40 * time.Second)}}, 40 * time.Second},
		{"soonest of two", []patent.Job{{Total: 10, Completed: 1, StartedAt: ago(time.Minute)},
			{Total: 2, Completed: 1, StartedAt: ago(20 * time.Second)}}, 20 * time.Second},
		{"all done, not yet recorded", []patent.Job{{Total: 2, Completed: 2, StartedAt: ago(time.Minute)}}, time.Second},
		{"capped", []patent.Job{{Total: 20, Completed: 1, StartedAt: ago(time.Hour)}}, 30 * time.Minute},
		{"none running, JOBS_TIMEOUT 10s", nil, 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			limit := 30 * time.Minute
			if strings.HasSuffix(tt.name, "10s") {
				limit = 10 * time.Second
			}
			if got := jobs.RetryAfterOf(tt.running, now, limit); got != tt.want {
				t.Errorf("RetryAfterOf = %v, want %v", got, tt.want)
			}
		})
	}
}

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
			var first *jobs.Runner
			st1, q1 := storetest.OpenDSN(t, d, dsn, time.Now, queue.Config{JobWorkers: 1, JobTimeout: 2 * time.Minute},
				queue.Handlers{JobStart: func(ctx context.Context, u patent.JobStart) error { return first.Work(ctx, u) }})
			first = jobs.NewRunner(defaults, st1, stuck, nil, slog.New(slog.DiscardHandler), time.Now)
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
			if got, _ := st1.Job(ctx, j.ID); got.Status != patent.JobRunning || got.UnitID != running.UnitID {
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
	var r *jobs.Runner
	st, q := storetest.OpenDSN(t, d, dsn, time.Now, queue.Config{JobWorkers: 1, JobTimeout: 2 * time.Minute},
		queue.Handlers{JobStart: func(ctx context.Context, u patent.JobStart) error { return r.Work(ctx, u) }})
	r = jobs.NewRunner(defaults, st, batch, nil, slog.New(slog.DiscardHandler), time.Now)
	storetest.StartQueue(t, q)
	return r
}

// TestSweepFailsOrphans: a running job whose unit the queue gave up fails
// at the sweep, with its job.completed deliveries composed, and the count
// is logged; the pending jobs without a unit get one.
func TestSweepFailsOrphans(t *testing.T) {
	var logs bytes.Buffer
	st := storetest.Open(t, store.SQLite, time.Now)
	var notified []patent.Job
	r := jobs.NewRunner(defaults, st, &gateBatcher{}, func(j patent.Job) ([]patent.Delivery, error) {
		notified = append(notified, j)
		return nil, nil
	}, slog.New(slog.NewJSONHandler(&logs, nil)), time.Now)
	j, err := r.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m")
	if err != nil {
		t.Fatal(err)
	}
	unit := storetest.Units(t, st, queue.KindJobStart)[0].ID
	if _, ok, err := st.ClaimJob(ctx, unit); !ok || err != nil {
		t.Fatal(ok, err)
	}
	storetest.SetUnitState(t, st, unit, "discarded") // its processes died JOBS_MAX_ATTEMPTS times
	r.Sweep(ctx)
	got, _ := st.Job(ctx, j.ID)
	if got.Status != patent.JobFailed || got.Error == nil || !strings.Contains(*got.Error, "processes running the job stopped") {
		t.Errorf("orphaned job after the sweep = %+v", got)
	}
	if len(notified) != 1 || notified[0].ID != j.ID || notified[0].Status != patent.JobFailed {
		t.Errorf("notified = %+v, want the failed job", notified)
	}
	if !strings.Contains(logs.String(), `"msg":"failed jobs whose processes stopped","count":1`) {
		t.Errorf("count not logged: %s", logs.String())
	}
}

// TestRealPipeline runs a job through the real analyzer and fakes: the job
// keeps its submitter, and the analyses it stores record the submitter as
// requested_by.
func TestRealPipeline(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			var r *jobs.Runner
			st, q := storetest.OpenQueue(t, d, time.Now, queue.Config{JobWorkers: 2},
				queue.Handlers{JobStart: func(ctx context.Context, u patent.JobStart) error { return r.Work(ctx, u) }})
			w := analysistest.NewWorld(t, st)
			w.Company("Acme Corp", 2)
			r = jobs.NewRunner(defaults, st, w.Analyzer(nil), nil, slog.New(slog.DiscardHandler), time.Now)
			storetest.StartQueue(t, q)
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
