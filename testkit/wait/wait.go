// Package wait is the one bounded polling wait the tests share, for state
// that nothing tells them about: rows that a work queue's workers, another
// replica's pool or the database server itself write (a job's status, a
// unit's state, a server-side session). Where the test owns what changes
// (a fake's handler, a log it is given, a channel), it waits on that event
// instead: syncbuf's WaitFor, fakehttp's WaitCalls.
//
// Until looks at once, then after pauses that start at a millisecond and
// double up to MaxPause: a change that comes soon is seen soon, and a long
// wait does not load the database with queries.
package wait

import (
	"context"
	"time"
)

// MaxPause is the longest pause between two looks.
const MaxPause = 16 * time.Millisecond

// Until reports whether cond reports true within d: it calls cond at once
// and then after each pause, and a last time at the deadline. cond runs on
// the caller's goroutine (it may call t.Fatal).
func Until(d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return Context(ctx, cond) == nil
}

// Context is Until bounded by ctx: it returns nil once cond reports true,
// or the cause of ctx's end, after a last look, if that comes first.
func Context(ctx context.Context, cond func() bool) error {
	pause := time.Millisecond
	for !cond() {
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if cond() {
				return nil
			}
			return context.Cause(ctx)
		}
		pause = min(2*pause, MaxPause)
	}
	return nil
}
