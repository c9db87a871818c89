package syncbuf_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/gatewayapis/testkit/syncbuf"
)

// TestConcurrentWrites: writes from many goroutines each arrive whole,
// once (run with -race: the buffer is read while it is written).
func TestConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "line %d %d\n", g, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for line := range strings.Lines(b.String()) {
		if seen[line] || !strings.HasPrefix(line, "line ") {
			t.Fatalf("line %q twice or broken", line)
		}
		seen[line] = true
	}
	if len(seen) != 800 {
		t.Fatalf("%d lines, want 800", len(seen))
	}
}

// TestWaitFor: WaitFor returns when a write makes done true, not before,
// with the text written; at once when it is already true; with the text
// so far and the context's cause when the context ends first.
func TestWaitFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b syncbuf.Buffer
		b.Write([]byte("starting\n"))
		if text, err := b.WaitFor(t.Context(), func(s string) bool { return strings.Contains(s, "starting") }); err != nil || text != "starting\n" {
			t.Fatalf("WaitFor on what is written = %q, %v", text, err)
		}

		type result struct {
			text string
			err  error
		}
		got := make(chan result, 1)
		go func() {
			text, err := b.WaitFor(t.Context(), func(s string) bool { return strings.Contains(s, "listening") })
			got <- result{text, err}
		}()
		b.Write([]byte("loading\n"))
		synctest.Wait()
		select {
		case r := <-got:
			t.Fatalf("WaitFor returned %q, %v before the line came", r.text, r.err)
		default:
		}
		b.Write([]byte("listening\n"))
		if r := <-got; r.err != nil || r.text != "starting\nloading\nlistening\n" {
			t.Fatalf("WaitFor = %q, %v", r.text, r.err)
		}

		exited := errors.New("exited")
		ctx, cancel := context.WithCancelCause(t.Context())
		go func() {
			text, err := b.WaitFor(ctx, func(s string) bool { return strings.Contains(s, "never") })
			got <- result{text, err}
		}()
		synctest.Wait()
		cancel(exited)
		if r := <-got; !errors.Is(r.err, exited) || r.text != "starting\nloading\nlistening\n" {
			t.Fatalf("WaitFor after the context ended = %q, %v; want the text so far and %v", r.text, r.err, exited)
		}
	})
}
