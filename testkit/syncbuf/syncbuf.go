// Package syncbuf is a buffer that several goroutines, or a child
// process, write while a test reads it: a service's log, a supervisor's
// prefixed output. A test that expects something to be written waits for
// it with WaitFor, which each Write wakes: no polling, no sleep.
package syncbuf

import (
	"bytes"
	"context"
	"sync"

	"github.com/gatewayapis/testkit/internal/wake"
)

// Buffer is a bytes.Buffer safe for concurrent use. The zero value is an
// empty buffer ready to use. A Buffer must not be copied after first use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written wake.Chan
}

// Write appends p to the buffer and wakes the goroutines in WaitFor. It
// never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.written.Broadcast()
	return b.b.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// WaitFor returns what has been written once done reports true for it:
// done sees the whole text written so far, at once and after each Write.
// When ctx ends first, WaitFor returns the text so far and ctx's cause.
func (b *Buffer) WaitFor(ctx context.Context, done func(text string) bool) (string, error) {
	var text string
	err := wake.Until(ctx, &b.mu, &b.written, func() bool {
		text = b.b.String()
		return done(text)
	})
	return text, err
}
