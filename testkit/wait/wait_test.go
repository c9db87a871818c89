package wait_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/testkit/wait"
)

// TestUntilAtOnce: a condition that holds is looked at once, no pause.
func TestUntilAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start, looks := time.Now(), 0
		if !wait.Until(time.Second, func() bool { looks++; return true }) {
			t.Fatal("Until = false on a condition that holds")
		}
		if looks != 1 || time.Since(start) != 0 {
			t.Errorf("%d looks in %v, want 1 at once", looks, time.Since(start))
		}
	})
}

// TestUntilPauses: the pauses between looks double from 1 ms up to
// MaxPause, so a change is seen within MaxPause of when it comes.
func TestUntilPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		changed := start.Add(100 * time.Millisecond)
		ok := wait.Until(10*time.Second, func() bool {
			at = append(at, time.Since(start))
			return !time.Now().Before(changed)
		})
		if !ok {
			t.Fatal("Until = false, want the change seen")
		}
		want := []time.Duration{0, 1, 3, 7, 15, 31, 47, 63, 79, 95, 111}
		if len(at) != len(want) {
			t.Fatalf("looks at %v, want at %v ms", at, want)
		}
		for i, w := range want {
			if at[i] != w*time.Millisecond {
				t.Fatalf("looks at %v, want at %v ms", at, want)
			}
		}
		if late := at[len(at)-1] - 100*time.Millisecond; late > wait.MaxPause {
			t.Errorf("change seen %v late, want within MaxPause %v", late, wait.MaxPause)
		}
	})
}

// TestUntilTimesOut: a condition that never holds makes Until report
// false at the deadline, after a last look there, not before.
func TestUntilTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var last time.Duration
		if wait.Until(time.Second, func() bool { last = time.Since(start); return false }) {
			t.Fatal("Until = true on a condition that never holds")
		}
		if took := time.Since(start); took != time.Second || last != time.Second {
			t.Errorf("Until returned after %v, last look at %v; want both at the 1s deadline", took, last)
		}
	})
}

// TestContextCause: Context returns the cause of its context's end, and
// nil when the last look finds the condition holding.
func TestContextCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := errors.New("test over")
		ctx, cancel := context.WithCancelCause(t.Context())
		done := make(chan error, 1)
		go func() { done <- wait.Context(ctx, func() bool { return false }) }()
		time.Sleep(time.Second)
		cancel(stop)
		if err := <-done; !errors.Is(err, stop) {
			t.Errorf("Context = %v, want the cause %v", err, stop)
		}

		ctx, cancel = context.WithCancelCause(t.Context())
		var holds bool
		go func() { done <- wait.Context(ctx, func() bool { return holds }) }()
		synctest.Wait()
		holds = true // seen by the last look, not by a pause's
		cancel(stop)
		if err := <-done; err != nil {
			t.Errorf("Context = %v, want nil: the condition held at the last look", err)
		}
	})
}
