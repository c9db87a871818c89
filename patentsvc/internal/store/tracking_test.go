package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestTrackAgainCarriesState: tracking a company that is tracked already,
// in any letter case, is an *patent.AlreadyTrackedError (a kind of
// ErrConflict) that carries the company's current state, as stored.
func TestTrackAgainCarriesState(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, err := storetest.Track(ctx, s, "Acme Corp", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		if err := recordRun(t, s, acme.ID, 12, at, 2, at.Add(time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		_, err = storetest.Track(ctx, s, "ACME CORP", time.Now())
		var dup *patent.AlreadyTrackedError
		if !errors.As(err, &dup) || !errors.Is(err, patent.ErrConflict) {
			t.Fatalf("CreateTracked(ACME CORP) = %v, want an AlreadyTrackedError matching ErrConflict", err)
		}
		got := dup.Tracked
		if got.ID != acme.ID || got.CompanyName != "Acme Corp" || got.LastPatentCount != 12 ||
			got.LastAnalysisAt == nil || !got.LastAnalysisAt.Equal(at) || got.ConsecutiveFailures != 2 ||
			!got.NextRunAt.Equal(at.Add(time.Hour)) || !got.CreatedAt.Equal(acme.CreatedAt) {
			t.Errorf("state carried by the conflict = %+v, want the stored row (count 12, 2 failures)", got)
		}
		if list, _ := s.Tracking().ListTracked(ctx); len(list) != 1 {
			t.Errorf("after the conflict: %d tracked companies, want 1", len(list))
		}
		// Once untracked, the name can be tracked again.
		if err := s.Tracking().DeleteTracked(ctx, "acme corp"); err != nil {
			t.Fatal(err)
		}
		if again, err := storetest.Track(ctx, s, "ACME Corp", time.Now()); err != nil || again.ConsecutiveFailures != 0 || again.LastAnalysisAt != nil {
			t.Errorf("track after untrack = %+v, %v", again, err)
		}
	})
}

// unitsOf returns the scheduled-run units of tracked company id.
func unitsOf(t *testing.T, s *store.Store, id int64) []storetest.Unit {
	t.Helper()
	var out []storetest.Unit
	for _, u := range storetest.Units(t, s, "scheduled_run") {
		var args struct {
			TrackedID int64 `json:"tracked_id"`
		}
		if err := json.Unmarshal([]byte(u.Args), &args); err != nil {
			t.Fatal(err)
		}
		if args.TrackedID == id {
			out = append(out, u)
		}
	}
	return out
}

// TestTrackQueuesFirstRun: tracking a company queues its first run, due at
// once, in the same transaction.
func TestTrackQueuesFirstRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, err := storetest.Track(ctx, s, "Acme", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		units := unitsOf(t, s, acme.ID)
		due, _ := json.Marshal(acme.NextRunAt)
		if len(units) != 1 || units[0].State != "available" || !strings.Contains(units[0].Args, `"due_at":`+string(due)) {
			t.Fatalf("units of a newly tracked company = %+v, want its first run due at %s", units, due)
		}
		if _, err := storetest.Track(ctx, s, "ACME", time.Now()); err == nil {
			t.Fatal("tracked twice")
		}
		if n := len(storetest.Units(t, s, "scheduled_run")); n != 1 {
			t.Errorf("%d units after a refused track, want 1", n)
		}
	})
}

