package wake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/gatewayapis/testkit/internal/wake"
)

// TestUntil: Until returns at once when the condition holds, after the
// Broadcast that makes it hold (not before), and with the context's
// cause when it ends first.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var c wake.Chan
		n := 0
		if err := wake.Until(t.Context(), &mu, &c, func() bool { return n == 0 }); err != nil {
			t.Fatalf("Until on a condition that holds = %v", err)
		}

		done := make(chan error, 1)
		go func() { done <- wake.Until(t.Context(), &mu, &c, func() bool { return n >= 2 }) }()
		for range 2 {
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("Until returned %v at n = %d, want it to wait for 2", err, n)
			default:
			}
			mu.Lock()
			n++
			c.Broadcast()
			mu.Unlock()
		}
		if err := <-done; err != nil {
			t.Fatalf("Until = %v after n reached 2", err)
		}

		stop := errors.New("test over")
		ctx, cancel := context.WithCancelCause(t.Context())
		go func() { done <- wake.Until(ctx, &mu, &c, func() bool { return false }) }()
		synctest.Wait()
		cancel(stop)
		if err := <-done; !errors.Is(err, stop) {
			t.Fatalf("Until after the context ended = %v, want its cause %v", err, stop)
		}
	})
}
