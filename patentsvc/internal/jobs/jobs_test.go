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
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var ctx = context.Background()

// gateBatcher is a Batcher whose companies each wait for a release.
type gateBatcher struct {
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

var _ jobs.Batcher = (*gateBatcher)(nil)

func (g *gateBatcher) AnalyzeBatch(_ context.Context, names []patent.CompanyName, _ int, opts patent.AnalyzeOptions, quit <-chan struct{}, progress func(int)) patent.BatchResult {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	res := patent.BatchResult{Model: opts.Model}
	for i, n := range names {
		select {
		case <-quit:
			msg := "not analysed"
			res.Results = append(res.Results, patent.CompanyAnalysis{CompanyName: n.String(), Error: &msg})
			continue
		default:
		}
		<-g.release
		res.Results = append(res.Results, patent.CompanyAnalysis{CompanyName: n.String(), Success: true, PatentCount: 1})
		progress(i + 1)
	}
	return res
}

func waitStatus(t *testing.T, st *store.Store, id, want string) patent.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
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

func TestLifecycle(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	g := &gateBatcher{release: make(chan struct{})}
	var notified []patent.Job
	var mu sync.Mutex
	r := jobs.NewRunner(t.Context(), st, g, "proc-1", 1, func(j patent.Job) ([]patent.Delivery, error) {
		mu.Lock()
		notified = append(notified, j)
		mu.Unlock()
		return nil, nil
	}, slog.New(slog.DiscardHandler))

	j, err := r.Submit(ctx, 1, []patent.CompanyName{"Acme", "Beta"}, 2, "openai/gpt-4o-mini")
	if err != nil || j.Status != patent.JobPending || j.Total != 2 || j.ID == "" {
		t.Fatalf("Submit = %+v, %v", j, err)
	}
	waitStatus(t, st, j.ID, patent.JobRunning)
	g.release <- struct{}{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := st.Job(ctx, j.ID)
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
	done := waitStatus(t, st, j.ID, patent.JobCompleted)
	if done.Result == nil || len(done.Result.Results) != 2 || done.Completed != 2 || done.Error != nil {
		t.Errorf("completed job = %+v", done)
	}
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notified) != 1 || notified[0].Status != patent.JobCompleted || notified[0].ID != j.ID {
		t.Errorf("notifications = %+v", notified)
	}
	if _, err := r.Submit(ctx, 1, []patent.CompanyName{"Acme"}, 1, "m"); !errors.Is(err, jobs.ErrShuttingDown) {
		t.Errorf("Submit after shutdown = %v", err)
	}
}

// TestCrashedProcessJobsFail: jobs of a process that stopped (its lease
// expired) fail at the next sweep with a logged count; this process's own
// jobs do not, and it never runs another process's job.
func TestCrashedProcessJobsFail(t *testing.T) {
	clock := time.Now()
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	st := storetest.Open(t, store.SQLite, now)
	if _, err := st.CreateJob(ctx, patent.Job{ID: "orphan", Companies: []string{"A"}}, "crashed-proc", jobs.LeaseFor); err != nil {
		t.Fatal(err)
	}
	st.StartJob(ctx, "orphan", "crashed-proc", jobs.LeaseFor)
	mu.Lock()
	clock = clock.Add(jobs.LeaseFor + time.Second)
	mu.Unlock()

	var logs bytes.Buffer
	g := &gateBatcher{release: make(chan struct{}, 10)}
	r := jobs.NewRunner(t.Context(), st, g, "proc-2", 2, nil, slog.New(slog.NewJSONHandler(&logs, nil)))
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { r.Run(runCtx); close(ran) }() // sweeps at once
	orphan := waitStatus(t, st, "orphan", patent.JobFailed)
	stop()
	<-ran
	if orphan.Error == nil || !strings.Contains(*orphan.Error, "lease expired") {
		t.Errorf("orphan = %+v", orphan)
	}
	if !strings.Contains(logs.String(), `"count":1`) {
		t.Errorf("count not logged: %s", logs.String())
	}
	g.mu.Lock()
	calls := g.calls
	g.mu.Unlock()
	if calls != 0 {
		t.Errorf("the runner ran another process's job (%d batches)", calls)
	}
}

// TestShutdown: running companies finish, companies not started are not
// analysed, and the unfinished jobs fail with the reason.
func TestShutdown(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	g := &gateBatcher{release: make(chan struct{})}
	r := jobs.NewRunner(t.Context(), st, g, "proc-3", 1, nil, slog.New(slog.DiscardHandler))
	running, _ := r.Submit(ctx, 1, []patent.CompanyName{"Acme", "Beta"}, 1, "m")
	// The first job holds the only slot before the second is submitted:
	// submitted together, either could take it first.
	waitStatus(t, st, running.ID, patent.JobRunning)
	waiting, _ := r.Submit(ctx, 1, []patent.CompanyName{"Gamma"}, 1, "m") // waits for the only slot

	shut := make(chan error, 1)
	go func() { shut <- r.Shutdown(ctx) }()
	time.Sleep(50 * time.Millisecond) // Shutdown has begun; the first company is still running
	g.release <- struct{}{}           // it finishes
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	j, _ := st.Job(ctx, running.ID)
	if j.Status != patent.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "shut down") ||
		j.Result == nil || !j.Result.Results[0].Success || j.Result.Results[1].Success {
		t.Errorf("running job after shutdown = %+v (result %+v)", j, j.Result)
	}
	w, _ := st.Job(ctx, waiting.ID)
	if w.Status != patent.JobFailed || w.Error == nil || !strings.Contains(*w.Error, "before the job started") {
		t.Errorf("waiting job after shutdown = %+v", w)
	}
}

// TestRealPipeline runs a job through the real analyzer and fakes: the job
// keeps its submitter, and the analyses it stores record the submitter as
// requested_by.
func TestRealPipeline(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			st := storetest.Open(t, d, time.Now)
			w := analysistest.NewWorld(t, st)
			w.Company("Acme Corp", 2)
			r := jobs.NewRunner(t.Context(), st, w.Analyzer(nil), "proc-4", 2, nil, slog.New(slog.DiscardHandler))
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
			r.Shutdown(ctx)
		})
	}
}