// TestQueueDue: a due company whose unit is no longer alive gets one unit
// for its due time; one with a unit alive, or not due, gets none; one
// whose unit the queue gave up is queued again for the same due time.
func TestQueueDue(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			clk := &movingClock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
			s := storetest.Open(t, d, clk.Now)
			acme, _ := storetest.Track(ctx, s, "Acme", clk.Now())
			beta, _ := storetest.Track(ctx, s, "Beta", clk.Now())
			later, _ := storetest.Track(ctx, s, "Later", clk.Now())
			if seen, n, err := s.Tracking().QueueDue(ctx, 10); err != nil || seen != 0 || n != 0 {
				t.Fatalf("QueueDue with every first run queued = %d, %d, %v; want 0", seen, n, err)
			}
			// Acme's first run ran and is due again; Later's run is recorded
			// for tomorrow; Beta's unit was given up by the queue.
			storetest.SetUnitState(t, s, unitsOf(t, s, acme.ID)[0].ID, "completed")
			if err := recordRun(t, s, acme.ID, 3, clk.Now(), 0, clk.Now(), nil, nil); err != nil {
				t.Fatal(err)
			}
			storetest.SetUnitState(t, s, unitsOf(t, s, later.ID)[0].ID, "completed")
			if err := recordRun(t, s, later.ID, 3, clk.Now(), 0, clk.Now().Add(24*time.Hour), nil, nil); err != nil {
				t.Fatal(err)
			}
			storetest.SetUnitState(t, s, unitsOf(t, s, beta.ID)[0].ID, "discarded")
			if seen, n, err := s.Tracking().QueueDue(ctx, 10); err != nil || seen != 2 || n != 2 {
				t.Fatalf("QueueDue = %d, %d, %v; want 2 (Acme, Beta)", seen, n, err)
			}
			if seen, n, err := s.Tracking().QueueDue(ctx, 10); err != nil || seen != 0 || n != 0 {
				t.Fatalf("QueueDue again = %d, %d, %v; want 0", seen, n, err)
			}
			for _, c := range []struct {
				id    int64
				units int
			}{{acme.ID, 2}, {beta.ID, 2}, {later.ID, 1}} {
				units := unitsOf(t, s, c.id)
				if len(units) != c.units || units[len(units)-1].State != map[bool]string{true: "available", false: "completed"}[c.id != later.ID] {
					t.Errorf("units of company %d = %+v", c.id, units)
				}
			}
		})
	}
}

// TestQueueDueReplicas: replicas queueing the due companies at once (on
// PostgreSQL, each locks what it takes and skips the rest) queue each
// company's due run once.
func TestQueueDueReplicas(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			var stores []*store.Store
			for range 3 {
				s := storetest.OpenAt(t, d, dsn, time.Now)
				stores = append(stores, s)
			}
			const n = 60
			var ids []int64
			for i := range n {
				c, err := storetest.Track(ctx, stores[0], patent.CompanyName(fmt.Sprintf("Company %d", i)), time.Now())
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			// Every first run ran, none was recorded: all due again,
			// without a unit alive.
			for _, u := range storetest.Units(t, stores[0], "scheduled_run") {
				storetest.SetUnitState(t, stores[0], u.ID, "discarded")
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			queued := 0
			for _, s := range stores {
				wg.Go(func() {
					for {
						seen, got, err := s.Tracking().QueueDue(ctx, 7)
						if err != nil {
							t.Errorf("QueueDue = %v", err)
							return
						}
						mu.Lock()
						queued += got
						mu.Unlock()
						if seen < 7 {
							return
						}
					}
				})
			}
			wg.Wait()
			if queued != n {
				t.Errorf("replicas queued %d runs, want %d", queued, n)
			}
			for _, id := range ids {
				alive := 0
				for _, u := range unitsOf(t, stores[0], id) {
					if u.State == "available" {
						alive++
					}
				}
				if alive != 1 {
					t.Errorf("company %d has %d units alive, want 1", id, alive)
				}
			}
		})
	}
}

