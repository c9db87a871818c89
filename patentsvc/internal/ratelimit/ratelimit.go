// Package ratelimit enforces the patent service's per-IP limits on
// registration and login as moving windows: at most N requests in any
// window (60 seconds) per client. It also counts, per endpoint, every
// request and every refusal, for GET /admin/rate-limits.
//
// # Caveats
//
//   - Without a Cluster the windows and counters live in the process: with
//     several replicas each enforces its own share (the SQLite case, a
//     single process by design).
//   - With a Cluster (WithShared; PostgreSQL) the windows and counters are
//     kept in the database, one for every replica sharing it
//     (decisions.md, "Across replicas"): the decision, the Retry-After and
//     the counters are the same whichever replica answers. The times are
//     the replicas' own clocks, which are assumed NTP-synced: a skew
//     shifts a window by that much.
//   - A database that cannot answer (an error, or no answer within
//     StoreTimeout) does not refuse the request: the process's own window
//     decides it (fail open to the in-process window, which still bounds
//     each replica). The outage is logged once when it starts and once when
//     it ends, and every failed call is counted (Cluster.Errors). Requests
//     decided that way are not in the shared counters.
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewayapis/shared/redact"
)

// Shared keeps the moving windows and the counters outside the process,
// one for every replica (the store implements it on PostgreSQL). The times
// it is given come from the caller's clock.
type Shared interface {
	// Take counts a request from client to endpoint at now. When fewer
	// than limit of client's requests to endpoint are in the window
	// (now-per, now], it records the request and returns ok; otherwise
	// retryAfter is the time until the oldest of them leaves the window
	// (refusals take no place). Either way the endpoint's total grows by
	// one, and its rejected count too when refused. Concurrent Takes of one
	// (endpoint, client), from any replica, are serialised, so the limit is
	// exact. An error means nothing was recorded.
	Take(ctx context.Context, endpoint, client string, limit int, per time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error)
	// Counts returns the endpoint's counters as every Take recorded them
	// (zero for an endpoint never seen).
	Counts(ctx context.Context, endpoint string) (total, rejected int64, err error)
	// Prune forgets endpoint's requests at or before before, of every
	// client, and returns how many.
	Prune(ctx context.Context, endpoint string, before time.Time) (int64, error)
}

// StoreTimeout bounds each call to the Shared store: a limiter that holds a
// login longer than this is worse than one that lets the process's own
// window decide it.
const StoreTimeout = time.Second

// Cluster is a Shared store with its outage tracking, for the windows of
// every endpoint. It is safe for concurrent use.
type Cluster struct {
	shared  Shared
	timeout time.Duration
	logger  *slog.Logger
	now     func() time.Time

	errors atomic.Int64
	down   atomic.Bool // fast path: no lock while the store answers

	mu        sync.Mutex // orders the outage's start and end log lines
	downSince time.Time
}

// NewCluster returns the windows' shared store: each call bounded by
// timeout, outages logged to logger and timed with now.
func NewCluster(s Shared, timeout time.Duration, logger *slog.Logger, now func() time.Time) *Cluster {
	return &Cluster{shared: s, timeout: timeout, logger: logger, now: now}
}

// Errors returns how many calls to the store failed since start; each
// failed Take is one request decided by the process's own window.
func (c *Cluster) Errors() int64 { return c.errors.Load() }

// Up reports whether the last call to the store succeeded.
func (c *Cluster) Up() bool { return !c.down.Load() }

// do runs fn within the timeout and records the outcome. The caller's own
// cancellation (a client that went away) is not held against the store.
func (c *Cluster) do(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	err := fn(cctx)
	cancel()
	switch {
	case err == nil:
		c.up()
	case ctx.Err() != nil:
	default:
		c.fail(op, err)
	}
	return err
}

func (c *Cluster) up() {
	if !c.down.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.down.Load() {
		return
	}
	c.down.Store(false)
	c.logger.Info("rate-limit store reachable again: the windows are shared across replicas again",
		"outage_seconds", int(c.now().Sub(c.downSince).Seconds()))
}

func (c *Cluster) fail(op string, err error) {
	c.errors.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down.Load() {
		return
	}
	c.down.Store(true)
	c.downSince = c.now()
	c.logger.Warn("rate-limit store unreachable: each replica enforces its own windows until it answers",
		"op", op, "err", redact.Error(err))
}

// Window limits one endpoint. It is safe for concurrent use.
type Window struct {
	endpoint string
	label    string
	limit    int
	per      time.Duration
	now      func() time.Time
	cluster  *Cluster // nil: the process's own window only

	mu      sync.Mutex
	clients map[string][]time.Time // times of the counted requests, oldest first

	total, rejected atomic.Int64 // the requests this process decided alone
}

