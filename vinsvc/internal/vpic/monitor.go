package vpic

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Monitor checks the upstream periodically and remembers the last result,
// for the health report. Until the first check ends it reports reachable
// with a zero LastCheck: nothing has failed yet.
type Monitor struct {
	ping    func(context.Context) error
	timeout time.Duration
	logger  *slog.Logger
	now     func() time.Time

	mu        sync.Mutex
	reachable bool
	lastCheck time.Time
}

// NewMonitor returns a Monitor that calls ping, each call bounded by
// timeout.
func NewMonitor(ping func(context.Context) error, timeout time.Duration, logger *slog.Logger, now func() time.Time) *Monitor {
	return &Monitor{ping: ping, timeout: timeout, logger: logger, now: now, reachable: true}
}

// Check pings the upstream once and records the result.
func (m *Monitor) Check(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	err := m.ping(cctx)
	cancel()
	if ctx.Err() != nil {
		return m.State().Reachable // shutting down: says nothing about the upstream
	}
	m.mu.Lock()
	was := m.reachable
	m.reachable, m.lastCheck = err == nil, m.now().UTC()
	m.mu.Unlock()
	switch {
	case err != nil && was:
		m.logger.Warn("upstream unreachable", "err", err.Error())
	case err == nil && !was:
		m.logger.Info("upstream reachable again")
	}
	return err == nil
}

// Run checks at once and then every interval until ctx ends.
func (m *Monitor) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		m.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// State returns the last check's result.
func (m *Monitor) State() vin.UpstreamState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return vin.UpstreamState{Reachable: m.reachable, LastCheck: m.lastCheck}
}
