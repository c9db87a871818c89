package supervise_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/devstack/internal/supervise"
)

// syncBuffer is a bytes.Buffer safe for the supervisor's writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func sh(name, script string) supervise.Service {
	return supervise.Service{Name: name, Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"GREETING=hello"}}
}

// TestOneStopsAll: a service that fails at start ends the run with its
// own error line, and the other, which would run for a minute, is
// stopped.
func TestOneStopsAll(t *testing.T) {
	var out syncBuffer
	start := time.Now()
	up := filepath.Join(t.TempDir(), "up") // long is ready for SIGTERM
	err := supervise.Run(context.Background(), &out, []supervise.Service{
		sh("long", `trap 'echo stopping; kill $!; exit 0' TERM; echo "$GREETING from long"; touch `+up+`; sleep 60 & wait`),
		sh("broken", `while [ ! -e `+up+` ]; do sleep 0.05; done; echo "listen on port 8081: address already in use" >&2; exit 1`),
	}, nil)
	var ee *supervise.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want an *ExitError", err)
	}
	if ee.Service != "broken" || ee.Status != "exit status 1" || ee.LastLine != "listen on port 8081: address already in use" {
		t.Errorf("ExitError = %+v", ee)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("Run took %s: the long service was not stopped", time.Since(start))
	}
	got := out.String()
	for _, want := range []string{"long   | hello from long\n", "broken | listen on port 8081", "long   | stopping\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestStopOnCancel: ending the context stops every service and Run
// returns nil.
func TestStopOnCancel(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- supervise.Run(ctx, &out, []supervise.Service{
			sh("a", `trap 'echo a stops; kill $!; exit 0' TERM; echo up; sleep 60 & wait`),
			sh("b", `trap 'echo b stops; kill $!; exit 0' TERM; echo up; sleep 60 & wait`),
		}, func() { close(ready) })
	}()
	<-ready
	for !strings.Contains(out.String(), "a | up") || !strings.Contains(out.String(), "b | up") {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the context ended")
	}
	for _, want := range []string{"a | a stops", "b | b stops"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
