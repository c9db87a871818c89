package schedule_test

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
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
	// pubs are the publication numbers each company's search returns.
	pubs map[string][]string
	// called counts the calls, waking waitCalls.
	called events
}

func newFake() *fakeAnalyzer {
	return &fakeAnalyzer{counts: map[string]int{}, fail: map[string]bool{}, calls: map[string]int{}, fresh: true, pubs: map[string][]string{}}
}

func (f *fakeAnalyzer) AnalyzeCompany(_ context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.called.add()
	f.calls[name.String()]++
	f.fresh = f.fresh && opts.Fresh
	if f.fail[name.String()] {
		msg := "patent search failed: down"
		return patent.CompanyAnalysis{CompanyName: name.String(), Error: &msg}
	}
	res := patent.CompanyAnalysis{CompanyName: name.String(), Searched: true, Success: true, TotalResults: f.counts[name.String()]}
	for _, id := range f.pubs[name.String()] {
		res.Publications = append(res.Publications, patent.Publication{PatentID: id, Title: "Title of " + id})
	}
	return res
}

func (f *fakeAnalyzer) set(name string, n int) { f.mu.Lock(); f.counts[name] = n; f.mu.Unlock() }
func (f *fakeAnalyzer) isFresh() bool          { f.mu.Lock(); defer f.mu.Unlock(); return f.fresh }
func (f *fakeAnalyzer) callsOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

// waitCalls waits until every one of names has been analysed n times or
// more, woken by each call.
func (f *fakeAnalyzer) waitCalls(t *testing.T, within time.Duration, n int, names ...string) {
	t.Helper()
	if !f.called.await(within, func() bool {
		for _, name := range names {
			if f.callsOf(name) < n {
				return false
			}
		}
		return true
	}) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t.Fatalf("calls %v after %v, want %d of each of %q", f.calls, within, n, names)
	}
}

// events counts events (a call, a tick) and wakes the goroutines that
// wait for a condition they bring about. The zero value is ready.
type events struct {
	mu   sync.Mutex
	n    int
	next chan struct{} // closed by the next add
}

func (e *events) add() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if e.next != nil {
		close(e.next)
		e.next = nil
	}
}

func (e *events) count() int { e.mu.Lock(); defer e.mu.Unlock(); return e.n }

// wake returns a channel that the next add closes.
func (e *events) wake() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.next == nil {
		e.next = make(chan struct{})
	}
	return e.next
}

// await reports whether cond holds within d, looking at once and after
// each event.
func (e *events) await(d time.Duration, cond func() bool) bool {
	timeout := time.After(d)
	for {
		next := e.wake() // before the look: an event after it wakes us
		if cond() {
			return true
		}
		select {
		case <-next:
		case <-timeout:
			return cond()
		}
	}
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

// rig is a store, its work queue (running scheduled runs) and a scheduler
// on them.
type rig struct {
	st    *store.Store
	q     *queue.Queue
	sched *schedule.Scheduler
	ticks events // the ticks startTicks's gocron has made
}

// newRig opens a store of dialect whose queue runs scheduled runs through
// the scheduler built with cfg, an and notify on the clock now, started.
// No ticks queue the due runs: tests queue them by hand (tick) unless they
// call r.startTicks.
func newRig(t *testing.T, dialect string, now func() time.Time, cfg schedule.Config, an schedule.Analyzer, notify schedule.Notifier) *rig {
	t.Helper()
	return newReplica(t, dialect, storetest.DSN(t, dialect), now, cfg, an, notify)
}

// newReplica is newRig on the database at dsn, shared with other replicas.
func newReplica(t *testing.T, dialect, dsn string, now func() time.Time, cfg schedule.Config, an schedule.Analyzer, notify schedule.Notifier) *rig {
	t.Helper()
	return newReplicaWith(t, dialect, dsn, now, cfg, func(*store.Store) schedule.Analyzer { return an }, notify)
}

// newReplicaWith is newReplica with an analyzer built on the rig's store.
// The queue gives a run the unit timeout main gives it: the run's own
// (cfg.Timeout, or the default) plus EndGrace.
func newReplicaWith(t *testing.T, dialect, dsn string, now func() time.Time, cfg schedule.Config,
	analyzer func(*store.Store) schedule.Analyzer, notify schedule.Notifier) *rig {
	t.Helper()
	r := &rig{st: storetest.OpenAt(t, dialect, dsn, now)}
	r.sched = schedule.New(cfg, r.st.Tracking(), analyzer(r.st), notify, slog.New(slog.DiscardHandler), now)
	unit := cmp.Or(cfg.Timeout, schedule.DefaultTimeout) + schedule.EndGrace
	r.q = storetest.NewQueue(t, r.st, dsn, queue.Config{ScheduledWorkers: 4, ScheduledTimeout: unit}, queue.Workers{Runs: r.sched})
	storetest.StartQueue(t, r.q)
	return r
}

// startTicks has gocron call QueueDue every every, as main's ticks do,
// until the test ends.
func (r *rig) startTicks(t *testing.T, every time.Duration) {
	t.Helper()
	s, err := gocron.NewScheduler()
	if err == nil {
		_, err = s.NewJob(gocron.DurationJob(every), gocron.NewTask(func(ctx context.Context) {
			r.sched.QueueDue(ctx)
			r.ticks.add()
		}),
			gocron.WithSingletonMode(gocron.LimitModeReschedule), gocron.WithStartAt(gocron.WithStartImmediately()))
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown() })
}

