// Package cluster keeps the state vinsvc's replicas share in Redis
// (REDIS_URL): the per-subscriber rate-limit budgets, the pacing of vPIC
// calls across the cluster, a second cache tier behind each pod's bbolt
// file, and short-lived per-VIN locks so that concurrent misses on several
// pods make one vPIC call.
//
// Redis is an accelerator, never a dependency: every command runs under a
// short timeout (REDIS_TIMEOUT), and a failure makes the caller fall back to
// what a single process does alone (its own buckets, its own pacer, its own
// cache, its own call). After a failure Redis is left alone for
// RetryInterval, so an outage costs requests nothing; the outage is logged
// once when it starts and once when it ends, and counted in metrics.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/gatewayapis/shared/redact"
)

// RetryInterval is how long Redis is left alone after a failed command
// before the next command tries it again.
const RetryInterval = time.Second

// errSkipped is returned, without a network round trip, while Redis is
// being left alone after a failure.
var errSkipped = errors.New("redis: skipped after a recent failure")

// The states of health's redis field (decisions.md).
const (
	StateOK          = "ok"
	StateUnreachable = "unreachable"
	StateDisabled    = "disabled"
)

// Redis is the connection to the shared Redis with its outage tracking. A
// nil *Redis is valid and means Redis is not configured.
type Redis struct {
	rdb     *redis.Client
	prefix  string
	timeout time.Duration
	logger  *slog.Logger
	metrics *Metrics
	now     func() time.Time

	mu        sync.Mutex
	down      bool
	downSince time.Time
	// retryAt is when, during an outage, the next command may try Redis
	// (UnixNano); commands before it are skipped.
	retryAt atomic.Int64
}

// Open connects to the Redis at url (redis:// or rediss://, as go-redis's
// ParseURL reads it) and pings it once. Every key starts with prefix;
// every command is bounded by timeout. A Redis that does not answer the
// ping is not an error: the service starts and the outage is logged.
// metrics may be nil.
func Open(ctx context.Context, url, prefix string, timeout time.Duration, logger *slog.Logger, metrics *Metrics) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %s", redact.Error(err))
	}
	// No retries and no dial retries: a command answers within timeout or
	// fails, and the caller does without Redis.
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = timeout, timeout, timeout
	opts.PoolTimeout = timeout
	opts.ContextTimeoutEnabled = true
	opts.MinIdleConns = 2 // dialled in the background, not on a request
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	r := &Redis{rdb: redis.NewClient(opts), prefix: prefix, timeout: timeout, logger: logger, metrics: metrics, now: time.Now}
	r.metrics.setUp(true)
	if err := r.Ping(ctx); err != nil {
		return r, nil // logged and counted by do
	}
	logger.Info("redis reachable: limits, vPIC pacing and the second cache tier are shared across replicas",
		"addr", opts.Addr, "db", opts.DB, "key_prefix", prefix)
	return r, nil
}

// Close closes the connections.
func (r *Redis) Close() error {
	if r == nil {
		return nil
	}
	return r.rdb.Close()
}

// Ping checks Redis now, even during an outage's quiet interval, and
// records the outcome.
func (r *Redis) Ping(ctx context.Context) error {
	r.retryAt.Store(0)
	return r.do(ctx, "ping", func(ctx context.Context) error { return r.rdb.Ping(ctx).Err() })
}

// State reports Redis for health: disabled for a nil *Redis. During an
// outage whose quiet interval has passed it pings first, so health finds
// the end of an outage even when no request has.
func (r *Redis) State(ctx context.Context) string {
	if r == nil {
		return StateDisabled
	}
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	if down && !r.skipping() {
		_ = r.do(ctx, "ping", func(ctx context.Context) error { return r.rdb.Ping(ctx).Err() })
		r.mu.Lock()
		down = r.down
		r.mu.Unlock()
	}
	if down {
		return StateUnreachable
	}
	return StateOK
}

// key returns the full key for the parts, joined by ':' after the prefix.
func (r *Redis) key(kind, id string) string { return r.prefix + kind + ":" + id }

func (r *Redis) skipping() bool {
	at := r.retryAt.Load()
	return at != 0 && r.now().UnixNano() < at
}

// do runs fn with the command timeout, unless Redis is being left alone
// after a failure (errSkipped). redis.Nil (no such key) is an answer, not
// a failure. A failure starts an outage (logged once); the first success
// after one ends it (logged once). A caller's own cancellation is not
// counted against Redis.
func (r *Redis) do(ctx context.Context, op string, fn func(context.Context) error) error {
	if r.skipping() {
		return errSkipped
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	err := fn(cctx)
	cancel()
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		r.up()
	case ctx.Err() != nil:
		// The request went away; Redis may be fine.
	default:
		r.fail(op, err)
	}
	return err
}

func (r *Redis) up() {
	if r.retryAt.Load() == 0 {
		return // the common case: no outage, no lock
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt.Store(0)
	if !r.down {
		return
	}
	r.down = false
	r.metrics.setUp(true)
	r.logger.Info("redis reachable again: limits, pacing and the second cache tier are shared again",
		"outage_seconds", int(r.now().Sub(r.downSince).Seconds()))
}

func (r *Redis) fail(op string, err error) {
	r.metrics.error()
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt.Store(now.Add(RetryInterval).UnixNano())
	if r.down {
		return
	}
	r.down, r.downSince = true, now
	r.metrics.outage()
	r.metrics.setUp(false)
	r.logger.Warn("redis unreachable: limits and vPIC pacing are per process and the cache is the pod's own until it is back",
		"op", op, "err", redact.Error(err))
}
