package supervise_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatewayapis/devstack/internal/supervise"
	"github.com/gatewayapis/testkit/syncbuf"
)

func sh(name, script string) supervise.Service {
	return supervise.Service{Name: name, Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"GREETING=hello"}}
}

// TestOneStopsAll: a service that fails at start ends the run with its
// own error line, and the other, which would run for a minute, is
// stopped.
func TestOneStopsAll(t *testing.T) {
	var out syncbuf.Buffer
	start := time.Now()
	// long says, through a FIFO that broken waits on, that it is ready for
	// SIGTERM (its sleep started; SIGKILL for the sleep, which a sleep
	// signalled between fork and exec cannot miss as it can TERM); broken
	// fails only then.
	up := filepath.Join(t.TempDir(), "up")
	if err := syscall.Mkfifo(up, 0o600); err != nil {
		t.Fatal(err)
	}
	err := supervise.Run(context.Background(), &out, []supervise.Service{
		sh("long", `trap 'echo stopping; kill -KILL $!; exit 0' TERM; echo "$GREETING from long"; sleep 60 & echo ready > `+up+`; wait`),
		sh("broken", `read ready < `+up+`; echo "listen on port 8081: address already in use" >&2; exit 1`),
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
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- supervise.Run(ctx, &out, []supervise.Service{
			// up once the sleep is started; SIGKILL for it, which a sleep
			// signalled between fork and exec cannot miss as it can TERM.
			sh("a", `trap 'echo a stops; kill -KILL $!; exit 0' TERM; sleep 60 & echo up; wait`),
			sh("b", `trap 'echo b stops; kill -KILL $!; exit 0' TERM; sleep 60 & echo up; wait`),
		}, func() { close(ready) })
	}()
	<-ready
	upCtx, upCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer upCancel()
	if text, err := out.WaitFor(upCtx, func(s string) bool { return strings.Contains(s, "a | up") && strings.Contains(s, "b | up") }); err != nil {
		t.Fatalf("the services never said up: %v\n%s", err, text)
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
