package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// deliveriesOf returns a composer of one delivery per URL, with ids
// prefix-1, prefix-2, ...
func deliveriesOf[E any](prefix string, urls ...string) patent.Deliveries[E] {
	return func(E) ([]patent.Delivery, error) {
		var out []patent.Delivery
		for i, u := range urls {
			out = append(out, patent.Delivery{ID: fmt.Sprintf("%s-%d", prefix, i+1), Event: "alert.patent_count_change",
				URL: u, URLHost: "https://example.com", Payload: []byte(`{"n":1}`)})
		}
		return out, nil
	}
}

func countDeliveries(t *testing.T, s *store.Store) int {
	t.Helper()
	items, _, err := s.ListDeliveries(context.Background(), patent.DeliveryFilter{}, 100, "")
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
		// The composer fails: neither the alert nor a delivery is stored.
		_, err := s.CreateAlert(ctx, testAlert, func(patent.Alert) ([]patent.Delivery, error) { return nil, errors.New("boom") })
		if err == nil {
			t.Fatal("CreateAlert with a failing composer = nil, want an error")
		}
		// A delivery insert fails (a duplicate id): the alert goes too.
		dup := func(patent.Alert) ([]patent.Delivery, error) {
			ds, _ := deliveriesOf[patent.Alert]("dup", "https://a.example/h")(patent.Alert{})
			return append(ds, ds[0]), nil
		}
		if _, err := s.CreateAlert(ctx, testAlert, dup); err == nil {
			t.Fatal("CreateAlert with a failing delivery insert = nil, want an error")
		}
		if alerts, _ := s.ListAlerts(ctx, 10); len(alerts) != 0 || countDeliveries(t, s) != 0 {
			t.Fatalf("after failed transactions: %d alerts, %d deliveries, want none", len(alerts), countDeliveries(t, s))
		}
		// The composer sees the alert as stored, and both commit.
		var seen patent.Alert
		a, err := s.CreateAlert(ctx, testAlert, func(a patent.Alert) ([]patent.Delivery, error) {
			seen = a
			return deliveriesOf[patent.Alert]("ok", "https://a.example/h", "https://b.example/h")(a)
		})
		if err != nil || seen.ID == 0 || seen.ID != a.ID {
			t.Fatalf("CreateAlert = %+v, %v; composer saw %+v", a, err, seen)
		}
		if n := countDeliveries(t, s); n != 2 {
			t.Fatalf("%d deliveries, want 2 (one per URL)", n)
		}

		// A job end whose lease is lost stores no delivery.
		job := patent.Job{ID: "job-1", Companies: []string{"Acme"}, MaxWorkers: 1}
		if _, err := s.CreateJob(ctx, job, "p1", time.Minute); err != nil {
			t.Fatal(err)
		}
		err = s.FinishJob(ctx, "job-1", "someone-else", patent.JobCompleted, nil, "", deliveriesOf[patent.Job]("lost", "https://a.example/h"))
		if !errors.Is(err, store.ErrLeaseLost) || countDeliveries(t, s) != 2 {
			t.Fatalf("FinishJob without the lease = %v with %d deliveries, want ErrLeaseLost and 2", err, countDeliveries(t, s))
		}
		// A failing composer keeps the job unfinished.
		err = s.FinishJob(ctx, "job-1", "p1", patent.JobCompleted, nil, "", func(patent.Job) ([]patent.Delivery, error) { return nil, errors.New("boom") })
		if got, _ := s.Job(ctx, "job-1"); err == nil || got.Status != patent.JobPending {
			t.Fatalf("FinishJob with a failing composer = %v, job %s; want an error and the job still pending", err, got.Status)
		}
		var ended patent.Job
		err = s.FinishJob(ctx, "job-1", "p1", patent.JobFailed, nil, "stopped", func(j patent.Job) ([]patent.Delivery, error) {
			ended = j
			return deliveriesOf[patent.Job]("job", "https://a.example/h")(j)
		})
		if err != nil || ended.Status != patent.JobFailed || ended.Error == nil || countDeliveries(t, s) != 3 {
			t.Fatalf("FinishJob = %v, composer saw %+v, %d deliveries; want the failed job and 3", err, ended, countDeliveries(t, s))
		}
	})
}

