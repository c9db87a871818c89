package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
)

// The tests of this file run against the real store, on SQLite and (with
// TEST_DATABASE_URL) PostgreSQL: the durable-delivery contract of
// decisions.md.

func durable(tb testing.TB, st *store.Store, owner string, urls []string, schedule []time.Duration, timeout time.Duration) *webhook.Dispatcher {
	tb.Helper()
	return webhook.New(context.Background(), webhook.Config{URLs: urls, Secret: whsecSecret, Timeout: timeout,
		Schedule: schedule, Owner: owner, Poll: 20 * time.Millisecond}, st, nil)
}

// raise stores an alert and its deliveries in one transaction, as the
// scheduler does.
func raise(tb testing.TB, st *store.Store, d *webhook.Dispatcher, n int) patent.Alert {
	tb.Helper()
	a, err := st.CreateAlert(context.Background(), patent.Alert{CompanyName: "Acme " + strconv.Itoa(n), AlertType: patent.AlertTypePatentCountChange,
		Message: "Patent count for Acme increased by 50.0% (from 4 to 6)", OldValue: 4, NewValue: 6}, d.AlertDeliveries)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// listed returns every delivery, newest first.
func listed(tb testing.TB, st *store.Store) []patent.Delivery {
	tb.Helper()
	items, _, err := st.ListDeliveries(context.Background(), patent.DeliveryFilter{}, 500, "")
	if err != nil {
		tb.Fatal(err)
	}
	return items
}

func waitStatus(tb testing.TB, st *store.Store, status string, n int, within time.Duration) []patent.Delivery {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		var got []patent.Delivery
		for _, d := range listed(tb, st) {
			if d.Status == status {
				got = append(got, d)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d deliveries %s within %v, want %d: %+v", len(got), status, within, n, listed(tb, st))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReceiverDownThenUp: the receiver answers 503 three times, then 200.
// The delivery is attempted 4 times on the schedule, always with the same
// webhook-id and body, each attempt signed afresh (its own timestamp), and
// delivered once.
func TestReceiverDownThenUp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		rc := newReceiver(t, status(503, 503, 503, 200))
		// 1.1 s before the 2nd attempt: its webhook-timestamp (seconds)
		// differs from the first's.
		d := durable(t, st, "A", []string{rc.URL + "/hook"}, []time.Duration{1100 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, time.Hour}, 5*time.Second)
		reg := prometheus.NewRegistry()
		d.RegisterMetrics(reg)
		run(t, d)
		raise(t, st, d, 1)

		done := waitStatus(t, st, patent.DeliveryDelivered, 1, 20*time.Second)
		time.Sleep(100 * time.Millisecond) // nothing more may arrive
		got := rc.deliveries()
		if len(got) != 4 {
			t.Fatalf("receiver got %d requests, want 4 (3 failures, 1 success)", len(got))
		}
		for i, g := range got {
			if id := g.header.Get("webhook-id"); id != done[0].ID || jsonID(t, g.body) != id {
				t.Errorf("attempt %d: webhook-id %q, body id %q, want %q on every attempt", i+1, id, jsonID(t, g.body), done[0].ID)
			}
			if string(g.body) != string(got[0].body) {
				t.Errorf("attempt %d sent other bytes than the first", i+1)
			}
			if err := webhook.Verify(whsecSecret, g.header, g.body, time.Now()); err != nil {
				t.Errorf("attempt %d: signature: %v", i+1, err)
			}
		}
		if got[0].header.Get("webhook-timestamp") == got[1].header.Get("webhook-timestamp") ||
			got[0].header.Get("webhook-signature") == got[1].header.Get("webhook-signature") {
			t.Error("the 2nd attempt reuses the 1st one's timestamp or signature, want them afresh")
		}
		if gap := got[1].at.Sub(got[0].at); gap < time.Second {
			t.Errorf("2nd attempt %v after the 1st, want the schedule's 1.1s", gap)
		}
		if dl := done[0]; dl.Attempts != 4 || dl.LastStatusCode == nil || *dl.LastStatusCode != 200 || dl.LastError != nil {
			t.Errorf("delivery = %+v, want 4 attempts, last status 200, no error", dl)
		}
		for outcome, want := range map[string]float64{"delivered": 1, "retried": 3, "failed": 0} {
			if got := testutil.ToFloat64(counter(t, reg, outcome)); got != want {
				t.Errorf("deliveries_total{outcome=%s} = %v, want %v", outcome, got, want)
			}
		}
	})
}

// counter finds patentsvc_webhook_deliveries_total{outcome} in reg.
func counter(tb testing.TB, reg *prometheus.Registry, outcome string) prometheus.Collector {
	tb.Helper()
	return prometheus.CollectorFunc(func(ch chan<- prometheus.Metric) {
		mfs, err := reg.Gather()
		if err != nil {
			tb.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "patentsvc_webhook_deliveries_total" {
				continue
			}
			for _, m := range mf.Metric {
				if m.Label[0].GetValue() == outcome {
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("c", "c", nil, nil), prometheus.CounterValue, m.Counter.GetValue())
				}
			}
		}
	})
}

