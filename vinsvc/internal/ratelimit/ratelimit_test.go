package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

var (
	fallback = ratelimit.Limit{N: 60, Per: time.Minute}
	ctx      = context.Background()
)

func mustLimiter(t *testing.T, spec string) (*ratelimit.Limiter, *clocktest.Clock) {
	t.Helper()
	plans, err := ratelimit.Parse(spec, fallback)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	return ratelimit.New(plans, clk.Now), clk
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    string
		wantErr string
	}{
		{"BASIC=60/1m,PRO=600/1m,ULTRA=3000/1m,MEGA=12000/1m,default=60/1m", "BASIC=60/1m0s,DEFAULT=60/1m0s,MEGA=12000/1m0s,PRO=600/1m0s,ULTRA=3000/1m0s", ""},
		{" pro = 5/1s ", "DEFAULT=60/1m0s,PRO=5/1s", ""},
		{"off", "off", ""},
		{"OFF", "off", ""},
		{"", "", "no plans"},
		{"BASIC", "", "NAME=N/DURATION"},
		{"BASIC=60", "", "NAME=N/DURATION"},
		{"BASIC=0/1m", "", "at least 1"},
		{"BASIC=60/0s", "", "positive duration"},
		{"BASIC=60/1m,basic=5/1m", "", "given twice"},
	} {
		p, err := ratelimit.Parse(tt.in, fallback)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", tt.in, p, err, tt.want)
		}
	}
}

func TestTakeBucket(t *testing.T) {
	l, clk := mustLimiter(t, "BASIC=3/1m,PRO=10/1m,default=2/1m")
	for i := range 3 {
		d := l.Take(ctx, "basic", "alice", 1)
		if !d.Allowed || d.Limit != 3 || d.Remaining != 2-i {
			t.Fatalf("Take %d = %+v, want allowed with %d remaining", i, d, 2-i)
		}
	}
	d := l.Take(ctx, "BASIC", "alice", 1)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > 20*time.Second+time.Millisecond {
		t.Fatalf("4th Take = %+v, want refused with Retry-After about 20s", d)
	}
	// Other subscribers and other plans have their own buckets.
	if d := l.Take(ctx, "BASIC", "bob", 1); !d.Allowed {
		t.Errorf("bob refused: %+v", d)
	}
	if d := l.Take(ctx, "PRO", "alice", 1); !d.Allowed || d.Limit != 10 {
		t.Errorf("alice on PRO = %+v, want allowed on a 10/1m bucket", d)
	}
	// Tokens come back at N per period.
	clk.Advance(20 * time.Second)
	if d := l.Take(ctx, "BASIC", "alice", 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("Take after 20s = %+v, want one token back", d)
	}
}

func TestTakeDefaultPlan(t *testing.T) {
	l, _ := mustLimiter(t, "BASIC=3/1m,default=2/1m")
	for _, plan := range []string{"", "unknown", "Default"} {
		if d := l.Take(ctx, plan, "carol-"+plan, 1); d.Limit != 2 {
			t.Errorf("Take(plan %q) limit = %d, want the default plan's 2", plan, d.Limit)
		}
	}
	// Unknown names share the default bucket of the subscriber.
	l.Take(ctx, "nope", "dave", 1)
	if d := l.Take(ctx, "", "dave", 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("second default Take = %+v, want the same bucket", d)
	}
}

func TestTakeCost(t *testing.T) {
	l, _ := mustLimiter(t, "default=60/1m")
	if d := l.Take(ctx, "", "erin", 50); !d.Allowed || d.Remaining != 10 {
		t.Fatalf("Take(50) = %+v, want 10 remaining", d)
	}
	d := l.Take(ctx, "", "erin", 11)
	if d.Allowed || d.Remaining != 10 {
		t.Fatalf("Take(11) with 10 left = %+v, want refused and nothing spent", d)
	}
	if d := l.Take(ctx, "", "erin", 10); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Take(10) = %+v, want allowed", d)
	}
	// A cost bigger than the bucket can never pass: refused for a period.
	l2, _ := mustLimiter(t, "default=5/1m")
	if d := l2.Take(ctx, "", "frank", 6); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("Take(6) on a 5-token bucket = %+v, want refused for 1m", d)
	}
}

