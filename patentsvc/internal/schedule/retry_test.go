package schedule_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// standby is the elector of a replica that never leads: its dispatcher
// never runs, so whatever runs there was started by RunNow.
type standby struct{}

func (standby) IsLeader(context.Context) error { return errors.New("not the leader") }
func (standby) Leading() bool                  { return false }
func (standby) Resign()                        {}

// waitUntil polls cond every 10 ms for up to d.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestRunNowWithoutTick: a newly tracked company's first run starts at
// once through RunNow, with the dispatcher's next tick an hour away, on the
// leader and on a standby replica alike: the real analyzer stores its
// analysis within seconds, and the run is recorded as the baseline.
func TestRunNowWithoutTick(t *testing.T) {
	for _, d := range storetest.Dialects {
		for _, role := range []string{"leader", "standby"} {
			t.Run(d+"/"+role, func(t *testing.T) {
				st := storetest.Open(t, d, time.Now)
				w := analysistest.NewWorld(t, st)
				w.Company("Acme Corp", 1) // total_results 4
				var elector schedule.Elector = st.Elector()
				if role == "standby" {
					elector = standby{}
				}
				sched, err := schedule.New(t.Context(), schedule.Config{Interval: 24 * time.Hour, Threshold: 20, Tick: time.Hour},
					st, w.Analyzer(nil), elector, nil, slog.New(slog.DiscardHandler), time.Now)
				if err != nil {
					t.Fatal(err)
				}
				// A company tracked before the start is run by the start-up
				// tick (on the leader); once it is recorded, that tick has
				// claimed what it will, and the next one is an hour away.
				early, _ := st.CreateTracked(ctx, "Early Inc")
				sched.Start()
				defer sched.Shutdown(ctx)
				if role == "leader" && !waitUntil(20*time.Second, func() bool { return analysed(t, st, early.ID) }) {
					t.Fatal("the start-up tick did not run the company tracked before it")
				}

				acme, err := st.CreateTracked(ctx, "Acme Corp")
				if err != nil {
					t.Fatal(err)
				}
				sched.RunNow(context.Background(), acme.ID)
				if !waitUntil(10*time.Second, func() bool { return analysed(t, st, acme.ID) }) {
					t.Fatalf("Acme Corp not analysed 10 s after RunNow (tick: 1 h)")
				}
				recs := analysistest.Analyses(t, st)
				if len(recs) != 1 || recs[0].CompanyName != "Acme Corp" || recs[0].AnalysisType != patent.AnalysisPortfolio {
					t.Errorf("stored analyses = %+v, want Acme Corp's portfolio analysis", recs)
				}
				c := trackedByID(t, st, acme.ID)
				if c.LastPatentCount != 4 || c.ConsecutiveFailures != 0 || c.NextRunAt.Before(time.Now().Add(23*time.Hour)) {
					t.Errorf("after the first run: %+v, want count 4, next run a day away", c)
				}
				// Asking again (or for a company not due) runs nothing.
				calls := w.Serp.CallCount()
				sched.RunNow(context.Background(), acme.ID)
				sched.RunNow(context.Background(), 12345)
				time.Sleep(200 * time.Millisecond)
				if got := w.Serp.CallCount(); got != calls {
					t.Errorf("RunNow of a company not due searched again (%d searches, want %d)", got, calls)
				}
			})
		}
	}
}

