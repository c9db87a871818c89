package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/testkit/syncbuf"
)

// fakeShared is a Shared whose methods are its Fn fields.
type fakeShared struct {
	TakeFn   func(ctx context.Context, endpoint, client string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error)
	CountsFn func(ctx context.Context, endpoint string) (int64, int64, error)
	PruneFn  func(ctx context.Context, endpoint string, before time.Time) (int64, error)
}

var _ ratelimit.Shared = (*fakeShared)(nil)

func (f *fakeShared) Take(ctx context.Context, endpoint, client string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error) {
	return f.TakeFn(ctx, endpoint, client, limit, per, now)
}

func (f *fakeShared) Counts(ctx context.Context, endpoint string) (int64, int64, error) {
	return f.CountsFn(ctx, endpoint)
}

func (f *fakeShared) Prune(ctx context.Context, endpoint string, before time.Time) (int64, error) {
	return f.PruneFn(ctx, endpoint, before)
}

const (
	msgDown = `"msg":"rate-limit store unreachable: each replica enforces its own windows until it answers"`
	msgUp   = `"msg":"rate-limit store reachable again: the windows are shared across replicas again"`
)

var errDown = errors.New("dial tcp: connection refused")

func newCluster(s ratelimit.Shared, timeout time.Duration, clk *clock) (*ratelimit.Cluster, *syncbuf.Buffer) {
	logs := &syncbuf.Buffer{}
	return ratelimit.NewCluster(s, timeout, slog.New(slog.NewJSONHandler(logs, nil)), clk.Now), logs
}

// TestSharedDecides: with a shared store its answer is the window's, its
// counters are the window's, and it is asked with the window's settings
// and the app's clock.
func TestSharedDecides(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	type call struct {
		endpoint, client string
		limit            int
		per              time.Duration
		now              time.Time
	}
	var calls []call
	f := &fakeShared{
		TakeFn: func(_ context.Context, endpoint, client string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error) {
			calls = append(calls, call{endpoint, client, limit, per, now})
			if client == "1.2.3.4" {
				return false, 42 * time.Second, nil
			}
			return true, 0, nil
		},
		CountsFn: func(_ context.Context, endpoint string) (int64, int64, error) { return 17, 3, nil },
	}
	cl, logs := newCluster(f, time.Second, clk)
	w := ratelimit.New("/auth/login", "10/minute", 10, time.Minute, clk.Now, ratelimit.WithShared(cl))
	if ok, retry := w.Allow(ctx, "1.2.3.4"); ok || retry != 42*time.Second {
		t.Errorf("Allow(refused by the store) = %v, %v; want false, 42s", ok, retry)
	}
	if ok, retry := w.Allow(ctx, "5.6.7.8"); !ok || retry != 0 {
		t.Errorf("Allow(allowed by the store) = %v, %v; want true, 0", ok, retry)
	}
	want := call{"/auth/login", "5.6.7.8", 10, time.Minute, clk.Now()}
	if len(calls) != 2 || calls[1] != want {
		t.Errorf("Take calls = %+v, want the second to be %+v", calls, want)
	}
	st, err := w.Stats(ctx)
	if err != nil || st != (ratelimit.Stats{Endpoint: "/auth/login", Limit: "10/minute", TotalRequests: 17, RejectedRequests: 3}) {
		t.Errorf("Stats() = %+v, %v; want the store's counters", st, err)
	}
	f.CountsFn = func(context.Context, string) (int64, int64, error) { return 0, 0, errDown }
	if _, err := w.Stats(ctx); !errors.Is(err, errDown) {
		t.Errorf("Stats() with the store down = %v, want its error", err)
	}
	if cl.Errors() != 1 || strings.Count(logs.String(), msgDown) != 1 {
		t.Errorf("Errors() = %d, logs:\n%s\nwant one error, logged once", cl.Errors(), logs)
	}
}

// TestFallbackToLocalWindow: while the store fails, the process's own
// window decides (fail open, never a refusal because of the store),
// starting from the requests the store let through before; every failure
// is counted, each outage logged once when it starts and once when it
// ends.
func TestFallbackToLocalWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var down atomic.Bool
	f := &fakeShared{TakeFn: func(context.Context, string, string, int, time.Duration, time.Time) (bool, time.Duration, error) {
		if down.Load() {
			return false, 0, errDown
		}
		return true, 0, nil
	}}
	cl, logs := newCluster(f, time.Second, clk)
	w := ratelimit.New("/auth/register", "5/minute", 5, time.Minute, clk.Now, ratelimit.WithShared(cl))
	const ip = "1.2.3.4"
	// Three requests through the store at +0s, +10s, +20s.
	for range 3 {
		if ok, _ := w.Allow(ctx, ip); !ok {
			t.Fatal("store's allowance refused")
		}
		clk.Advance(10 * time.Second)
	}
	// The store goes down at +30s: two more places in the process's window.
	down.Store(true)
	for i := range 2 {
		if ok, _ := w.Allow(ctx, ip); !ok {
			t.Fatalf("request %d during the outage refused, want the local window to allow it", i)
		}
	}
	ok, retry := w.Allow(ctx, ip)
	if ok || retry != 30*time.Second {
		t.Errorf("6th request = %v, %v; want refused by the local window until the +0s request leaves (30s)", ok, retry)
	}
	if ok, _ := w.Allow(ctx, "5.6.7.8"); !ok {
		t.Error("another client refused during the outage")
	}
	if n := cl.Errors(); n != 4 || cl.Up() {
		t.Errorf("Errors() = %d, Up() = %v; want 4 failures and down", n, cl.Up())
	}
	if n := strings.Count(logs.String(), msgDown); n != 1 || !strings.Contains(logs.String(), errDown.Error()) {
		t.Errorf("outage logged %d times, want once with its error:\n%s", n, logs)
	}

	// Back: the store decides again, and the end is logged once.
	down.Store(false)
	clk.Advance(5 * time.Second)
	for range 2 {
		if ok, _ := w.Allow(ctx, ip); !ok {
			t.Error("refused after the store came back, want the store's answer")
		}
	}
	out := logs.String()
	if strings.Count(out, msgUp) != 1 || !strings.Contains(out, `"outage_seconds":5`) || cl.Errors() != 4 || !cl.Up() {
		t.Errorf("after the outage: Errors() = %d, Up() = %v, logs:\n%s\nwant one end line with outage_seconds 5", cl.Errors(), cl.Up(), out)
	}
	// A second outage is a second start line.
	down.Store(true)
	w.Allow(ctx, ip)
	if n := strings.Count(logs.String(), msgDown); n != 2 {
		t.Errorf("two outages logged %d times, want 2", n)
	}
}