func TestSweepDropsIdleBuckets(t *testing.T) {
	l, clk := mustLimiter(t, "default=2/1m")
	l.Take(ctx, "", "a", 2)
	l.Take(ctx, "", "b", 1)
	clk.Advance(30 * time.Second)
	if n := l.Sweep(); n != 0 || l.Len() != 2 {
		t.Fatalf("Sweep after 30s dropped %d, %d left; want none dropped", n, l.Len())
	}
	clk.Advance(31 * time.Second)
	if n := l.Sweep(); n != 2 || l.Len() != 0 {
		t.Fatalf("Sweep after 61s dropped %d, %d left; want both dropped", n, l.Len())
	}
	if d := l.Take(ctx, "", "a", 2); !d.Allowed {
		t.Errorf("Take after sweep = %+v, want a full bucket", d)
	}
}

func TestConcurrentTake(t *testing.T) {
	l, _ := mustLimiter(t, "default=100/1h")
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if l.Take(ctx, "", "same", 1).Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 100 {
		t.Errorf("allowed %d of 400 concurrent requests on a 100-token bucket, want exactly 100", allowed)
	}
}

// fakeShared is a Shared budget that answers what it is told and records
// what it was asked.
type fakeShared struct {
	d    ratelimit.Decision
	err  error
	keys []string
}

func (f *fakeShared) Take(_ context.Context, key string, limit ratelimit.Limit, cost int) (ratelimit.Decision, error) {
	f.keys = append(f.keys, key)
	return f.d, f.err
}

// TestSharedDecides: with a Shared budget its answer is the answer, keyed
// by the upper-cased plan (the default for an unknown one) and the
// subscriber; the process's own bucket is not spent.
func TestSharedDecides(t *testing.T) {
	plans, _ := ratelimit.Parse("BASIC=2/1m", fallback)
	sh := &fakeShared{d: ratelimit.Decision{Allowed: false, Limit: 2, RetryAfter: 7 * time.Second}}
	l := ratelimit.New(plans, time.Now, ratelimit.WithShared(sh))
	if d := l.Take(ctx, "basic", "alice", 1); d.Allowed || d.RetryAfter != 7*time.Second {
		t.Fatalf("shared refusal not passed on: %+v", d)
	}
	l.Take(ctx, "nope", "bob", 1)
	if want := []string{"BASIC:alice", "DEFAULT:bob"}; strings.Join(sh.keys, ",") != strings.Join(want, ",") {
		t.Fatalf("keys %q, want %q", sh.keys, want)
	}
	if l.Len() != 0 {
		t.Fatalf("%d local buckets made while the shared budget answered", l.Len())
	}
}

// TestSharedFailureFallsBack: when the Shared budget fails, the process's
// own bucket decides, so limits stay on during an outage.
func TestSharedFailureFallsBack(t *testing.T) {
	plans, _ := ratelimit.Parse("BASIC=2/1m", fallback)
	sh := &fakeShared{err: errors.New("redis down")}
	l := ratelimit.New(plans, time.Now, ratelimit.WithShared(sh))
	for i := range 2 {
		if d := l.Take(ctx, "BASIC", "alice", 1); !d.Allowed {
			t.Fatalf("request %d refused: %+v", i+1, d)
		}
	}
	if d := l.Take(ctx, "BASIC", "alice", 1); d.Allowed || d.RetryAfter <= 0 {
		t.Fatalf("third request within the period allowed by the fallback: %+v", d)
	}
	// A cost above the plan's N never reaches the shared budget.
	n := len(sh.keys)
	if d := l.Take(ctx, "BASIC", "carol", 3); d.Allowed || d.RetryAfter != time.Minute || len(sh.keys) != n {
		t.Fatalf("cost above N: %+v, shared asked %d times", d, len(sh.keys)-n)
	}
}