// TestDeliveryClaims checks the claim rules: a due delivery is claimed by
// one owner at a time, a lapsed claim can be taken over (and the old
// owner's record is refused), an attempt is recorded once.
func TestDeliveryClaims(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			s := storetest.Open(t, d, func() time.Time { return now })
			ctx := context.Background()
			if _, err := s.CreateAlert(ctx, testAlert, deliveriesOf[patent.Alert]("c", "https://a.example/h")); err != nil {
				t.Fatal(err)
			}
			got, err := s.ClaimDeliveries(ctx, "A", 10, time.Minute)
			if err != nil || len(got) != 1 || string(got[0].Payload) != `{"n":1}` || got[0].URL != "https://a.example/h" {
				t.Fatalf("claim by A = %+v, %v", got, err)
			}
			if again, _ := s.ClaimDeliveries(ctx, "B", 10, time.Minute); len(again) != 0 {
				t.Fatalf("claim by B while A holds it = %d rows, want 0", len(again))
			}
			now = now.Add(2 * time.Minute) // A's claim lapses (A died)
			if again, _ := s.ClaimDeliveries(ctx, "B", 10, time.Minute); len(again) != 1 {
				t.Fatalf("claim by B after A's claim lapsed = %d rows, want 1", len(again))
			}
			if err := s.RecordAttempt(ctx, "c-1", "A", patent.Attempt{Status: patent.DeliveryDelivered, StatusCode: 200, At: now}); !errors.Is(err, store.ErrClaimLost) {
				t.Fatalf("A's record after B took over = %v, want ErrClaimLost", err)
			}
			retry := now.Add(time.Hour)
			if err := s.RecordAttempt(ctx, "c-1", "B", patent.Attempt{Status: patent.DeliveryPending, StatusCode: 503, Error: "HTTP 503", NextAttemptAt: retry, At: now}); err != nil {
				t.Fatal(err)
			}
			if again, _ := s.ClaimDeliveries(ctx, "B", 10, time.Minute); len(again) != 0 {
				t.Fatalf("claim before the retry is due = %d rows, want 0", len(again))
			}
			items, _, _ := s.ListDeliveries(ctx, patent.DeliveryFilter{Status: patent.DeliveryPending}, 10, "")
			if len(items) != 1 || items[0].Attempts != 1 || *items[0].LastStatusCode != 503 || *items[0].LastError != "HTTP 503" ||
				!items[0].NextAttemptAt.Equal(retry) || items[0].URL != "" || items[0].Payload != nil {
				t.Fatalf("listed = %+v, want 1 attempt, 503, the retry time, and neither URL nor payload", items)
			}
		})
	}
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
				if _, err := s.CreateAlert(ctx, testAlert, deliveriesOf[patent.Alert](fmt.Sprintf("d%d", i), "https://a.example/h")); err != nil {
					t.Fatal(err)
				}
			}
			claimed, _ := s.ClaimDeliveries(ctx, "A", 2, time.Minute) // d0-1 and d1-1, the oldest due
			_ = s.RecordAttempt(ctx, claimed[0].ID, "A", patent.Attempt{Status: patent.DeliveryFailed, StatusCode: 410, Error: "HTTP 410", At: now})
			_ = s.RecordAttempt(ctx, claimed[1].ID, "A", patent.Attempt{Status: patent.DeliveryDelivered, StatusCode: 200, At: now})

			var ids []string
			cursor := ""
			for {
				page, next, err := s.ListDeliveries(ctx, patent.DeliveryFilter{}, 2, cursor)
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
			failed, _, _ := s.ListDeliveries(ctx, patent.DeliveryFilter{Status: patent.DeliveryFailed}, 10, "")
			if len(failed) != 1 || failed[0].ID != "d0-1" {
				t.Fatalf("failed = %+v, want d0-1", failed)
			}
			got, err := s.RetryDelivery(ctx, "d0-1")
			if err != nil || got.Status != patent.DeliveryPending || got.Attempts != 0 {
				t.Fatalf("RetryDelivery(failed) = %+v, %v; want pending with 0 attempts", got, err)
			}
			if again, _ := s.ClaimDeliveries(ctx, "B", 10, time.Minute); len(again) != 4 || !slices.ContainsFunc(again, func(d patent.Delivery) bool { return d.ID == "d0-1" }) {
				t.Fatalf("claim after retry = %+v, want d2-1, d3-1, d4-1 and d0-1, due at once", again)
			}
			for id, want := range map[string]error{"d1-1": patent.ErrConflict, "d2-1": patent.ErrConflict, "nope": patent.ErrNotFound} {
				if _, err := s.RetryDelivery(ctx, id); !errors.Is(err, want) {
					t.Errorf("RetryDelivery(%s) = %v, want %v", id, err, want)
				}
			}
			if n, _ := s.PendingDeliveries(ctx); n != 4 {
				t.Errorf("PendingDeliveries = %d, want 4", n)
			}
			now = now.Add(48 * time.Hour)
			if n, err := s.PruneDeliveries(ctx, now.Add(-24*time.Hour), now.Add(-24*time.Hour)); err != nil || n != 1 {
				t.Errorf("PruneDeliveries = %d, %v; want the delivered row only (the failed one was retried)", n, err)
			}
		})
	}
}
