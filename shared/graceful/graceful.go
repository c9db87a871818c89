// Package graceful runs an http.Server until a context ends, then drains it.
package graceful

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// DrainContext returns a context that ends timeout after ctx ends: the
// one deadline every shutdown step shares (the HTTP drain, then background
// work, then closing stores), so that SIGTERM to exit never takes longer
// than the configured shutdown timeout. cancel releases it early.
func DrainContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	drain, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
		case <-drain.Done():
			return
		}
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-drain.Done():
		}
	}()
	return drain, cancel
}

// Serve serves srv on ln until ctx is done, then stops accepting
// connections and waits, until drain ends, for in-flight requests to
// finish; connections still busy then are closed and logged. It returns
// nil once the server has stopped, or the error that stopped serving early
// (a broken listener, say).
func Serve(ctx, drain context.Context, srv *http.Server, ln net.Listener, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("http server listening", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}

	logger.Info("http server shutting down")
	if err := srv.Shutdown(drain); err != nil {
		logger.Warn("http server drain timed out; closing remaining connections", "err", err.Error())
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	logger.Info("http server stopped")
	return nil
}

// Run serves srv on ln until ctx ends or serving fails, drains in-flight
// requests, and returns the context the remaining shutdown steps share: it
// ends timeout after the signal, or after the failure, so a broken
// listener bounds the shutdown as SIGTERM does. err is the error that
// stopped serving early, nil after a signal. The caller calls stop when
// the shutdown is done.
func Run(ctx context.Context, timeout time.Duration, srv *http.Server, ln net.Listener, logger *slog.Logger) (drain context.Context, stop context.CancelFunc, err error) {
	serving, stopServing := context.WithCancel(ctx)
	drain, stopDrain := DrainContext(serving, timeout)
	err = Serve(serving, drain, srv, ln, logger)
	stopServing() // starts the deadline if serving failed
	return drain, stopDrain, err
}

// NewServer returns an http.Server with the timeouts every service wants:
// slowloris protection on headers, bounded reads and writes, and the
// server's own errors routed into logger.
func NewServer(h http.Handler, logger *slog.Logger, writeTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
}
