package ratelimit_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

var fallback = ratelimit.Limit{N: 60, Per: time.Minute}

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
		d := l.Take("basic", "alice", 1)
		if !d.Allowed || d.Limit != 3 || d.Remaining != 2-i {
			t.Fatalf("Take %d = %+v, want allowed with %d remaining", i, d, 2-i)
		}
	}
	d := l.Take("BASIC", "alice", 1)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > 20*time.Second+time.Millisecond {
		t.Fatalf("4th Take = %+v, want refused with Retry-After about 20s", d)
	}
	// Other subscribers and other plans have their own buckets.
	if d := l.Take("BASIC", "bob", 1); !d.Allowed {
		t.Errorf("bob refused: %+v", d)
	}
	if d := l.Take("PRO", "alice", 1); !d.Allowed || d.Limit != 10 {
		t.Errorf("alice on PRO = %+v, want allowed on a 10/1m bucket", d)
	}
	// Tokens come back at N per period.
	clk.Advance(20 * time.Second)
	if d := l.Take("BASIC", "alice", 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("Take after 20s = %+v, want one token back", d)
	}
}

func TestTakeDefaultPlan(t *testing.T) {
	l, _ := mustLimiter(t, "BASIC=3/1m,default=2/1m")
	for _, plan := range []string{"", "unknown", "Default"} {
		if d := l.Take(plan, "carol-"+plan, 1); d.Limit != 2 {
			t.Errorf("Take(plan %q) limit = %d, want the default plan's 2", plan, d.Limit)
		}
	}
	// Unknown names share the default bucket of the subscriber.
	l.Take("nope", "dave", 1)
	if d := l.Take("", "dave", 1); !d.Allowed || d.Remaining != 0 {
		t.Errorf("second default Take = %+v, want the same bucket", d)
	}
}

func TestTakeCost(t *testing.T) {
	l, _ := mustLimiter(t, "default=60/1m")
	if d := l.Take("", "erin", 50); !d.Allowed || d.Remaining != 10 {
		t.Fatalf("Take(50) = %+v, want 10 remaining", d)
	}
	d := l.Take("", "erin", 11)
	if d.Allowed || d.Remaining != 10 {
		t.Fatalf("Take(11) with 10 left = %+v, want refused and nothing spent", d)
	}
	if d := l.Take("", "erin", 10); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Take(10) = %+v, want allowed", d)
	}
	// A cost bigger than the bucket can never pass: refused for a period.
	l2, _ := mustLimiter(t, "default=5/1m")
	if d := l2.Take("", "frank", 6); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("Take(6) on a 5-token bucket = %+v, want refused for 1m", d)
	}
}

func TestSweepDropsIdleBuckets(t *testing.T) {
	l, clk := mustLimiter(t, "default=2/1m")
	l.Take("", "a", 2)
	l.Take("", "b", 1)
	clk.Advance(30 * time.Second)
	if n := l.Sweep(); n != 0 || l.Len() != 2 {
		t.Fatalf("Sweep after 30s dropped %d, %d left; want none dropped", n, l.Len())
	}
	clk.Advance(31 * time.Second)
	if n := l.Sweep(); n != 2 || l.Len() != 0 {
		t.Fatalf("Sweep after 61s dropped %d, %d left; want both dropped", n, l.Len())
	}
	if d := l.Take("", "a", 2); !d.Allowed {
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
				if l.Take("", "same", 1).Allowed {
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
