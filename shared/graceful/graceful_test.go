package graceful_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/shared/graceful"
)

// TestServeDrainsInFlight: a request in flight when the context ends,
// which finishes only once the shutdown has begun, gets its answer, and
// Serve returns nil after it.
func TestServeDrainsInFlight(t *testing.T) {
	started := make(chan struct{})
	shuttingDown := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-shuttingDown:
		case <-r.Context().Done(): // the connection closed: no drain
			return
		}
		io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	srv := graceful.NewServer(h, logger, 5*time.Second)
	srv.RegisterOnShutdown(func() { close(shuttingDown) })
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	drain, stop := graceful.DrainContext(ctx, 5*time.Second)
	defer stop()
	go func() { served <- graceful.Serve(ctx, drain, srv, ln, logger) }()

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v, want nil after a clean drain", err)
	}
	if body := <-got; body != "done" {
		t.Errorf("in-flight request got %q, want it to finish", body)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("listener still accepts after shutdown")
	}
}

func TestServeTimeoutClosesConnections(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	drain, stop := graceful.DrainContext(ctx, 100*time.Millisecond)
	defer stop()
	go func() { served <- graceful.Serve(ctx, drain, graceful.NewServer(h, logger, time.Minute), ln, logger) }()
	go http.Get("http://" + ln.Addr().String())
	<-started
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want nil (a timed-out drain is logged, not fatal)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its drain timeout")
	}
}

func TestServeListenerError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ln.Close()
	logger := slog.New(slog.DiscardHandler)
	err := graceful.Serve(context.Background(), context.Background(), graceful.NewServer(http.NotFoundHandler(), logger, time.Second), ln, logger)
	if err == nil {
		t.Error("Serve on a closed listener returned nil")
	}
}

// TestRunListenerError: when serving fails, the shutdown deadline starts
// as if a signal had come; without it the remaining steps would wait on a
// context that never ends.
func TestRunListenerError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ln.Close()
	logger := slog.New(slog.DiscardHandler)
	drain, stop, err := graceful.Run(context.Background(), 50*time.Millisecond, graceful.NewServer(http.NotFoundHandler(), logger, time.Second), ln, logger)
	defer stop()
	if err == nil {
		t.Error("Run on a closed listener returned no error")
	}
	select {
	case <-drain.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown deadline never ended after serving failed")
	}
}

// TestRunSignal: after the signal Run returns once the server has drained,
// and its context ends the timeout after the signal.
func TestRunSignal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	drain, stop, err := graceful.Run(ctx, 50*time.Millisecond, graceful.NewServer(http.NotFoundHandler(), logger, time.Second), ln, logger)
	defer stop()
	if err != nil {
		t.Errorf("Run after a signal = %v, want nil", err)
	}
	select {
	case <-drain.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown deadline never ended after the signal")
	}
}

// TestDrainContext: the drain context outlives its parent by the timeout
// exactly (on synctest's clock), however long the parent lived, and stop
// ends it at once.
func TestDrainContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		drain, stop := graceful.DrainContext(ctx, 50*time.Millisecond)
		defer stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		if drain.Err() != nil {
			t.Fatal("drain ended before its parent")
		}
		cancel()
		time.Sleep(50*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		if drain.Err() != nil {
			t.Fatal("drain ended before its timeout after the parent")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if drain.Err() == nil {
			t.Fatal("drain still open its timeout after the parent ended")
		}

		drain, stop = graceful.DrainContext(t.Context(), time.Hour)
		stop()
		synctest.Wait()
		if drain.Err() == nil {
			t.Error("drain still open after stop")
		}
	})
}
