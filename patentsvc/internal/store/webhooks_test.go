package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// deliveriesOf returns one delivery per URL, with ids prefix-1, prefix-2,
// ...
func deliveriesOf(prefix string, urls ...string) []patent.Delivery {
	var out []patent.Delivery
	for i, u := range urls {
		out = append(out, patent.Delivery{ID: fmt.Sprintf("%s-%d", prefix, i+1), Event: "alert.patent_count_change",
			URL: u, URLHost: "https://example.com", Payload: []byte(`{"n":1}`)})
	}
	return out
}

func countDeliveries(t *testing.T, s *store.Store) int {
	t.Helper()
	items, _, err := s.Deliveries().ListDeliveries(context.Background(), patent.DeliveryFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

var testAlert = patent.Alert{CompanyName: "Acme", AlertType: patent.AlertTypePatentCountChange, Message: "m", OldValue: 10, NewValue: 20}

// TestDeliveriesCommitWithTheirEvent checks decisions.md's transaction
// rule: an alert is never stored without its deliveries, nor a delivery
// without its alert; likewise a job end.
func TestDeliveriesCommitWithTheirEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		// A delivery insert fails (a duplicate id): the alert goes too.
		dup := deliveriesOf("dup", "https://a.example/h")
		if _, err := s.Tracking().CreateAlert(ctx, testAlert, append(dup, dup[0])); err == nil {
			t.Fatal("CreateAlert with a failing delivery insert = nil, want an error")
		}
		if alerts, _ := s.Tracking().ListAlerts(ctx, 10); len(alerts) != 0 || countDeliveries(t, s) != 0 {
			t.Fatalf("after failed transactions: %d alerts, %d deliveries, want none", len(alerts), countDeliveries(t, s))
		}
		// An alert with the id reserved for it, and its deliveries, commit
		// together.
		ids, err := s.Tracking().ReserveAlertIDs(ctx, 2)
		if err != nil || len(ids) != 2 || ids[1] != ids[0]+1 {
			t.Fatalf("ReserveAlertIDs(2) = %v, %v; want two ids in a row", ids, err)
		}
		withID := testAlert
		withID.ID = ids[1]
		a, err := s.Tracking().CreateAlert(ctx, withID, deliveriesOf("ok", "https://a.example/h", "https://b.example/h"))
		if err != nil || a.ID != ids[1] {
			t.Fatalf("CreateAlert = %+v, %v; want the reserved id %d", a, err, ids[1])
		}
		if n := countDeliveries(t, s); n != 2 {
			t.Fatalf("%d deliveries, want 2 (one per URL)", n)
		}
		// Ids reserved later, and those the database gives, never meet the
		// reserved ones.
		more, err := s.Tracking().ReserveAlertIDs(ctx, 1)
		if err != nil || more[0] <= ids[1] {
			t.Fatalf("ReserveAlertIDs after = %v, %v; want past %d", more, err, ids[1])
		}
		if b, err := s.Tracking().CreateAlert(ctx, testAlert, nil); err != nil || b.ID <= more[0] {
			t.Fatalf("an alert without an id = %+v, %v; want an id past %d", b, err, more[0])
		}

		// Each delivery has its unit, queued in the same transaction.
		if units := storetest.Units(t, s, "webhook_delivery"); len(units) != 2 || !strings.Contains(units[0].Args, `"delivery_id":"ok-1"`) {
			t.Fatalf("delivery units = %+v, want one per delivery", units)
		}

		// A job end reported by a unit that does not hold the job stores
		// no delivery.
		job := patent.Job{ID: "job-1", Companies: []string{"Acme"}, MaxWorkers: 1}
		if _, err := s.Jobs().CreateJob(ctx, job, 0, 0); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Jobs().StartJob(ctx, "job-1", 41); !ok || err != nil {
			t.Fatal(ok, err)
		}
		job.Status = patent.JobCompleted
		err = s.Jobs().FinishJob(ctx, job, 42, deliveriesOf("lost", "https://a.example/h"))
		if !errors.Is(err, store.ErrJobLost) || countDeliveries(t, s) != 2 {
			t.Fatalf("FinishJob by another unit = %v with %d deliveries, want ErrJobLost and 2", err, countDeliveries(t, s))
		}
		// A failing delivery insert keeps the job unfinished.
		dup = deliveriesOf("ok", "https://a.example/h")
		if err = s.Jobs().FinishJob(ctx, job, 41, dup); err == nil {
			t.Fatal("FinishJob with a failing delivery insert = nil, want an error")
		}
		if got, _ := s.Jobs().Job(ctx, "job-1"); got.Status != patent.JobRunning {
			t.Fatalf("after a failed FinishJob: job %s, want still running", got.Status)
		}
		msg := "stopped"
		job.Status, job.Error = patent.JobFailed, &msg
		err = s.Jobs().FinishJob(ctx, job, 41, deliveriesOf("job", "https://a.example/h"))
		got, _ := s.Jobs().Job(ctx, "job-1")
		if err != nil || got.Status != patent.JobFailed || got.Error == nil || *got.Error != msg || countDeliveries(t, s) != 3 {
			t.Fatalf("FinishJob = %v, job %+v, %d deliveries; want the failed job and 3", err, got, countDeliveries(t, s))
		}
	})
}

