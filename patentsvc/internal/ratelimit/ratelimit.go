// Package ratelimit enforces the patent service's per-IP limits on
// registration and login as moving windows: at most N requests in any
// window (60 seconds) per client. It also counts, per endpoint, every
// request and every refusal, for GET /admin/rate-limits.
package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Window limits one endpoint. It is safe for concurrent use.
type Window struct {
	endpoint string
	label    string
	limit    int
	per      time.Duration
	now      func() time.Time

	mu      sync.Mutex
	clients map[string][]time.Time // times of the counted requests, oldest first

	total, rejected atomic.Int64
}

// New returns a Window allowing limit requests per per for each client.
// label is how the limit is shown (e.g. "5/minute").
func New(endpoint, label string, limit int, per time.Duration, now func() time.Time) *Window {
	return &Window{endpoint: endpoint, label: label, limit: limit, per: per, now: now, clients: map[string][]time.Time{}}
}

// Allow counts a request from client and reports whether it may proceed.
// When it may not, retryAfter is the time until the oldest counted request
// leaves the window. Refused requests do not take a place in the window.
func (w *Window) Allow(client string) (ok bool, retryAfter time.Duration) {
	w.total.Add(1)
	now := w.now()
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

// live drops the times at or before cutoff (the slice is sorted).
func live(times []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(times) && !times[i].After(cutoff) {
		i++
	}
	return times[i:]
}

// Stats are an endpoint's counters since start.
type Stats struct {
	Endpoint         string
	Limit            string
	TotalRequests    int64
	RejectedRequests int64
}

// Stats returns the counters.
func (w *Window) Stats() Stats {
	return Stats{Endpoint: w.endpoint, Limit: w.label, TotalRequests: w.total.Load(), RejectedRequests: w.rejected.Load()}
}

// Sweep forgets clients with no request in the window.
func (w *Window) Sweep() {
	cutoff := w.now().Add(-w.per)
	w.mu.Lock()
	defer w.mu.Unlock()
	for c, times := range w.clients {
		if len(live(times, cutoff)) == 0 {
			delete(w.clients, c)
		}
	}
}

// Clients returns how many clients are remembered.
func (w *Window) Clients() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.clients)
}

// JanitorInterval is how often run() has RunJanitor sweep the windows.
const JanitorInterval = time.Minute

// RunJanitor sweeps the windows every interval until ctx ends.
func RunJanitor(ctx context.Context, interval time.Duration, windows ...*Window) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, w := range windows {
				w.Sweep()
			}
		}
	}
}