// TestFallbackOnTimeout: a store that does not answer within the timeout
// is a failure, and the request is decided at once by the local window.
func TestFallbackOnTimeout(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	f := &fakeShared{TakeFn: func(ctx context.Context, _, _ string, _ int, _ time.Duration, _ time.Time) (bool, time.Duration, error) {
		<-ctx.Done()
		return false, 0, ctx.Err()
	}}
	cl, logs := newCluster(f, 20*time.Millisecond, clk)
	w := ratelimit.New("/auth/login", "10/minute", 10, time.Minute, clk.Now, ratelimit.WithShared(cl))
	start := time.Now()
	if ok, _ := w.Allow(ctx, "1.2.3.4"); !ok {
		t.Error("refused when the store hung, want the local window's answer")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Allow took %v with a 20ms store timeout", d)
	}
	if cl.Errors() != 1 || !strings.Contains(logs.String(), msgDown) {
		t.Errorf("Errors() = %d, logs:\n%s\nwant the timeout counted and logged", cl.Errors(), logs)
	}
}

// TestCallerCancelNotCounted: a request whose client went away is decided
// locally but is not held against the store.
func TestCallerCancelNotCounted(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	f := &fakeShared{TakeFn: func(ctx context.Context, _, _ string, _ int, _ time.Duration, _ time.Time) (bool, time.Duration, error) {
		return false, 0, ctx.Err()
	}}
	cl, logs := newCluster(f, time.Second, clk)
	w := ratelimit.New("/auth/login", "10/minute", 10, time.Minute, clk.Now, ratelimit.WithShared(cl))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ok, _ := w.Allow(cctx, "1.2.3.4"); !ok {
		t.Error("refused")
	}
	if cl.Errors() != 0 || !cl.Up() || logs.String() != "" {
		t.Errorf("Errors() = %d, Up() = %v, logs %q; want nothing recorded", cl.Errors(), cl.Up(), logs)
	}
}

// TestSweepPrunesShared: the janitor's sweep prunes the store's rows two
// windows old (a window of slack for clock skew between replicas) and
// reports a failed prune as an outage.
func TestSweepPrunesShared(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var gotEndpoint string
	var gotBefore time.Time
	f := &fakeShared{PruneFn: func(_ context.Context, endpoint string, before time.Time) (int64, error) {
		gotEndpoint, gotBefore = endpoint, before
		return 3, nil
	}}
	cl, logs := newCluster(f, time.Second, clk)
	w := ratelimit.New("/auth/register", "5/minute", 5, time.Minute, clk.Now, ratelimit.WithShared(cl))
	if err := w.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(-2 * time.Minute); gotEndpoint != "/auth/register" || !gotBefore.Equal(want) {
		t.Errorf("Prune(%q, %v), want Prune(/auth/register, %v)", gotEndpoint, gotBefore, want)
	}
	f.PruneFn = func(context.Context, string, time.Time) (int64, error) { return 0, errDown }
	if err := w.Sweep(ctx); !errors.Is(err, errDown) {
		t.Errorf("Sweep() = %v, want the prune's error", err)
	}
	if cl.Errors() != 1 || !strings.Contains(logs.String(), `"op":"prune"`) {
		t.Errorf("Errors() = %d, logs:\n%s", cl.Errors(), logs)
	}
}

// TestSweepSweepsEveryWindow: a sweep prunes every window it is given.
func TestSweepSweepsEveryWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var pruned []string
	f := &fakeShared{PruneFn: func(_ context.Context, endpoint string, _ time.Time) (int64, error) {
		pruned = append(pruned, endpoint)
		return 0, nil
	}}
	cl, _ := newCluster(f, time.Second, clk)
	a := ratelimit.New("/a", "1/minute", 1, time.Minute, clk.Now, ratelimit.WithShared(cl))
	b := ratelimit.New("/b", "1/minute", 1, time.Minute, clk.Now, ratelimit.WithShared(cl))
	ratelimit.Sweep(ctx, a, b)
	if fmt.Sprint(pruned) != "[/a /b]" {
		t.Errorf("pruned %v, want /a and /b", pruned)
	}
}
