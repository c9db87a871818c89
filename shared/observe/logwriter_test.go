package observe_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/testkit/syncbuf"
)

// recorder is an output that keeps each Write it gets.
type recorder struct {
	mu     sync.Mutex
	writes []string
	err    error
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

func TestLogWriterBatches(t *testing.T) {
	out := &recorder{}
	lw := observe.NewLogWriter(out, 64, time.Hour)
	for _, line := range []string{"aaaaaaaaaaaaaaaaaaaa\n", "bbbbbbbbbbbbbbbbbbbb\n", "cccccccccccccccccccc\n"} {
		if n, err := lw.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write(%q) = %d, %v, want %d, nil", line, n, err, len(line))
		}
	}
	if got := out.got(); len(got) != 0 {
		t.Fatalf("after 63 bytes into a 64-byte buffer, the output got %q, want nothing yet", got)
	}
	lw.Write([]byte("dd\n")) // does not fit: the three lines go out together
	if got, want := out.got(), []string{"aaaaaaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbb\ncccccccccccccccccccc\n"}; !equal(got, want) {
		t.Fatalf("output = %q, want %q", got, want)
	}
	big := strings.Repeat("e", 64) + "\n"
	lw.Write([]byte(big)) // as large as the buffer: what is buffered, then it, at once
	if got, want := out.got()[1:], []string{"dd\n", big}; !equal(got, want) {
		t.Fatalf("output = %q, want %q", got, want)
	}
	lw.Write([]byte("ff\n"))
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	lw.Write([]byte("after close\n"))
	if got, want := out.got()[3:], []string{"ff\n", "after close\n"}; !equal(got, want) {
		t.Fatalf("output = %q, want %q", got, want)
	}
}

// TestLogWriterFlushesAfterInterval: lines that do not fill the buffer go
// out together once the interval has passed since the first, not before
// (on synctest's clock).
func TestLogWriterFlushesAfterInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := &recorder{}
		lw := observe.NewLogWriter(out, 1<<10, 10*time.Millisecond)
		defer lw.Close()
		logger := slog.New(slog.NewJSONHandler(lw, nil))
		logger.Info("one")
		logger.Info("two")
		time.Sleep(10*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		if got := out.got(); len(got) != 0 {
			t.Fatalf("output before the interval = %q, want nothing yet", got)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		got := out.got()
		if len(got) != 1 || strings.Count(got[0], "\n") != 2 || !strings.Contains(got[0], `"msg":"one"`) || !strings.Contains(got[0], `"msg":"two"`) {
			t.Fatalf("output = %q, want both lines in one write", got)
		}
	})
}

// TestLogWriterErrors: a write straight through a failing output fails;
// a timed flush that fails is remembered, and Close returns it.
func TestLogWriterErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := &recorder{err: errors.New("disk full")}
		lw := observe.NewLogWriter(out, 8, time.Millisecond)
		if _, err := lw.Write([]byte("0123456789")); err == nil {
			t.Error("Write straight through a failing output: nil error")
		}
		lw.Write([]byte("abc"))
		time.Sleep(time.Millisecond) // the timed flush fails and is remembered
		synctest.Wait()
		if err := lw.Close(); err == nil {
			t.Error("Close after a failed timed flush: nil error")
		}
	})
}

// TestLogWriterConcurrentLines checks that lines written at once from many
// goroutines arrive whole, each once.
func TestLogWriterConcurrentLines(t *testing.T) {
	var out syncbuf.Buffer
	lw := observe.NewLogWriter(&out, 256, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(lw, "line %d %d\n", g, i)
			}
		})
	}
	wg.Wait()
	lw.Close()
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if seen[l] || !strings.HasPrefix(l, "line ") {
			t.Fatalf("line %q twice or broken", l)
		}
		seen[l] = true
	}
	if len(seen) != 1600 {
		t.Fatalf("%d lines arrived, want 1600", len(seen))
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}
