package webhook_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/testkit/wait"
)

// The tests of this file run against the real store and work queue, on
// SQLite and (with TEST_DATABASE_URL) PostgreSQL: the durable-delivery
// contract of decisions.md.

// durable opens a replica on the database at dsn: its store, its queue
// (started; its webhook workers make the attempts) and the dispatcher.
func durable(tb testing.TB, dialect, dsn string, urls []string, schedule []time.Duration, timeout time.Duration) (*store.Store, *queue.Queue, *webhook.Dispatcher) {
	tb.Helper()
	st := storetest.OpenAt(tb, dialect, dsn, time.Now)
	d := webhook.New(context.Background(), webhook.Config{URLs: urls, Secret: whsecSecret, Timeout: timeout, Schedule: schedule}, st.Deliveries(), nil)
	q := storetest.NewQueue(tb, st, dsn, queue.Config{DeliveryWorkers: webhook.Workers, DeliveryTimeout: timeout + webhook.UnitMargin},
		queue.Workers{Deliveries: d})
	storetest.StartQueue(tb, q)
	return st, q, d
}

// eachDurable runs fn once per dialect, on a fresh database.
func eachDurable(t *testing.T, fn func(t *testing.T, dialect, dsn string)) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { fn(t, d, storetest.DSN(t, d)) })
	}
}

// raise composes an alert's deliveries and stores them with it in one
// transaction, as the scheduler does (its id reserved first).
func raise(tb testing.TB, st *store.Store, d *webhook.Dispatcher, n int) patent.Alert {
	tb.Helper()
	ids, err := st.Tracking().ReserveAlertIDs(context.Background(), 1)
	if err != nil {
		tb.Fatal(err)
	}
	a := patent.Alert{ID: ids[0], CompanyName: "Acme " + strconv.Itoa(n), AlertType: patent.AlertTypePatentCountChange,
		Message: "Patent count for Acme increased by 50.0% (from 4 to 6)", OldValue: 4, NewValue: 6, CreatedAt: time.Now().UTC()}
	ds, err := d.AlertDeliveries(a)
	if err != nil {
		tb.Fatal(err)
	}
	if a, err = st.Tracking().CreateAlert(context.Background(), a, ds); err != nil {
		tb.Fatal(err)
	}
	return a
}

// listed returns every delivery, newest first.
func listed(tb testing.TB, st *store.Store) []patent.Delivery {
	tb.Helper()
	items, _, err := st.Deliveries().ListDeliveries(context.Background(), patent.DeliveryFilter{}, 500, "")
	if err != nil {
		tb.Fatal(err)
	}
	return items
}

// waitStatus waits until n deliveries are in status and returns them.
func waitStatus(tb testing.TB, st *store.Store, status string, n int, within time.Duration) []patent.Delivery {
	tb.Helper()
	var got []patent.Delivery
	if !wait.Until(within, func() bool {
		got = nil
		for _, d := range listed(tb, st) {
			if d.Status == status {
				got = append(got, d)
			}
		}
		return len(got) >= n
	}) {
		tb.Fatalf("%d deliveries %s within %v, want %d: %+v", len(got), status, within, n, listed(tb, st))
	}
	return got
}

// settled waits until every delivery unit has ended (completed, cancelled
// or discarded): no attempt is under way or due any more, so whatever
// attempt a receiver is to get has reached it by then. It stands for "no
// more arrives" without waiting a while to see.
func settled(tb testing.TB, st *store.Store) {
	tb.Helper()
	var units []storetest.Unit
	if !wait.Until(20*time.Second, func() bool {
		units = storetest.Units(tb, st, patent.KindDelivery)
		for _, u := range units {
			if u.State != "completed" && u.State != "cancelled" && u.State != "discarded" {
				return false
			}
		}
		return len(units) > 0
	}) {
		tb.Fatalf("delivery units not ended within 20 s: %+v", units)
	}
}

