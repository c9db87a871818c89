package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/syncbuf"
)

// Exec starts cmd, a service's process, with PORT=0 appended to its
// environment (cmd.Env, or the test's own when nil) and its standard
// output and error in Logs; reads the port the kernel gave it from its
// start-up line; waits until opts.Ready answers there; and returns the
// running service. It fails the test, with the output so far, when the
// process exits first or the start takes longer than opts.StartWithin.
// The process is killed when the test ends if Stop was not called.
func Exec(t testing.TB, cmd *exec.Cmd, opts Options) *Service {
	t.Helper()
	if opts.Name == "" {
		opts.Name = filepath.Base(cmd.Path)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "PORT=0") // last: it wins
	s := &Service{Logs: &syncbuf.Buffer{}, opts: opts.withDefaults(), ended: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.Logs, s.Logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", s.opts.Name, err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.ended)
	}()
	s.end = func() { _ = cmd.Process.Signal(syscall.SIGTERM) }
	s.kill = func() { _ = cmd.Process.Kill() }
	t.Cleanup(func() {
		select {
		case <-s.ended:
		default:
			s.kill()
			<-s.ended
		}
	})
	deadline := time.Now().Add(s.opts.StartWithin)
	ctx, cancel := s.startContext(deadline)
	port, err := ListeningPort(ctx, s.Logs)
	cancel()
	if err != nil {
		t.Fatalf("%s: %v\n%s", s.opts.Name, err, s.Logs)
	}
	s.URL = "http://127.0.0.1:" + port
	s.waitReady(t, deadline)
	return s
}

// ListeningPort waits until out holds the start-up line
// {"msg":"http server listening","addr":"[::]:NNNNN"} of a service
// started with PORT=0, and returns the port it names. It returns an error
// when the line's address has no port, or when ctx ends first (its cause
// included).
func ListeningPort(ctx context.Context, out *syncbuf.Buffer) (string, error) {
	var addr string
	_, err := out.WaitFor(ctx, func(text string) bool {
		for line := range strings.Lines(text) {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "http server listening" {
				addr = l.Addr
				return true
			}
		}
		return false
	})
	if err != nil {
		return "", fmt.Errorf(`no "http server listening" line (INFO: LOG_LEVEL must let it through): %w`, err)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("start-up line's address %q: %w", addr, err)
	}
	return port, nil
}