// TestRunNowRunsOnce: replicas that each get RunNow for every newly
// tracked company, while the leader's dispatcher ticks every 20 ms, run
// each company exactly once (the claim decides, on PostgreSQL across
// connection pools).
func TestRunNowRunsOnce(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			a := openStore(t, d, dsn)
			b := a
			if d == store.Postgres {
				b = openStore(t, d, dsn) // SQLite is one process's file
			}
			fake := newFake()
			cfg := schedule.Config{Interval: time.Hour, Threshold: 20, Tick: 20 * time.Millisecond, Batch: 2}
			sa, _ := schedule.New(t.Context(), cfg, a, fake, a.Elector(), nil, slog.New(slog.DiscardHandler), time.Now)
			sb, _ := schedule.New(t.Context(), cfg, b, fake, b.Elector(), nil, slog.New(slog.DiscardHandler), time.Now)
			sa.Start()
			sb.Start()
			var names []string
			for i := range 20 {
				name := "Company " + string(rune('A'+i))
				c, err := a.CreateTracked(ctx, patent.CompanyName(name))
				if err != nil {
					t.Fatal(err)
				}
				sa.RunNow(context.Background(), c.ID)
				sb.RunNow(context.Background(), c.ID)
				names = append(names, name)
			}
			ok := waitUntil(20*time.Second, func() bool {
				for _, n := range names {
					if fake.callsOf(n) == 0 {
						return false
					}
				}
				return true
			})
			time.Sleep(200 * time.Millisecond) // more ticks and wake-ups
			sa.Shutdown(ctx)
			sb.Shutdown(ctx)
			if !ok {
				t.Fatal("not every company ran")
			}
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
			st := storetest.Open(t, d, clk.Now)
			w := analysistest.NewWorld(t, st)
			w.Company("Acme Corp", 1)
			sched, err := schedule.New(t.Context(), schedule.Config{Interval: 24 * time.Hour, Threshold: 20, RetryBase: time.Minute},
				st, w.Analyzer(nil), st.Elector(), nil, slog.New(slog.DiscardHandler), clk.Now)
			if err != nil {
				t.Fatal(err)
			}
			acme, _ := st.CreateTracked(ctx, "Acme Corp")
			start := clk.Now()
			// The analyzer's client tries a search twice (one retry).
			down := func() { w.Serp.Script(serpapitest.Unavailable(), serpapitest.Unavailable()) }

			down()
			sched.Dispatch() // the first run: due at once, fails
			c := trackedByID(t, st, acme.ID)
			if c.ConsecutiveFailures != 1 || !c.NextRunAt.Equal(start.Add(time.Minute)) || c.LastAnalysisAt != nil {
				t.Fatalf("after a failed first run: failures %d, next run %v (want 1 and %v), last analysis %v (want none)",
					c.ConsecutiveFailures, c.NextRunAt, start.Add(time.Minute), c.LastAnalysisAt)
			}
			searches := w.Serp.CallCount()
			clk.Advance(59 * time.Second)
			sched.Dispatch()
			if w.Serp.CallCount() != searches {
				t.Fatal("retried before the back-off")
			}
			clk.Advance(time.Second)
			down()
			sched.Dispatch() // the retry, a minute later: fails again
			if w.Serp.CallCount() == searches {
				t.Fatal("not retried a minute after the failed first run")
			}
			c = trackedByID(t, st, acme.ID)
			if c.ConsecutiveFailures != 2 || !c.NextRunAt.Equal(clk.Now().Add(2*time.Minute)) {
				t.Fatalf("after the second failure: failures %d, next run %v, want 2 and 2 min later", c.ConsecutiveFailures, c.NextRunAt)
			}
			clk.Advance(2 * time.Minute)
			sched.Dispatch() // SerpApi is back
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
	st := storetest.Open(t, store.SQLite, clk.Now)
	an := scripted{}
	sched, err := schedule.New(t.Context(), schedule.Config{Interval: 24 * time.Hour, Threshold: 20, RetryBase: 5 * time.Minute},
		st, an, st.Elector(), nil, slog.New(slog.DiscardHandler), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	llmDown, _ := st.CreateTracked(ctx, "LLM Down")
	none, _ := st.CreateTracked(ctx, "No Patents")
	sched.Dispatch()
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

// TestShutdownCutsRunNowShort: a RunNow run in progress at the shutdown
// deadline is cut short and its company made due again, like a dispatch's.
func TestShutdownCutsRunNowShort(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	an := blockingAnalyzer{started: make(chan string, 1), searched: true}
	sched, err := schedule.New(t.Context(), schedule.Config{Interval: time.Hour, Threshold: 20, Tick: time.Hour, StopTimeout: time.Hour},
		st, an, standby{}, nil, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sched.Start()
	acme, _ := st.CreateTracked(ctx, "Acme")
	sched.RunNow(context.Background(), acme.ID)
	select {
	case <-an.started:
	case <-time.After(20 * time.Second):
		t.Fatal("RunNow never started Acme")
	}
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sched.Shutdown(sctx) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown still waiting after its context ended")
	}
	c := trackedByID(t, st, acme.ID)
	if c.NextRunAt.After(time.Now()) || c.LastAnalysisAt != nil || c.ConsecutiveFailures != 0 {
		t.Errorf("after a cut-short RunNow: %+v, want due now, nothing recorded", c)
	}
	sched.RunNow(context.Background(), acme.ID) // after Shutdown: ignored, no panic
}

func openStore(t *testing.T, d, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(ctx, d, dsn, store.Pool{MaxOpen: 4, MaxIdle: 2, MaxLifetime: time.Minute}, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func analysed(t *testing.T, st *store.Store, id int64) bool {
	return trackedByID(t, st, id).LastAnalysisAt != nil
}

func trackedByID(t *testing.T, st *store.Store, id int64) patent.TrackedCompany {
	t.Helper()
	list, err := st.ListTracked(ctx)
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