// TestGoneAndExhausted: 410 fails a delivery at once; a receiver that
// keeps failing exhausts the schedule (3 waits: 4 attempts), then the
// delivery is failed and not tried again.
func TestGoneAndExhausted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		gone := newReceiver(t, status(410))
		down := newReceiver(t, status(500))
		d := durable(t, st, "A", []string{gone.URL, down.URL}, fastSchedule, 5*time.Second)
		run(t, d)
		raise(t, st, d, 1)
		failed := waitStatus(t, st, patent.DeliveryFailed, 2, 20*time.Second)
		time.Sleep(100 * time.Millisecond)
		if n := len(gone.deliveries()); n != 1 {
			t.Errorf("410 receiver got %d requests, want 1", n)
		}
		if n := len(down.deliveries()); n != 4 {
			t.Errorf("failing receiver got %d requests, want 4", n)
		}
		for _, f := range failed {
			if f.NextAttemptAt != nil || f.LastError == nil {
				t.Errorf("failed delivery = %+v, want no next attempt and an error", f)
			}
		}
	})
}

// TestTwoReplicasSendEachOnce runs two dispatchers (two owners, each on a
// store of its own over one database, as two replicas are) on 30 alerts:
// each delivery reaches the receiver exactly once.
func TestTwoReplicasSendEachOnce(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dsn := storetest.DSN(t, dialect)
			open := func() *store.Store {
				st, err := store.Open(context.Background(), dialect, dsn, store.Pool{MaxOpen: 5, MaxIdle: 2, MaxLifetime: time.Minute},
					slog.New(slog.NewJSONHandler(io.Discard, nil)), time.Now)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			a, b := open(), open()
			rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				time.Sleep(5 * time.Millisecond)
				w.WriteHeader(http.StatusNoContent)
			})
			da := durable(t, a, "replica-a", []string{rc.URL}, fastSchedule, 5*time.Second)
			db := durable(t, b, "replica-b", []string{rc.URL}, fastSchedule, 5*time.Second)
			run(t, da)
			run(t, db)
			const n = 30
			for i := range n {
				if i%2 == 0 {
					raise(t, a, da, i)
				} else {
					raise(t, b, db, i)
				}
			}
			waitStatus(t, a, patent.DeliveryDelivered, n, 30*time.Second)
			time.Sleep(100 * time.Millisecond)
			seen := map[string]int{}
			for _, g := range rc.deliveries() {
				seen[g.header.Get("webhook-id")]++
			}
			if len(seen) != n {
				t.Errorf("receiver saw %d ids, want %d", len(seen), n)
			}
			for id, c := range seen {
				if c != 1 {
					t.Errorf("%s sent %d times, want once", id, c)
				}
			}
		})
	}
}

// TestShutdownDoesNotWaitForReceiver: the receiver never answers; Shutdown
// returns soon after its context ends (not after the 30 s attempt
// timeout), and the delivery is handed back, pending and due, for the next
// process.
func TestShutdownDoesNotWaitForReceiver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		rc := deadEndpoint(t)
		d := durable(t, st, "A", []string{rc.URL}, fastSchedule, 30*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { d.Run(ctx) })
		raise(t, st, d, 1)
		rc.waitN(t, 1, 10*time.Second)
		cancel() // the signal: Run stops claiming
		wg.Wait()

		const budget = 300 * time.Millisecond
		sctx, scancel := context.WithTimeout(context.Background(), budget)
		defer scancel()
		start := time.Now()
		err := d.Shutdown(sctx)
		if took := time.Since(start); took > budget+1500*time.Millisecond {
			t.Errorf("Shutdown took %v, want about %v", took, budget)
		}
		if err == nil {
			t.Error("Shutdown = nil, want an error saying an attempt was cut short")
		}
		claimed, err := st.ClaimDeliveries(context.Background(), "next-process", 10, time.Minute)
		if err != nil || len(claimed) != 1 || claimed[0].Attempts != 0 {
			t.Fatalf("after shutdown the next process claims %+v (%v), want the delivery, due at once, no attempt counted", claimed, err)
		}
	})
}
