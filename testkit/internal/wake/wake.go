// Package wake lets goroutines wait for a change of state that a mutex
// guards, and stop waiting when a context ends: what sync.Cond does, with
// a context. syncbuf's WaitFor and fakehttp's WaitCalls wait with it.
package wake

import (
	"context"
	"sync"
)

// Chan broadcasts the changes of one piece of state. The zero value is
// ready. Broadcast must be called with the state's mutex held, as Until
// calls Next.
type Chan struct {
	ch chan struct{} // closed by the next Broadcast; nil until someone waits
}

// Broadcast wakes every goroutine waiting in Until on c.
func (c *Chan) Broadcast() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// next returns a channel that the next Broadcast closes.
func (c *Chan) next() <-chan struct{} {
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// Until returns nil once cond, called with mu held, reports true: at once
// if it does, then after each Broadcast on c. It returns the cause of
// ctx's end if that comes first.
func Until(ctx context.Context, mu sync.Locker, c *Chan, cond func() bool) error {
	for {
		mu.Lock()
		ok := cond()
		next := c.next()
		mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