// TestDeliveryAttempts: an attempt's outcome is recorded while the
// delivery is pending, and refused once it has ended; the listing shows
// neither URL nor payload.
func TestDeliveryAttempts(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			s := storetest.Open(t, d, func() time.Time { return now })
			ctx := context.Background()
			if _, err := s.Tracking().CreateAlert(ctx, testAlert, deliveriesOf("c", "https://a.example/h")); err != nil {
				t.Fatal(err)
			}
			got, err := s.Deliveries().Delivery(ctx, "c-1")
			if err != nil || string(got.Payload) != `{"n":1}` || got.URL != "https://a.example/h" || got.Status != patent.DeliveryPending || !got.NextAttemptAt.Equal(now) {
				t.Fatalf("Delivery = %+v, %v", got, err)
			}
			retry := now.Add(time.Hour)
			if err := s.Deliveries().RecordAttempt(ctx, "c-1", patent.Attempt{Status: patent.DeliveryPending, StatusCode: 503, Error: "HTTP 503", NextAttemptAt: retry, At: now}); err != nil {
				t.Fatal(err)
			}
			items, _, _ := s.Deliveries().ListDeliveries(ctx, patent.DeliveryFilter{Status: patent.DeliveryPending}, 10, "")
			if len(items) != 1 || items[0].Attempts != 1 || *items[0].LastStatusCode != 503 || *items[0].LastError != "HTTP 503" ||
				!items[0].NextAttemptAt.Equal(retry) || items[0].URL != "" || items[0].Payload != nil {
				t.Fatalf("listed = %+v, want 1 attempt, 503, the retry time, and neither URL nor payload", items)
			}
			if err := s.Deliveries().RecordAttempt(ctx, "c-1", patent.Attempt{Status: patent.DeliveryDelivered, StatusCode: 200, At: retry}); err != nil {
				t.Fatal(err)
			}
			if err := s.Deliveries().RecordAttempt(ctx, "c-1", patent.Attempt{Status: patent.DeliveryFailed, StatusCode: 500, At: retry}); !errors.Is(err, store.ErrDeliveryEnded) {
				t.Fatalf("an attempt after delivery = %v, want ErrDeliveryEnded", err)
			}
			if _, err := s.Deliveries().Delivery(ctx, "nope"); !errors.Is(err, patent.ErrNotFound) {
				t.Fatalf("Delivery(unknown) = %v", err)
			}
		})
	}
}

// TestSweepDeliveries: a pending delivery without a unit (stored before
// the work queue existed) gets one; one whose unit the queue gave up
// fails, with the reason, and can be retried with a new unit.
func TestSweepDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.Tracking().CreateAlert(ctx, testAlert, deliveriesOf("s", "https://a.example/h", "https://b.example/h")); err != nil {
			t.Fatal(err)
		}
		units := storetest.Units(t, s, "webhook_delivery")
		storetest.SetUnitState(t, s, units[0].ID, "discarded")
		if q, f, err := s.Deliveries().SweepDeliveries(ctx, "gave up"); q != 0 || f != 1 || err != nil {
			t.Fatalf("SweepDeliveries = %d queued, %d failed, %v; want 0, 1", q, f, err)
		}
		d, _ := s.Deliveries().Delivery(ctx, "s-1")
		if d.Status != patent.DeliveryFailed || *d.LastError != "gave up" {
			t.Fatalf("given-up delivery = %+v", d)
		}
		if other, _ := s.Deliveries().Delivery(ctx, "s-2"); other.Status != patent.DeliveryPending {
			t.Fatalf("delivery with a live unit = %+v, want pending", other)
		}
		if _, err := s.Deliveries().RetryDelivery(ctx, "s-1"); err != nil {
			t.Fatal(err)
		}
		if units := storetest.Units(t, s, "webhook_delivery"); len(units) != 3 || units[2].State != "available" {
			t.Fatalf("units after a retry = %+v, want a new one", units)
		}
		if q, f, err := s.Deliveries().SweepDeliveries(ctx, "gave up"); q != 0 || f != 0 || err != nil {
			t.Fatalf("SweepDeliveries again = %d, %d, %v; want nothing to do", q, f, err)
		}
	})
}

