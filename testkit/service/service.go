// Package service starts a service for an end-to-end test, waits until it
// serves, keeps its log, and stops it, returning how it ended: in the
// test's own process (Start: the service's serve function on a listener
// the test opened) or as a child process (Exec: the service's binary, or
// the test binary re-executed as the service).
//
// Every wait is bounded and ends early when the service ends: a start-up
// line is waited for as it is written (syncbuf.Buffer.WaitFor), a probe
// path is asked until it answers 200, and a stop is waited for until the
// serve function returns or the process exits.
//
// # Caveats
//
//   - Exec reads the port from the service's start-up log line
//     {"msg":"http server listening","addr":"[::]:NNNNN"} (both services
//     log it at INFO, with PORT=0 the kernel's choice): LOG_LEVEL must let
//     it through. Exec sets PORT=0 last in the command's environment, so it
//     wins; a port chosen, closed and bound again later can be taken by
//     another process in between (issue 27).
//   - A service the test has not stopped is stopped when the test ends:
//     Start's by cancelling its context, Exec's by SIGKILL (a test that
//     cares how it ends calls Stop).
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/syncbuf"
)

// ServeFunc is a service's serve function as Start runs it: it serves
// HTTP on ln until ctx ends, writing its log to logs, and returns nil
// after a clean stop.
type ServeFunc func(ctx context.Context, ln net.Listener, logs io.Writer) error

// Options tune Start and Exec. The zero value is the defaults.
type Options struct {
	// Name names the service in failure messages: "service" when empty
	// (Exec: the command's path).
	Name string
	// Ready lists the paths, under the service's URL, that must each
	// answer 200, in order, before Start or Exec returns: {"/livez"} when
	// empty.
	Ready []string
	// StartWithin bounds the start, from launch to the last Ready path's
	// 200: 30 s when zero.
	StartWithin time.Duration
	// StopWithin bounds the wait for the service to end once Stop asks it
	// to: 30 s when zero.
	StopWithin time.Duration
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "service"
	}
	if len(o.Ready) == 0 {
		o.Ready = []string{"/livez"}
	}
	if o.StartWithin == 0 {
		o.StartWithin = 30 * time.Second
	}
	if o.StopWithin == 0 {
		o.StopWithin = 30 * time.Second
	}
	return o
}

// Service is a service a test started.
type Service struct {
	// URL is the service's base URL, http://127.0.0.1:port, without a
	// trailing slash.
	URL string
	// Logs holds what the service has written: its log (Start), its
	// standard output and error (Exec).
	Logs *syncbuf.Buffer

	opts  Options
	ended chan struct{} // closed when the service has ended
	err   error         // how it ended; read after ended is closed
	end   func()        // asks the service to end (cancel, SIGTERM)
	kill  func()        // ends it at once (Exec), after StopWithin

	stopOnce sync.Once
	stopErr  error
}

// Start runs serve in a goroutine on a loopback listener the test opened,
// waits until opts.Ready answers, and returns the running service. It
// fails the test, with the log so far, when serve returns first or the
// start takes longer than opts.StartWithin. The service is stopped when
// the test ends if Stop was not called.
func Start(t testing.TB, serve ServeFunc, opts Options) *Service {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // if serve never got to close it
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		URL:   "http://" + ln.Addr().String(),
		Logs:  &syncbuf.Buffer{},
		opts:  opts.withDefaults(),
		ended: make(chan struct{}),
		end:   cancel,
	}
	go func() {
		s.err = serve(ctx, ln, s.Logs)
		close(s.ended)
	}()
	t.Cleanup(func() { s.Stop() })
	s.waitReady(t, time.Now().Add(s.opts.StartWithin))
	return s
}

// Stop asks the service to end (Start's: its context is cancelled; Exec's:
// SIGTERM) and waits, at most opts.StopWithin, until it has. It returns
// how the service ended: serve's error, or the process's (nil for exit
// status 0), or an error saying it did not end in time (a process is then
// killed). Later calls return the first's result.
func (s *Service) Stop() error {
	s.stopOnce.Do(func() {
		s.end()
		select {
		case <-s.ended:
			s.stopErr = s.err
		case <-time.After(s.opts.StopWithin):
			s.stopErr = fmt.Errorf("%s did not stop within %v", s.opts.Name, s.opts.StopWithin)
			if s.kill != nil {
				s.kill()
				<-s.ended
			}
		}
	})
	return s.stopErr
}

// Ended is closed when the service has ended, whether Stop asked it to
// or not.
func (s *Service) Ended() <-chan struct{} { return s.ended }

// startContext is a context that ends at deadline or when the service
// ends, whichever comes first; its cause says which.
func (s *Service) startContext(deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, cancelDeadline := context.WithDeadlineCause(ctx, deadline, fmt.Errorf("%s did not start within %v", s.opts.Name, s.opts.StartWithin))
	go func() {
		select {
		case <-s.ended:
			cancel(fmt.Errorf("%s ended before it served: %v", s.opts.Name, s.err))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancelDeadline(); cancel(nil) }
}

// waitReady waits until every Ready path answers 200, failing the test
// when the service ends or the deadline passes first.
func (s *Service) waitReady(t testing.TB, deadline time.Time) {
	t.Helper()
	ctx, cancel := s.startContext(deadline)
	defer cancel()
	for _, p := range s.opts.Ready {
		if err := WaitOK(ctx, s.URL+p); err != nil {
			t.Fatalf("%s: %v\n%s", s.opts.Name, err, s.Logs)
		}
	}
}

// WaitOK asks GET url until it answers 200, and returns nil then. It asks
// again every 20 ms after an answer that is not 200 or a failed request,
// and returns an error naming the last of them when ctx ends first (its
// cause included). A request in flight ends with ctx, and says nothing of
// the service then.
func WaitOK(ctx context.Context, url string) error {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer")
	for {
		err := get(ctx, client, url)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s: %v, want 200: %w", url, last, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// get returns nil when GET url answers 200, else what it answered.
func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
