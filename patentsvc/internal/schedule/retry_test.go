package schedule_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
)

// TestFirstRunAtOnce: a newly tracked company's first run is queued with
// it and runs at once on whichever replica's worker takes it up, with the
// scheduler's ticks an hour apart (and none started here): the real
// analyzer stores its analysis within seconds, and the run is recorded as
// the baseline.
func TestFirstRunAtOnce(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			var w *analysistest.World
			r := newRigWith(t, d, time.Now, func(st *store.Store) schedule.Analyzer {
				w = analysistest.NewWorld(t, st)
				w.Company("Acme Corp", 1) // total_results 4
				return w.Analyzer(nil)
			}, schedule.Config{Interval: 24 * time.Hour, Threshold: 20})
			st := r.st
			acme, err := storetest.Track(ctx, st, "Acme Corp", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !wait.Until(10*time.Second, func() bool { return analysed(t, st, acme.ID) }) {
				t.Fatalf("Acme Corp not analysed 10 s after it was tracked (tick: 1 h)")
			}
			recs := analysistest.Analyses(t, st)
			if len(recs) != 1 || recs[0].CompanyName != "Acme Corp" || recs[0].AnalysisType != patent.AnalysisPortfolio {
				t.Errorf("stored analyses = %+v, want Acme Corp's portfolio analysis", recs)
			}
			c := trackedByID(t, st, acme.ID)
			if c.LastPatentCount != 4 || c.ConsecutiveFailures != 0 || c.NextRunAt.Before(time.Now().Add(23*time.Hour)) {
				t.Errorf("after the first run: %+v, want count 4, next run a day away", c)
			}
			// A tick now queues nothing: the company is not due.
			calls := w.Serp.CallCount()
			r.tick(t)
			if got := w.Serp.CallCount(); got != calls {
				t.Errorf("a tick after the first run searched again (%d searches, want %d)", got, calls)
			}
		})
	}
}

// newRigWith is newRig with an analyzer built on the rig's store.
func newRigWith(t *testing.T, d string, now func() time.Time, analyzer func(*store.Store) schedule.Analyzer, cfg schedule.Config) *rig {
	t.Helper()
	return newReplicaWith(t, d, storetest.DSN(t, d), now, cfg, analyzer, nil)
}

// TestFirstRunsOnce: companies tracked on several replicas while every
// replica's scheduler ticks every 20 ms run exactly once each.
func TestFirstRunsOnce(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			fake := newFake()
			cfg := schedule.Config{Interval: time.Hour, Threshold: 20, Batch: 2}
			a := newReplica(t, d, dsn, time.Now, cfg, fake, nil)
			b := newReplica(t, d, dsn, time.Now, cfg, fake, nil)
			a.startTicks(t, 20*time.Millisecond)
			b.startTicks(t, 20*time.Millisecond)
			var names []string
			for i := range 20 {
				name := "Company " + string(rune('A'+i))
				if _, err := storetest.Track(ctx, []*rig{a, b}[i%2].st, patent.CompanyName(name), time.Now()); err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
			}
			fake.waitCalls(t, 20*time.Second, 1, names...)
			moreTicks(t, 3, a, b) // more ticks
			for _, n := range names {
				if c := fake.callsOf(n); c != 1 {
					t.Errorf("%s ran %d times, want once", n, c)
				}
			}
		})
	}
}