// TestDeliveryListingAndRetry pages the admin listing newest first with a
// status filter, retries a failed delivery and refuses to retry others.
func TestDeliveryListingAndRetry(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			s := storetest.Open(t, d, func() time.Time { return now })
			ctx := context.Background()
			for i := range 5 {
				now = now.Add(time.Second)
				if _, err := s.Tracking().CreateAlert(ctx, testAlert, deliveriesOf(fmt.Sprintf("d%d", i), "https://a.example/h")); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Deliveries().RecordAttempt(ctx, "d0-1", patent.Attempt{Status: patent.DeliveryFailed, StatusCode: 410, Error: "HTTP 410", At: now})
			_ = s.Deliveries().RecordAttempt(ctx, "d1-1", patent.Attempt{Status: patent.DeliveryDelivered, StatusCode: 200, At: now})

			var ids []string
			cursor := ""
			for {
				page, next, err := s.Deliveries().ListDeliveries(ctx, patent.DeliveryFilter{}, 2, cursor)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range page {
					ids = append(ids, p.ID)
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if fmt.Sprint(ids) != "[d4-1 d3-1 d2-1 d1-1 d0-1]" {
				t.Fatalf("listing = %v, want newest first", ids)
			}
			failed, _, _ := s.Deliveries().ListDeliveries(ctx, patent.DeliveryFilter{Status: patent.DeliveryFailed}, 10, "")
			if len(failed) != 1 || failed[0].ID != "d0-1" {
				t.Fatalf("failed = %+v, want d0-1", failed)
			}
			// The unit of its last attempt has not ended yet (it recorded the
			// failure, then River records its end): no retry beside it.
			if _, err := s.Deliveries().RetryDelivery(ctx, "d0-1"); !errors.Is(err, patent.ErrConflict) {
				t.Fatalf("RetryDelivery(failed, its unit alive) = %v, want a conflict", err)
			}
			for _, u := range storetest.Units(t, s, "webhook_delivery") {
				if strings.Contains(u.Args, `"d0-1"`) {
					storetest.SetUnitState(t, s, u.ID, "completed")
				}
			}
			got, err := s.Deliveries().RetryDelivery(ctx, "d0-1")
			if err != nil || got.Status != patent.DeliveryPending || got.Attempts != 0 {
				t.Fatalf("RetryDelivery(failed) = %+v, %v; want pending with 0 attempts", got, err)
			}
			if again, _ := s.Deliveries().Delivery(ctx, "d0-1"); !again.NextAttemptAt.Equal(now) || again.LastError == nil {
				t.Fatalf("retried delivery = %+v, want due at once, its last error kept", again)
			}
			for id, want := range map[string]error{"d1-1": patent.ErrConflict, "d2-1": patent.ErrConflict, "nope": patent.ErrNotFound} {
				if _, err := s.Deliveries().RetryDelivery(ctx, id); !errors.Is(err, want) {
					t.Errorf("RetryDelivery(%s) = %v, want %v", id, err, want)
				}
			}
			if n, _ := s.Deliveries().PendingDeliveries(ctx); n != 4 {
				t.Errorf("PendingDeliveries = %d, want 4", n)
			}
			now = now.Add(48 * time.Hour)
			if n, err := s.Deliveries().PruneDeliveries(ctx, now.Add(-24*time.Hour), now.Add(-24*time.Hour)); err != nil || n != 1 {
				t.Errorf("PruneDeliveries = %d, %v; want the delivered row only (the failed one was retried)", n, err)
			}
		})
	}
}