// tick queues the due runs, as a tick of the scheduler does, and waits
// until the queue has run every scheduled run queued.
func (r *rig) tick(t *testing.T) {
	t.Helper()
	r.sched.QueueDue(ctx)
	r.settle(t)
}

// settle waits until no scheduled run is left alive in the queue.
func (r *rig) settle(t *testing.T) {
	t.Helper()
	ok := wait.Until(20*time.Second, func() bool {
		for _, u := range storetest.Units(t, r.st, patent.KindScheduledRun) {
			if u.State != "completed" && u.State != "discarded" && u.State != "cancelled" {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("scheduled runs still queued after 20 s: %+v", storetest.Units(t, r.st, patent.KindScheduledRun))
	}
}

// moreTicks waits until the runs queued so far have ended, every replica
// has then made n more ticks (each queueing whatever was due by then),
// and the queue has run what they queued: any run they were to make again
// has been made.
func moreTicks(t *testing.T, n int, replicas ...*rig) {
	t.Helper()
	replicas[0].settle(t) // one database: every replica's units
	for _, r := range replicas {
		want := r.ticks.count() + n
		if !r.ticks.await(20*time.Second, func() bool { return r.ticks.count() >= want }) {
			t.Fatalf("%d ticks within 20 s, want %d", r.ticks.count(), want)
		}
	}
	replicas[0].settle(t)
}

// alertLog records the alerts composed by the scheduler's runs (on the
// queue's workers).
type alertLog struct {
	mu     sync.Mutex
	alerts []patent.Alert
}

func (l *alertLog) AlertDeliveries(a patent.Alert) ([]patent.Delivery, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.alerts = append(l.alerts, a)
	return nil, nil
}

func (l *alertLog) all() []patent.Alert {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]patent.Alert(nil), l.alerts...)
}

// TestAlertRule drives the schedule by hand with a clock: the first run
// records the baseline, later runs alert on large changes either way, and
// a company whose count was 0 never alerts.
func TestAlertRule(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	fake := newFake()
	log := &alertLog{}
	r := newRig(t, store.SQLite, clk.Now, schedule.Config{Interval: 36 * time.Second, Threshold: 20}, fake, log)
	st := r.st
	round := func(acme, zero int) {
		t.Helper()
		fake.set("Acme", acme)
		fake.set("Zero Inc", zero)
		r.tick(t)
		clk.Advance(36 * time.Second) // SCHEDULE_INTERVAL_HOURS=0.01
	}
	// Baseline: a newly tracked company's first run is queued with it.
	fake.set("Acme", 10)
	storetest.Track(ctx, st, "Acme", clk.Now())
	storetest.Track(ctx, st, "Zero Inc", clk.Now())
	r.settle(t)
	clk.Advance(35 * time.Second)
	r.tick(t) // not due again before the interval
	if len(log.all()) != 0 || fake.callsOf("Acme") != 1 {
		t.Fatalf("baseline run: %d alerts, %d calls (want 1 call: not due again within the interval)", len(log.all()), fake.callsOf("Acme"))
	}
	clk.Advance(time.Second)
	round(14, 7) // +40%: alert; Zero Inc had 0: no alert
	round(15, 7) // +7.1%: none
	round(9, 7)  // -40%: alert
	alerts := log.all()
	if len(alerts) != 2 {
		t.Fatalf("alerts = %+v, want 2", alerts)
	}
	if alerts[0].Message != "Patent count for Acme increased by 40.0% (from 10 to 14)" ||
		alerts[1].Message != "Patent count for Acme decreased by 40.0% (from 15 to 9)" {
		t.Errorf("messages = %q, %q", alerts[0].Message, alerts[1].Message)
	}
	stored, _ := st.Tracking().ListAlerts(ctx, 10)
	if len(stored) != 2 || stored[0].OldValue != 15 || stored[0].NewValue != 9 || stored[0].ID == 0 {
		t.Errorf("stored alerts = %+v", stored)
	}
	tracked, _ := st.Tracking().ListTracked(ctx)
	if tracked[0].LastPatentCount != 9 || tracked[0].LastAnalysisAt == nil || !fake.isFresh() {
		t.Errorf("tracked = %+v (scheduled runs fresh: %v)", tracked[0], fake.isFresh())
	}

	// A failed search records nothing and is retried after the back-off
	// (here the interval: RetryBase, 1 min, is capped at the 36 s interval).
	fake.mu.Lock()
	fake.fail["Acme"] = true
	fake.mu.Unlock()
	round(100, 7)
	tracked, _ = st.Tracking().ListTracked(ctx)
	if tracked[0].LastPatentCount != 9 || len(log.all()) != 2 {
		t.Errorf("after a failed run: count %d, alerts %d", tracked[0].LastPatentCount, len(log.all()))
	}
	calls := fake.callsOf("Acme")
	round(100, 7)
	if fake.callsOf("Acme") != calls+1 {
		t.Errorf("failed company not retried next interval")
	}
}

// TestReplicasRunEachDueOnce: three replicas on one database, each with
// its own pool, queue workers and ticks (no leader), run each due company
// exactly once.
func TestReplicasRunEachDueOnce(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			fake := newFake()
			cfg := schedule.Config{Interval: time.Hour, Threshold: 20, Batch: 2}
			var replicas []*rig
			for range 3 {
				replicas = append(replicas, newReplica(t, d, dsn, time.Now, cfg, fake, nil))
			}
			var names []patent.CompanyName
			for i := range 12 {
				n := patent.CompanyName(fmt.Sprintf("Company %d", i))
				names = append(names, n)
				if _, err := storetest.Track(ctx, replicas[i%3].st, n, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range replicas {
				r.startTicks(t, 50*time.Millisecond)
			}
			var all []string
			for _, n := range names {
				all = append(all, n.String())
			}
			fake.waitCalls(t, 20*time.Second, 1, all...)
			moreTicks(t, 3, replicas...) // several more ticks on every replica
			for _, n := range names {
				if c := fake.callsOf(n.String()); c != 1 {
					t.Errorf("%s ran %d times, want once", n, c)
				}
			}
		})
	}
}