// TestReceiverDownThenUp: the receiver answers 503 three times, then 200.
// The delivery is attempted 4 times on the schedule, always with the same
// webhook-id and body, each attempt signed afresh (its own timestamp), and
// delivered once.
func TestReceiverDownThenUp(t *testing.T) {
	eachDurable(t, func(t *testing.T, dialect, dsn string) {
		rc := newReceiver(t, status(503, 503, 503, 200))
		// 1.1 s before the 2nd attempt: its webhook-timestamp (seconds)
		// differs from the first's.
		st, _, d := durable(t, dialect, dsn, []string{rc.URL + "/hook"}, []time.Duration{1100 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, time.Hour}, 5*time.Second)
		reg := prometheus.NewRegistry()
		d.RegisterMetrics(reg)
		raise(t, st, d, 1)

		done := waitStatus(t, st, patent.DeliveryDelivered, 1, 20*time.Second)
		settled(t, st) // nothing more may arrive
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
	eachDurable(t, func(t *testing.T, dialect, dsn string) {
		gone := newReceiver(t, status(410))
		down := newReceiver(t, status(500))
		st, _, d := durable(t, dialect, dsn, []string{gone.URL, down.URL}, fastSchedule, 5*time.Second)
		raise(t, st, d, 1)
		failed := waitStatus(t, st, patent.DeliveryFailed, 2, 20*time.Second)
		settled(t, st) // nothing more may arrive
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

// TestTwoReplicasSendEachOnce runs two replicas (each a store with its
// own pool, queue and dispatcher, over one database) on 30 alerts: each
// delivery reaches the receiver exactly once.
func TestTwoReplicasSendEachOnce(t *testing.T) {
	eachDurable(t, func(t *testing.T, dialect, dsn string) {
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			time.Sleep(5 * time.Millisecond)
			w.WriteHeader(http.StatusNoContent)
		})
		a, _, da := durable(t, dialect, dsn, []string{rc.URL}, fastSchedule, 5*time.Second)
		b, _, db := durable(t, dialect, dsn, []string{rc.URL}, fastSchedule, 5*time.Second)
		const n = 30
		for i := range n {
			if i%2 == 0 {
				raise(t, a, da, i)
			} else {
				raise(t, b, db, i)
			}
		}
		waitStatus(t, a, patent.DeliveryDelivered, n, 30*time.Second)
		settled(t, a) // nothing more may arrive, from either replica
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

// TestShutdownDoesNotWaitForReceiver: the receiver hangs; the queue's
// Shutdown returns soon after its context ends (not after the 30 s attempt
// timeout), nothing is recorded of the cut attempt, and its unit is
// available again at once: another replica delivers it, once the receiver
// answers, with the same webhook-id and one attempt counted.
func TestShutdownDoesNotWaitForReceiver(t *testing.T) {
	eachDurable(t, func(t *testing.T, dialect, dsn string) {
		up := make(chan struct{}) // closed when the receiver answers
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-up:
			case <-r.Context().Done():
			}
		})
		st, q, d := durable(t, dialect, dsn, []string{rc.URL}, fastSchedule, 30*time.Second)
		raise(t, st, d, 1)
		rc.waitN(t, 1, 10*time.Second)

		const budget = 300 * time.Millisecond
		sctx, scancel := context.WithTimeout(context.Background(), budget)
		defer scancel()
		start := time.Now()
		err := q.Shutdown(sctx)
		if took := time.Since(start); took > budget+3*time.Second {
			t.Errorf("Shutdown took %v, want about %v", took, budget)
		}
		if err == nil {
			t.Error("Shutdown = nil, want an error saying an attempt was cut short")
		}
		if del := listed(t, st)[0]; del.Status != patent.DeliveryPending || del.Attempts != 0 {
			t.Fatalf("after shutdown: %+v, want pending, no attempt counted", del)
		}
		if units := storetest.Units(t, st, patent.KindDelivery); len(units) != 1 || units[0].State != "available" {
			t.Fatalf("delivery units after the cut = %+v, want it available again", units)
		}

		close(up)
		durable(t, dialect, dsn, []string{rc.URL}, fastSchedule, 5*time.Second) // the next replica
		done := waitStatus(t, st, patent.DeliveryDelivered, 1, 20*time.Second)[0]
		got := rc.deliveries()
		if len(got) != 2 || got[0].header.Get("webhook-id") != done.ID || got[1].header.Get("webhook-id") != done.ID || done.Attempts != 1 {
			t.Errorf("receiver got %d requests (ids %q, %q), delivery %+v; want the cut one and one more, same id, 1 attempt counted",
				len(got), got[0].header.Get("webhook-id"), got[len(got)-1].header.Get("webhook-id"), done)
		}
	})
}
