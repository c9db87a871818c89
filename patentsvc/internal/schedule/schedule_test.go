package schedule_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var ctx = context.Background()

// fakeAnalyzer answers each company with the count set for it and records
// the calls.
type fakeAnalyzer struct {
	mu     sync.Mutex
	counts map[string]int
	fail   map[string]bool
	calls  map[string]int
	fresh  bool
}

func newFake() *fakeAnalyzer {
	return &fakeAnalyzer{counts: map[string]int{}, fail: map[string]bool{}, calls: map[string]int{}, fresh: true}
}

func (f *fakeAnalyzer) AnalyzeCompany(_ context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name.String()]++
	f.fresh = f.fresh && opts.Fresh
	if f.fail[name.String()] {
		msg := "patent search failed: down"
		return patent.CompanyAnalysis{CompanyName: name.String(), Error: &msg}
	}
	return patent.CompanyAnalysis{CompanyName: name.String(), Searched: true, Success: true, TotalResults: f.counts[name.String()]}
}

func (f *fakeAnalyzer) set(name string, n int) { f.mu.Lock(); f.counts[name] = n; f.mu.Unlock() }
func (f *fakeAnalyzer) callsOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestAlertRule drives the dispatcher by hand with a clock: the first run
// records the baseline, later runs alert on large changes either way, and
// a company whose count was 0 never alerts.
func TestAlertRule(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	st := storetest.Open(t, store.SQLite, clk.Now)
	fake := newFake()
	var alerts []patent.Alert
	sched, err := schedule.New(t.Context(), schedule.Config{Interval: 36 * time.Second, Threshold: 20}, st, fake, st.Elector(),
		func(a patent.Alert) ([]patent.Delivery, error) { alerts = append(alerts, a); return nil, nil }, slog.New(slog.DiscardHandler), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	st.CreateTracked(ctx, "Acme")
	st.CreateTracked(ctx, "Zero Inc")
	round := func(acme, zero int) {
		t.Helper()
		fake.set("Acme", acme)
		fake.set("Zero Inc", zero)
		sched.Dispatch()
		clk.Advance(36 * time.Second) // SCHEDULE_INTERVAL_HOURS=0.01
	}
	// Baseline: a newly tracked company is due at once.
	fake.set("Acme", 10)
	sched.Dispatch()
	clk.Advance(35 * time.Second)
	sched.Dispatch() // not due again before the interval
	if len(alerts) != 0 || fake.callsOf("Acme") != 1 {
		t.Fatalf("baseline run: %d alerts, %d calls (want 1 call: not due again within the interval)", len(alerts), fake.callsOf("Acme"))
	}
	clk.Advance(time.Second)
	round(14, 7) // +40%: alert; Zero Inc had 0: no alert
	round(15, 7) // +7.1%: none
	round(9, 7)  // -40%: alert
	if len(alerts) != 2 {
		t.Fatalf("alerts = %+v, want 2", alerts)
	}
	if alerts[0].Message != "Patent count for Acme increased by 40.0% (from 10 to 14)" ||
		alerts[1].Message != "Patent count for Acme decreased by 40.0% (from 15 to 9)" {
		t.Errorf("messages = %q, %q", alerts[0].Message, alerts[1].Message)
	}
	stored, _ := st.ListAlerts(ctx, 10)
	if len(stored) != 2 || stored[0].OldValue != 15 || stored[0].NewValue != 9 || stored[0].ID == 0 {
		t.Errorf("stored alerts = %+v", stored)
	}
	tracked, _ := st.ListTracked(ctx)
	if tracked[0].LastPatentCount != 9 || tracked[0].LastAnalysisAt == nil || !fake.fresh {
		t.Errorf("tracked = %+v (scheduled runs fresh: %v)", tracked[0], fake.fresh)
	}

	// A failed search records nothing and is retried after the back-off
	// (here the interval: RetryBase, 1 min, is capped at the 36 s interval).
	fake.mu.Lock()
	fake.fail["Acme"] = true
	fake.mu.Unlock()
	round(100, 7)
	tracked, _ = st.ListTracked(ctx)
	if tracked[0].LastPatentCount != 9 || len(alerts) != 2 {
		t.Errorf("after a failed run: count %d, alerts %d", tracked[0].LastPatentCount, len(alerts))
	}
	calls := fake.callsOf("Acme")
	round(100, 7)
	if fake.callsOf("Acme") != calls+1 {
		t.Errorf("failed company not retried next interval")
	}
}

// TestLeaderElection: two schedulers on one PostgreSQL database, each
// with its own connection pool, run each due company exactly once; one is
// running and the other standby.
func TestLeaderElection(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres)
	open := func() *store.Store {
		s, err := store.Open(ctx, store.Postgres, dsn, store.Pool{MaxOpen: 4, MaxIdle: 2, MaxLifetime: time.Minute}, slog.New(slog.DiscardHandler), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	names := []patent.CompanyName{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta"}
	for _, n := range names {
		if _, err := a.CreateTracked(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	fake := newFake()
	cfg := schedule.Config{Interval: time.Hour, Threshold: 20, Tick: 50 * time.Millisecond, Batch: 2}
	sa, _ := schedule.New(t.Context(), cfg, a, fake, a.Elector(), nil, slog.New(slog.DiscardHandler), time.Now)
	sb, _ := schedule.New(t.Context(), cfg, b, fake, b.Elector(), nil, slog.New(slog.DiscardHandler), time.Now)
	sa.Start()
	sb.Start()
	deadline := time.Now().Add(20 * time.Second)
	for {
		done := 0
		for _, n := range names {
			if fake.callsOf(n.String()) > 0 {
				done++
			}
		}
		if done == len(names) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d companies ran", done, len(names))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // several more ticks on both
	states := []string{sa.State(), sb.State()}
	sa.Shutdown(ctx)
	sb.Shutdown(ctx)
	for _, n := range names {
		if c := fake.callsOf(n.String()); c != 1 {
			t.Errorf("%s ran %d times, want once", n, c)
		}
	}
	if strings.Join(states, ",") != "running,standby" && strings.Join(states, ",") != "standby,running" {
		t.Errorf("states = %v, want one running and one standby", states)
	}
}

// TestClaimsNeverOverlap: claims made at once from two pools on PostgreSQL
// split the due companies (SKIP LOCKED) instead of sharing them.
func TestClaimsNeverOverlap(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			var stores []*store.Store
			pools := 2
			if d == store.SQLite {
				pools = 1 // SQLite is one process's file; its writers queue
			}
			for range pools {
				s, err := store.Open(ctx, d, dsn, store.Pool{MaxOpen: 4, MaxIdle: 2, MaxLifetime: time.Minute}, slog.New(slog.DiscardHandler), time.Now)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores = append(stores, s)
			}
			for i := range 40 {
				stores[0].CreateTracked(ctx, patent.CompanyName("Company "+string(rune('A'+i%26))+string(rune('a'+i/26))))
			}
			var mu sync.Mutex
			seen := map[int64]int{}
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for {
						got, err := stores[w%len(stores)].ClaimDue(ctx, 3, time.Hour)
						if err != nil {
							t.Error(err)
							return
						}
						if len(got) == 0 {
							return
						}
						mu.Lock()
						for _, c := range got {
							seen[c.ID]++
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(seen) != 40 {
				t.Errorf("claimed %d distinct companies, want 40", len(seen))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("company %d claimed %d times", id, n)
				}
			}
		})
	}
}

// TestShortInterval runs the real gocron scheduler on SQLite with a short
// interval: companies are re-analysed every interval and an alert follows a
// change.
func TestShortInterval(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	fake := newFake()
	fake.set("Acme", 10)
	alerts := make(chan patent.Alert, 4)
	sched, err := schedule.New(t.Context(), schedule.Config{Interval: 300 * time.Millisecond, Threshold: 20, Tick: 50 * time.Millisecond},
		st, fake, st.Elector(), func(a patent.Alert) ([]patent.Delivery, error) { alerts <- a; return nil, nil }, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	st.CreateTracked(ctx, "Acme")
	sched.Start()
	defer sched.Shutdown(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for fake.callsOf("Acme") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("Acme analysed %d times, want repeated runs", fake.callsOf("Acme"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	fake.set("Acme", 20)
	select {
	case a := <-alerts:
		if !strings.Contains(a.Message, "increased by 100.0% (from 10 to 20)") {
			t.Errorf("alert = %q", a.Message)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no alert after the count doubled")
	}
	if sched.State() != schedule.StateRunning {
		t.Errorf("state = %s, want running (SQLite: the one process leads)", sched.State())
	}
}

// blockingAnalyzer holds every analysis until its context ends; with
// searched, the search has answered by then (the cut comes while PDFs or
// the LLM are worked on).
type blockingAnalyzer struct {
	started  chan string
	searched bool
}

func (b blockingAnalyzer) AnalyzeCompany(ctx context.Context, name patent.CompanyName, _ patent.AnalyzeOptions) patent.CompanyAnalysis {
	b.started <- name.String()
	<-ctx.Done()
	msg := "patent search failed: " + ctx.Err().Error()
	if b.searched {
		msg = "analysis failed: " + ctx.Err().Error()
	}
	return patent.CompanyAnalysis{CompanyName: name.String(), Searched: b.searched, TotalResults: 7, Error: &msg}
}

// hangingStore is a database that stopped answering writes, behind a
// driver that does not give up when told to: Reschedule records that its
// context ended, and returns only when the test releases it.
type hangingStore struct {
	schedule.Store
	ended   chan error
	release chan struct{}
}

func (h hangingStore) Reschedule(ctx context.Context, _ int64, _ time.Time) error {
	select {
	case <-ctx.Done():
		h.ended <- ctx.Err()
	case <-h.release:
	}
	<-h.release
	return errors.New("database gone")
}

// cutShort starts a scheduler on st whose analysis of the one tracked
// company blocks, then shuts it down with a 50 ms deadline (gocron's own
// stop timeout is an hour). It returns Shutdown's error, failing the test
// if Shutdown is still waiting 30 s later.
func cutShort(t *testing.T, db *store.Store, st schedule.Store, an blockingAnalyzer) error {
	t.Helper()
	sched, err := schedule.New(t.Context(), schedule.Config{Interval: time.Hour, Threshold: 20, Tick: 50 * time.Millisecond, StopTimeout: time.Hour},
		st, an, db.Elector(), nil, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	db.CreateTracked(ctx, "Acme")
	sched.Start()
	select {
	case <-an.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the dispatcher never started Acme")
	}
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sched.Shutdown(sctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown still waiting after its context ended")
		return nil
	}
}

// TestShutdownDeadline: Shutdown's context bounds a dispatch in progress,
// and the company whose analysis was cut short, before or after its
// search, is due again at once instead of held or pushed a whole interval
// away.
func TestShutdownDeadline(t *testing.T) {
	for _, searched := range []bool{false, true} {
		t.Run(map[bool]string{false: "during the search", true: "after the search"}[searched], func(t *testing.T) {
			st := storetest.Open(t, store.SQLite, time.Now)
			if err := cutShort(t, st, st, blockingAnalyzer{started: make(chan string, 1), searched: searched}); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			tracked, err := st.ListTracked(ctx)
			if err != nil || len(tracked) != 1 {
				t.Fatalf("ListTracked = %v, %v", tracked, err)
			}
			if c := tracked[0]; c.NextRunAt.After(time.Now()) || c.LastAnalysisAt != nil || c.LastPatentCount != 0 {
				t.Errorf("after a cut-short run: next run %v (want due now), last analysis %v, count %d (want none)", c.NextRunAt, c.LastAnalysisAt, c.LastPatentCount)
			}
		})
	}
}

// TestShutdownHangingStore: a database that stops answering while a cut
// short company is handed back does not hold Shutdown past its context,
// and the write is told to give up.
func TestShutdownHangingStore(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	hs := hangingStore{Store: st, ended: make(chan error, 1), release: make(chan struct{})}
	t.Cleanup(func() { close(hs.release) }) // before the store closes
	if err := cutShort(t, st, hs, blockingAnalyzer{started: make(chan string, 1)}); err == nil {
		t.Error("Shutdown = nil, want the dispatch reported as still running")
	}
	select {
	case err := <-hs.ended:
		if err == nil {
			t.Error("the hand-back's context ended without an error")
		}
	case <-time.After(10 * time.Second):
		t.Error("the hand-back write was never told to give up")
	}
}

// TestNilSchedulerIsDisabled: run() passes a nil *Scheduler when the
// scheduler is off; every method must then be a harmless no-op.
func TestNilSchedulerIsDisabled(t *testing.T) {
	var s *schedule.Scheduler
	s.Start()
	s.Dispatch()
	s.RunNow(context.Background(), 1)
	if got := s.State(); got != schedule.StateDisabled {
		t.Errorf("State() = %q, want %q", got, schedule.StateDisabled)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown() = %v", err)
	}
}