// Option configures a Window.
type Option func(*Window)

// WithShared makes c's store the window and counters of record; the
// process's own window decides only the requests the store cannot.
func WithShared(c *Cluster) Option { return func(w *Window) { w.cluster = c } }

// New returns a Window allowing limit requests per per for each client.
// label is how the limit is shown (e.g. "5/minute").
func New(endpoint, label string, limit int, per time.Duration, now func() time.Time, opts ...Option) *Window {
	w := &Window{endpoint: endpoint, label: label, limit: limit, per: per, now: now, clients: map[string][]time.Time{}}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Limit returns how the limit is shown (e.g. "5/minute").
func (w *Window) Limit() string { return w.label }

// Allow counts a request from client and reports whether it may proceed.
// When it may not, retryAfter is the time until the oldest counted request
// leaves the window. Refused requests do not take a place in the window.
// With a shared store the store decides; when it cannot, the process's own
// window does.
func (w *Window) Allow(ctx context.Context, client string) (ok bool, retryAfter time.Duration) {
	now := w.now()
	if w.cluster != nil {
		err := w.cluster.do(ctx, "take", func(ctx context.Context) error {
			var err error
			ok, retryAfter, err = w.cluster.shared.Take(ctx, w.endpoint, client, w.limit, w.per, now)
			return err
		})
		if err == nil {
			if ok {
				// Kept in the process too, so that during an outage its
				// own window starts from what it let through.
				w.remember(client, now)
			}
			return ok, retryAfter
		}
	}
	return w.allowLocal(client, now)
}

// allowLocal decides a request with the process's own window.
func (w *Window) allowLocal(client string, now time.Time) (bool, time.Duration) {
	w.total.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	times := live(w.clients[client], now.Add(-w.per))
	if len(times) >= w.limit {
		w.clients[client] = times
		w.rejected.Add(1)
		return false, times[0].Add(w.per).Sub(now)
	}
	w.clients[client] = append(times, now)
	return true, 0
}

// remember records a request the shared store let through, keeping at most
// limit times.
func (w *Window) remember(client string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	times := append(live(w.clients[client], now.Add(-w.per)), now)
	if len(times) > w.limit {
		times = times[len(times)-w.limit:]
	}
	w.clients[client] = times
}

// live drops the times at or before cutoff (the slice is sorted).
func live(times []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(times) && !times[i].After(cutoff) {
		i++
	}
	return times[i:]
}

// Stats are an endpoint's counters.
type Stats struct {
	Endpoint         string
	Limit            string
	TotalRequests    int64
	RejectedRequests int64
}

// Stats returns the counters: the process's since start or, with a shared
// store, the cluster's as the store keeps them. It fails only when the
// shared store does.
func (w *Window) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Endpoint: w.endpoint, Limit: w.label}
	if w.cluster == nil {
		st.TotalRequests, st.RejectedRequests = w.total.Load(), w.rejected.Load()
		return st, nil
	}
	err := w.cluster.do(ctx, "counts", func(ctx context.Context) error {
		var err error
		st.TotalRequests, st.RejectedRequests, err = w.cluster.shared.Counts(ctx, w.endpoint)
		return err
	})
	if err != nil {
		return Stats{}, fmt.Errorf("rate-limit counters of %s: %w", w.endpoint, err)
	}
	return st, nil
}

// Sweep forgets clients with no request in the window and, with a shared
// store, prunes the requests two windows old or older there: a window
// behind what any window reaches, so a replica whose clock runs ahead by
// less than a window never prunes a request another still counts. A
// failed prune is logged as the store's outage and returned.
func (w *Window) Sweep(ctx context.Context) error {
	now := w.now()
	cutoff := now.Add(-w.per)
	w.mu.Lock()
	for c, times := range w.clients {
		if len(live(times, cutoff)) == 0 {
			delete(w.clients, c)
		}
	}
	w.mu.Unlock()
	if w.cluster == nil {
		return nil
	}
	return w.cluster.do(ctx, "prune", func(ctx context.Context) error {
		_, err := w.cluster.shared.Prune(ctx, w.endpoint, now.Add(-2*w.per))
		return err
	})
}

// Clients returns how many clients the process remembers.
func (w *Window) Clients() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.clients)
}

// JanitorInterval is how often gocron has Sweep sweep the windows.
const JanitorInterval = time.Minute

// Sweep sweeps the windows (gocron calls it every JanitorInterval on every
// replica; prunes of the same rows by several are harmless). A failure is
// logged by the Cluster.
func Sweep(ctx context.Context, windows ...*Window) {
	for _, w := range windows {
		_ = w.Sweep(ctx)
	}
}