// notifierFunc is a schedule.Notifier of a function.
type notifierFunc func(patent.Alert) ([]patent.Delivery, error)

func (f notifierFunc) AlertDeliveries(a patent.Alert) ([]patent.Delivery, error) { return f(a) }

// TestShortInterval runs the real gocron ticks and queue on SQLite with a
// short interval: companies are re-analysed every interval and an alert
// follows a change.
func TestShortInterval(t *testing.T) {
	fake := newFake()
	fake.set("Acme", 10)
	alerts := make(chan patent.Alert, 4)
	r := newRig(t, store.SQLite, time.Now, schedule.Config{Interval: 300 * time.Millisecond, Threshold: 20},
		fake, notifierFunc(func(a patent.Alert) ([]patent.Delivery, error) { alerts <- a; return nil, nil }))
	storetest.Track(ctx, r.st, "Acme", time.Now())
	r.startTicks(t, 50*time.Millisecond)
	fake.waitCalls(t, 20*time.Second, 2, "Acme")
	fake.set("Acme", 20)
	select {
	case a := <-alerts:
		if !strings.Contains(a.Message, "increased by 100.0% (from 10 to 20)") {
			t.Errorf("alert = %q", a.Message)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no alert after the count doubled")
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

// TestShutdownRunsAgain: a run the shutdown's deadline cuts short, before
// or after its search, records nothing; the queue makes its unit available
// again at once, and another replica runs the company for the same due
// time, once.
func TestShutdownRunsAgain(t *testing.T) {
	for _, d := range storetest.Dialects {
		for _, searched := range []bool{false, true} {
			t.Run(d+"/"+map[bool]string{false: "during the search", true: "after the search"}[searched], func(t *testing.T) {
				dsn := storetest.DSN(t, d)
				an := blockingAnalyzer{started: make(chan string, 1), searched: searched}
				first := newReplica(t, d, dsn, time.Now, schedule.Config{Interval: time.Hour, Threshold: 20}, an, nil)
				acme, _ := storetest.Track(ctx, first.st, "Acme", time.Now())
				select {
				case <-an.started:
				case <-time.After(20 * time.Second):
					t.Fatal("the first run never started")
				}
				cut, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				if err := first.q.Shutdown(cut); err == nil {
					t.Error("the queue's Shutdown cut a run short and returned nil")
				}
				c := trackedByID(t, first.st, acme.ID)
				if !c.NextRunAt.Equal(acme.NextRunAt) || c.LastAnalysisAt != nil || c.ConsecutiveFailures != 0 {
					t.Fatalf("after a cut-short run: %+v, want nothing recorded, still due at %v", c, acme.NextRunAt)
				}
				fake := newFake()
				fake.set("Acme", 3)
				second := newReplica(t, d, dsn, time.Now, schedule.Config{Interval: time.Hour, Threshold: 20}, fake, nil)
				second.settle(t)
				if c := trackedByID(t, second.st, acme.ID); fake.callsOf("Acme") != 1 || c.LastPatentCount != 3 {
					t.Errorf("on the second replica: %d runs, %+v; want one, recorded", fake.callsOf("Acme"), c)
				}
			})
		}
	}
}

// TestRunOncePerDueTime: a scheduled run's unit run again for the same due
// time (after its process died), or for a company no longer due at it or
// no longer tracked, analyses nothing.
func TestRunOncePerDueTime(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	fake := newFake()
	fake.set("Acme", 4)
	sched := schedule.New(schedule.Config{Interval: time.Hour, Threshold: 20}, st.Tracking(), fake, nil, slog.New(slog.DiscardHandler), time.Now)
	acme, _ := storetest.Track(ctx, st, "Acme", time.Now())
	u := patent.ScheduledRun{TrackedID: acme.ID, DueAt: acme.NextRunAt}
	for range 2 {
		if err := sched.Run(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := sched.Run(ctx, patent.ScheduledRun{TrackedID: acme.ID, DueAt: acme.NextRunAt.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := sched.Run(ctx, patent.ScheduledRun{TrackedID: 9999, DueAt: acme.NextRunAt}); err != nil {
		t.Fatal(err)
	}
	if n := fake.callsOf("Acme"); n != 1 {
		t.Errorf("Acme analysed %d times, want once", n)
	}
	if c := trackedByID(t, st, acme.ID); c.LastPatentCount != 4 || !c.NextRunAt.After(acme.NextRunAt) {
		t.Errorf("after the run: %+v", c)
	}
}

// TestRunTimeout: a run longer than SCHEDULE_RUN_TIMEOUT is cut and counts
// as a failed run, retried after the back-off.
func TestRunTimeout(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	st := storetest.Open(t, store.SQLite, clk.Now)
	an := blockingAnalyzer{started: make(chan string, 1)}
	sched := schedule.New(schedule.Config{Interval: time.Hour, Threshold: 20, Timeout: 100 * time.Millisecond, RetryBase: time.Minute},
		st.Tracking(), an, nil, slog.New(slog.DiscardHandler), clk.Now)
	acme, _ := storetest.Track(ctx, st, "Acme", clk.Now())
	if err := sched.Run(ctx, patent.ScheduledRun{TrackedID: acme.ID, DueAt: acme.NextRunAt}); err != nil {
		t.Fatalf("Run = %v, want the timed-out run recorded", err)
	}
	c := trackedByID(t, st, acme.ID)
	if c.ConsecutiveFailures != 1 || !c.NextRunAt.Equal(clk.Now().Add(time.Minute)) {
		t.Errorf("after a timed-out run: %+v, want 1 failure, retried in a minute", c)
	}
}