// TestRecordOncePerDueTime: a run is recorded only while the company is
// still due at the run's due time; a second record of the same due time
// (the unit run again after its process died) stores nothing.
func TestRecordOncePerDueTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme", time.Now())
		due, at := acme.NextRunAt, time.Now()
		alert := testAlert
		if ok, err := s.Tracking().RecordRun(ctx, acme.ID, due, patent.RunOutcome{Count: 5, At: at, Next: at.Add(time.Hour)}, nil); !ok || err != nil {
			t.Fatalf("RecordRun = %v, %v; want recorded", ok, err)
		}
		if ok, err := s.Tracking().RecordRun(ctx, acme.ID, due, patent.RunOutcome{Count: 9, At: at, Next: at.Add(time.Hour), Alerts: []patent.Alert{alert}},
			deliveriesOf("x", "https://a.example/h")); ok || err != nil {
			t.Fatalf("RecordRun of the same due time again = %v, %v; want not recorded", ok, err)
		}
		if ok, err := s.Tracking().RecordFailure(ctx, acme.ID, due, at, 1, at.Add(time.Hour)); ok || err != nil {
			t.Fatalf("RecordFailure of the same due time = %v, %v; want not recorded", ok, err)
		}
		if got := mustTracked(t, s); got.LastPatentCount != 5 || got.ConsecutiveFailures != 0 {
			t.Errorf("tracked company = %+v, want the first record only", got)
		}
		if runs := mustHistory(t, s, "Acme", at.Add(-time.Hour)); len(runs) != 1 {
			t.Errorf("history = %+v, want one run", runs)
		}
		if alerts, _ := s.Tracking().ListAlerts(ctx, 10); len(alerts) != 0 || countDeliveries(t, s) != 0 {
			t.Errorf("%d alerts and %d deliveries, want none", len(alerts), countDeliveries(t, s))
		}
	})
}

// TestRunOutcomes: a failed run without a count keeps the count and time
// of the last analysis and records the failures in a row and the next run;
// a run with a count records it, and a success resets the failures.
func TestRunOutcomes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme", time.Now())
		at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		if err := recordRun(t, s, acme.ID, 7, at, 0, at.Add(24*time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		next := at.Add(25 * time.Hour)
		if err := recordFailure(t, s, acme.ID, next.Add(-time.Hour), 3, next); err != nil {
			t.Fatal(err)
		}
		got := mustTracked(t, s)
		if got.ConsecutiveFailures != 3 || !got.NextRunAt.Equal(next) || got.LastPatentCount != 7 || !got.LastAnalysisAt.Equal(at) {
			t.Errorf("after RecordFailure: %+v, want 3 failures, next %v, count and time of the last run kept", got, next)
		}
		later := at.Add(26 * time.Hour)
		if err := recordRun(t, s, acme.ID, 9, later, 0, later.Add(24*time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := mustTracked(t, s); got.ConsecutiveFailures != 0 || got.LastPatentCount != 9 || !got.LastAnalysisAt.Equal(later) {
			t.Errorf("after a successful run: %+v, want failures reset to 0 and count 9", got)
		}
	})
}

func mustTracked(t *testing.T, s *store.Store) patent.TrackedCompany {
	t.Helper()
	list, err := s.Tracking().ListTracked(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListTracked = %+v, %v", list, err)
	}
	return list[0]
}

// TestQueuedRunCarriesItsAlertIDs: a tracked company's run is queued with
// the company's name and the ids its alerts will have (reserved, never
// those of another run); untracking the company cancels its queued run.
func TestQueuedRunCarriesItsAlertIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for _, name := range []patent.CompanyName{"Acme", "Beta"} {
			if _, err := storetest.Track(ctx, s, name, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[int64]bool{}
		for _, u := range storetest.Units(t, s, patent.KindScheduledRun) {
			var run patent.ScheduledRun
			if err := json.Unmarshal([]byte(u.Args), &run); err != nil {
				t.Fatal(err)
			}
			if run.CompanyName == "" || len(run.AlertIDs) != patent.AlertsPerRun {
				t.Fatalf("unit %s, want the company's name and %d alert ids", u.Args, patent.AlertsPerRun)
			}
			for _, id := range run.AlertIDs {
				if seen[id] {
					t.Errorf("alert id %d reserved twice", id)
				}
				seen[id] = true
			}
		}
		if err := s.Tracking().DeleteTracked(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		states := map[string]string{}
		for _, u := range storetest.Units(t, s, patent.KindScheduledRun) {
			var run patent.ScheduledRun
			json.Unmarshal([]byte(u.Args), &run)
			states[run.CompanyName] = u.State
		}
		if states["Acme"] != "cancelled" || states["Beta"] != "available" {
			t.Errorf("units after untracking Acme: %v, want Acme's cancelled, Beta's available", states)
		}
	})
}
