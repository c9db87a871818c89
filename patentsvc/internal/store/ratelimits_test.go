package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var _ ratelimit.Shared = (*store.RateWindows)(nil)

const (
	register = "/auth/register"
	login    = "/auth/login"
)

// TestRateWindows: the moving window as the database keeps it gives the
// in-process window's answers: the limit, then a refusal with the time
// until the oldest counted request leaves; the window slides; refusals
// take no place; clients and endpoints are separate; the counters count
// every request and every refusal; Prune forgets only old rows.
func TestRateWindows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rw := s.RateWindows()
		t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		take := func(endpoint, client string, at time.Duration, wantOK bool, wantRetry time.Duration) {
			t.Helper()
			ok, retry, err := rw.Take(ctx, endpoint, client, 5, time.Minute, t0.Add(at))
			if err != nil || ok != wantOK || retry != wantRetry {
				t.Fatalf("Take(%s, %s, t0+%v) = %v, %v, %v; want %v, %v", endpoint, client, at, ok, retry, err, wantOK, wantRetry)
			}
		}
		const a, b = "203.0.113.7", "2001:db8::1"
		for i := range 5 {
			take(register, a, time.Duration(i)*10*time.Second, true, 0)
		}
		// At +50s the sixth waits for the +0s request to leave, at +60s.
		take(register, a, 50*time.Second, false, 10*time.Second)
		take(register, a, 59500*time.Millisecond, false, 500*time.Millisecond)
		take(register, b, 50*time.Second, true, 0)
		take(login, a, 50*time.Second, true, 0)
		// At +60s the +0s request is out of (now-60s, now]: one place.
		take(register, a, 60*time.Second, true, 0)
		// Refusals took none: the next place frees with the +10s request.
		take(register, a, 60*time.Second, false, 10*time.Second)

		total, rejected, err := rw.Counts(ctx, register)
		if err != nil || total != 10 || rejected != 3 {
			t.Errorf("Counts(register) = %d, %d, %v; want 10, 3", total, rejected, err)
		}
		if total, rejected, err := rw.Counts(ctx, login); err != nil || total != 1 || rejected != 0 {
			t.Errorf("Counts(login) = %d, %d, %v; want 1, 0", total, rejected, err)
		}
		if total, rejected, err := rw.Counts(ctx, "/never"); err != nil || total != 0 || rejected != 0 {
			t.Errorf("Counts(unseen) = %d, %d, %v; want zeros", total, rejected, err)
		}

		// Rows at or before +20s go: a's +0s, +10s, +20s. The login row
		// and the later register rows stay.
		n, err := rw.Prune(ctx, register, t0.Add(20*time.Second))
		if err != nil || n != 3 {
			t.Errorf("Prune(register, t0+20s) = %d, %v; want 3 rows", n, err)
		}
		// a still has +30s, +40s and +60s in the window at +61s: 2 places.
		take(register, a, 61*time.Second, true, 0)
		take(register, a, 61*time.Second, true, 0)
		take(register, a, 61*time.Second, false, 29*time.Second)
		if n, err := rw.Prune(ctx, login, t0.Add(time.Hour)); err != nil || n != 1 {
			t.Errorf("Prune(login, t0+1h) = %d, %v; want 1 row", n, err)
		}
		// Counters are not pruned.
		if total, rejected, _ := rw.Counts(ctx, login); total != 1 || rejected != 0 {
			t.Errorf("Counts(login) after Prune = %d, %d; want 1, 0", total, rejected)
		}
	})
}

// TestRateWindowsExactAcrossReplicas: two stores on one database (two
// replicas' connection pools) taking concurrently for one client let
// exactly the limit through, and count every request.
func TestRateWindowsExactAcrossReplicas(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			replicas := []*store.RateWindows{mustOpen(t, d, dsn).RateWindows(), mustOpen(t, d, dsn).RateWindows()}
			now := time.Now()
			var allowed, failed atomic.Int32
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Go(func() {
					ok, _, err := replicas[i%2].Take(ctx, login, "198.51.100.9", 10, time.Minute, now.Add(time.Duration(i)*time.Millisecond))
					switch {
					case err != nil:
						failed.Add(1)
						t.Errorf("Take: %v", err)
					case ok:
						allowed.Add(1)
					}
				})
			}
			wg.Wait()
			if allowed.Load() != 10 || failed.Load() != 0 {
				t.Errorf("allowed %d of 40 concurrent requests over two replicas, want 10", allowed.Load())
			}
			total, rejected, err := replicas[1].Counts(ctx, login)
			if err != nil || total != 40 || rejected != 30 {
				t.Errorf("Counts = %d, %d, %v; want 40, 30", total, rejected, err)
			}
		})
	}
}

// TestRateWindowsClosed: a database that cannot answer is an error (the
// limiter then decides in the process), never a decision.
func TestRateWindowsClosed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		rw := s.RateWindows()
		s.Close()
		if ok, _, err := rw.Take(ctx, login, "203.0.113.7", 10, time.Minute, time.Now()); err == nil || ok {
			t.Errorf("Take on a closed database = %v, %v; want an error", ok, err)
		}
		if _, _, err := rw.Counts(ctx, login); err == nil {
			t.Error("Counts on a closed database: no error")
		}
		if _, err := rw.Prune(ctx, login, time.Now()); err == nil {
			t.Error("Prune on a closed database: no error")
		}
	})
}