// TestFailedFirstRunBacksOff: a first run whose search fails (SerpApi
// answers 503) is retried after SCHEDULE_RETRY_BASE, then after twice
// that, not after the interval; the failures in a row are kept in the
// database, and the success that follows resets them and stores the
// analysis. Driven by hand with a clock, through the real analyzer.
func TestFailedFirstRunBacksOff(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
			var w *analysistest.World
			r := newRigWith(t, d, clk.Now, func(st *store.Store) schedule.Analyzer {
				w = analysistest.NewWorld(t, st)
				w.Company("Acme Corp", 1)
				return w.Analyzer(nil)
			}, schedule.Config{Interval: 24 * time.Hour, Threshold: 20, RetryBase: time.Minute})
			st := r.st
			start := clk.Now()
			// The analyzer's client tries a search twice (one retry).
			down := func() { w.Serp.Script(serpapitest.Unavailable(), serpapitest.Unavailable()) }

			down()
			acme, _ := storetest.Track(ctx, st, "Acme Corp", clk.Now()) // the first run: due at once, fails
			r.settle(t)
			c := trackedByID(t, st, acme.ID)
			if c.ConsecutiveFailures != 1 || !c.NextRunAt.Equal(start.Add(time.Minute)) || c.LastAnalysisAt != nil {
				t.Fatalf("after a failed first run: failures %d, next run %v (want 1 and %v), last analysis %v (want none)",
					c.ConsecutiveFailures, c.NextRunAt, start.Add(time.Minute), c.LastAnalysisAt)
			}
			searches := w.Serp.CallCount()
			clk.Advance(59 * time.Second)
			r.tick(t)
			if w.Serp.CallCount() != searches {
				t.Fatal("retried before the back-off")
			}
			clk.Advance(time.Second)
			down()
			r.tick(t) // the retry, a minute later: fails again
			if w.Serp.CallCount() == searches {
				t.Fatal("not retried a minute after the failed first run")
			}
			c = trackedByID(t, st, acme.ID)
			if c.ConsecutiveFailures != 2 || !c.NextRunAt.Equal(clk.Now().Add(2*time.Minute)) {
				t.Fatalf("after the second failure: failures %d, next run %v, want 2 and 2 min later", c.ConsecutiveFailures, c.NextRunAt)
			}
			clk.Advance(2 * time.Minute)
			r.tick(t) // SerpApi is back
			c = trackedByID(t, st, acme.ID)
			if c.ConsecutiveFailures != 0 || c.LastAnalysisAt == nil || c.LastPatentCount != 4 || !c.NextRunAt.Equal(clk.Now().Add(24*time.Hour)) {
				t.Errorf("after the success: %+v, want failures reset, count 4, next run a day later", c)
			}
			if recs := analysistest.Analyses(t, st); len(recs) != 1 || recs[0].CompanyName != "Acme Corp" {
				t.Errorf("stored analyses = %+v, want Acme Corp's", recs)
			}
		})
	}
}

// TestFailureKinds: an analysis that fails after the search answered is
// a failed run (retried on the back-off) that still records the count; a
// company without a recent patent to analyse is a successful run.
func TestFailureKinds(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	r := newRig(t, store.SQLite, clk.Now, schedule.Config{Interval: 24 * time.Hour, Threshold: 20, RetryBase: 5 * time.Minute}, scripted{}, nil)
	st := r.st
	llmDown, _ := storetest.Track(ctx, st, "LLM Down", clk.Now())
	none, _ := storetest.Track(ctx, st, "No Patents", clk.Now())
	r.settle(t)
	c := trackedByID(t, st, llmDown.ID)
	if c.ConsecutiveFailures != 1 || !c.NextRunAt.Equal(clk.Now().Add(5*time.Minute)) || c.LastPatentCount != 6 || c.LastAnalysisAt == nil {
		t.Errorf("analysis failed after the search: %+v, want 1 failure, retry in 5 min, count 6 recorded", c)
	}
	c = trackedByID(t, st, none.ID)
	if c.ConsecutiveFailures != 0 || !c.NextRunAt.Equal(clk.Now().Add(24*time.Hour)) || c.LastAnalysisAt == nil {
		t.Errorf("no patents to analyse: %+v, want a success (next run a day later)", c)
	}
}

// scripted answers "LLM Down" with a search that answered (6 patents)
// and an analysis that failed, and "No Patents" with none found.
type scripted struct{}

func (scripted) AnalyzeCompany(_ context.Context, name patent.CompanyName, _ patent.AnalyzeOptions) patent.CompanyAnalysis {
	if name == "No Patents" {
		msg := patent.NoPatentsError
		return patent.CompanyAnalysis{CompanyName: name.String(), Searched: true, Error: &msg}
	}
	msg := "analysis failed: gateway down"
	return patent.CompanyAnalysis{CompanyName: name.String(), Searched: true, TotalResults: 6, PatentCount: 6, Error: &msg}
}

func TestRetryDelay(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		base, interval time.Duration
		failures       int
		want           time.Duration
	}{
		{time.Minute, day, 1, time.Minute},
		{time.Minute, day, 2, 2 * time.Minute},
		{time.Minute, day, 3, 4 * time.Minute},
		{time.Minute, day, 11, 1024 * time.Minute},
		{time.Minute, day, 12, day},
		{time.Minute, day, 1000, day}, // no overflow
		{time.Minute, 36 * time.Second, 1, 36 * time.Second},
		{time.Hour, day, 0, time.Hour},
	} {
		if got := schedule.RetryDelay(tt.base, tt.interval, tt.failures); got != tt.want {
			t.Errorf("RetryDelay(%v, %v, %d) = %v, want %v", tt.base, tt.interval, tt.failures, got, tt.want)
		}
	}
}

func analysed(t *testing.T, st *store.Store, id int64) bool {
	return trackedByID(t, st, id).LastAnalysisAt != nil
}

func trackedByID(t *testing.T, st *store.Store, id int64) patent.TrackedCompany {
	t.Helper()
	list, err := st.Tracking().ListTracked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("tracked company %d not found in %+v", id, list)
	return patent.TrackedCompany{}
}
