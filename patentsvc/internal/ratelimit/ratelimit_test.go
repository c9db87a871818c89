package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/ratelimit"
)

var ctx = context.Background()

// clock is a settable clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestMovingWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	w := ratelimit.New("/auth/register", "5/minute", 5, time.Minute, clk.Now)
	// Five requests spread over 40 seconds pass.
	for i := range 5 {
		if ok, _ := w.Allow(ctx, "1.2.3.4"); !ok {
			t.Fatalf("request %d refused", i)
		}
		clk.Advance(10 * time.Second)
	}
	// At +50s the sixth is refused until the first (at +0s) leaves the window at +60s.
	ok, retry := w.Allow(ctx, "1.2.3.4")
	if ok || retry != 10*time.Second {
		t.Fatalf("6th request = %v, retry %v; want refused for 10s", ok, retry)
	}
	if ok, _ := w.Allow(ctx, "5.6.7.8"); !ok {
		t.Fatal("another client refused")
	}
	clk.Advance(10*time.Second + time.Nanosecond)
	if ok, _ := w.Allow(ctx, "1.2.3.4"); !ok {
		t.Fatal("request after the oldest left the window refused")
	}
	// Refusals do not extend the window: still exactly one place freed.
	if ok, retry := w.Allow(ctx, "1.2.3.4"); ok || retry != 10*time.Second-time.Nanosecond {
		t.Fatalf("next request = %v, retry %v", ok, retry)
	}
	st, _ := w.Stats(ctx)
	if st.Endpoint != "/auth/register" || st.Limit != "5/minute" || st.TotalRequests != 9 || st.RejectedRequests != 2 {
		t.Errorf("Stats() = %+v, want 9 total and 2 rejected", st)
	}
	clk.Advance(2 * time.Minute)
	w.Sweep(ctx)
	if n := w.Clients(); n != 0 {
		t.Errorf("%d clients remembered after a quiet window, want 0", n)
	}
}

func TestConcurrentAllow(t *testing.T) {
	w := ratelimit.New("/auth/login", "10/minute", 10, time.Minute, time.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 50 {
		wg.Go(func() {
			if ok, _ := w.Allow(ctx, "same"); ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 10 {
		t.Errorf("allowed %d of 50 concurrent requests, want 10", allowed)
	}
	if st, _ := w.Stats(ctx); st.TotalRequests != 50 || st.RejectedRequests != 40 {
		t.Errorf("Stats() = %+v", st)
	}
}
