package store_test

import (
	"errors"
	"log/slog"
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
		acme, err := s.CreateTracked(ctx, "Acme Corp")
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		if err := s.RecordRun(ctx, acme.ID, 12, at, 2, at.Add(time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		_, err = s.CreateTracked(ctx, "ACME CORP")
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
		if list, _ := s.ListTracked(ctx); len(list) != 1 {
			t.Errorf("after the conflict: %d tracked companies, want 1", len(list))
		}
		// Once untracked, the name can be tracked again.
		if err := s.DeleteTracked(ctx, "acme corp"); err != nil {
			t.Fatal(err)
		}
		if again, err := s.CreateTracked(ctx, "ACME Corp"); err != nil || again.ConsecutiveFailures != 0 || again.LastAnalysisAt != nil {
			t.Errorf("track after untrack = %+v, %v", again, err)
		}
	})
}

// TestClaimTracked: a newly tracked company can be claimed by id once; it
// is then held from the dispatcher's claims as ClaimDue's claims are, and
// a company that is not due, or not tracked, is not claimed.
func TestClaimTracked(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			clk := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			s := storetest.Open(t, d, func() time.Time { return clk })
			acme, _ := s.CreateTracked(ctx, "Acme")
			beta, _ := s.CreateTracked(ctx, "Beta")

			c, ok, err := s.ClaimTracked(ctx, acme.ID, time.Hour)
			if err != nil || !ok || c.ID != acme.ID || c.CompanyName != "Acme" {
				t.Fatalf("ClaimTracked(new company) = %+v, %v, %v; want it claimed", c, ok, err)
			}
			if _, ok, err := s.ClaimTracked(ctx, acme.ID, time.Hour); ok || err != nil {
				t.Errorf("second ClaimTracked = %v, %v; want not claimed (held)", ok, err)
			}
			due, err := s.ClaimDue(ctx, 10, time.Hour)
			if err != nil || len(due) != 1 || due[0].ID != beta.ID {
				t.Errorf("ClaimDue after ClaimTracked = %+v, %v; want Beta only", due, err)
			}
			if _, ok, _ := s.ClaimTracked(ctx, beta.ID, time.Hour); ok {
				t.Error("ClaimTracked of a company ClaimDue holds: claimed twice")
			}
			if _, ok, err := s.ClaimTracked(ctx, 999, time.Hour); ok || err != nil {
				t.Errorf("ClaimTracked(unknown id) = %v, %v", ok, err)
			}
			clk = clk.Add(time.Hour) // the holds lapse: due again
			if _, ok, _ := s.ClaimTracked(ctx, acme.ID, time.Hour); !ok {
				t.Error("ClaimTracked after the hold lapsed: not claimed")
			}
		})
	}
}

// TestClaimTrackedRacesDispatcher: on PostgreSQL, one replica claiming
// newly tracked companies by id while another's dispatcher claims due
// ones never gives a company to both.
func TestClaimTrackedRacesDispatcher(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			pools := 2
			if d == store.SQLite {
				pools = 1 // one process's file
			}
			var stores []*store.Store
			for range pools {
				s, err := store.Open(ctx, d, dsn, store.Pool{MaxOpen: 4, MaxIdle: 2, MaxLifetime: time.Minute}, slog.New(slog.DiscardHandler), time.Now)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores = append(stores, s)
			}
			var ids []int64
			for i := range 30 {
				c, err := stores[0].CreateTracked(ctx, patent.CompanyName("Company "+string(rune('A'+i%26))+string(rune('a'+i/26))))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			var mu sync.Mutex
			seen := map[int64]int{}
			note := func(id int64) { mu.Lock(); seen[id]++; mu.Unlock() }
			var wg sync.WaitGroup
			wg.Go(func() { // RunNow on one replica
				for _, id := range ids {
					c, ok, err := stores[0].ClaimTracked(ctx, id, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						note(c.ID)
					}
				}
			})
			wg.Go(func() { // the leader's dispatcher on the other
				for {
					got, err := stores[len(stores)-1].ClaimDue(ctx, 2, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					for _, c := range got {
						note(c.ID)
					}
				}
			})
			wg.Wait()
			for _, id := range ids {
				if seen[id] != 1 {
					t.Errorf("company %d claimed %d times, want once", id, seen[id])
				}
			}
		})
	}
}

// TestRunOutcomes: a failed run without a count keeps the count and time
// of the last analysis and records the failures in a row and the next run;
// a run with a count records it, and a success resets the failures.
func TestRunOutcomes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := s.CreateTracked(ctx, "Acme")
		at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		if err := s.RecordRun(ctx, acme.ID, 7, at, 0, at.Add(24*time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		next := at.Add(25 * time.Hour)
		if err := s.RecordFailure(ctx, acme.ID, next.Add(-time.Hour), 3, next); err != nil {
			t.Fatal(err)
		}
		got := mustTracked(t, s)
		if got.ConsecutiveFailures != 3 || !got.NextRunAt.Equal(next) || got.LastPatentCount != 7 || !got.LastAnalysisAt.Equal(at) {
			t.Errorf("after RecordFailure: %+v, want 3 failures, next %v, count and time of the last run kept", got, next)
		}
		// A hand-back (Reschedule) leaves the failures as they are.
		if err := s.Reschedule(ctx, acme.ID, at); err != nil {
			t.Fatal(err)
		}
		if got := mustTracked(t, s); got.ConsecutiveFailures != 3 || !got.NextRunAt.Equal(at) {
			t.Errorf("after Reschedule: %+v", got)
		}
		later := at.Add(26 * time.Hour)
		if err := s.RecordRun(ctx, acme.ID, 9, later, 0, later.Add(24*time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := mustTracked(t, s); got.ConsecutiveFailures != 0 || got.LastPatentCount != 9 || !got.LastAnalysisAt.Equal(later) {
			t.Errorf("after a successful run: %+v, want failures reset to 0 and count 9", got)
		}
	})
}

func mustTracked(t *testing.T, s *store.Store) patent.TrackedCompany {
	t.Helper()
	list, err := s.ListTracked(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListTracked = %+v, %v", list, err)
	}
	return list[0]
}
