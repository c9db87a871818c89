// Package cluster keeps the state vinsvc's replicas share in Redis
// (REDIS_URL): the per-subscriber rate-limit budgets, the pacing of vPIC
// calls across the cluster, a second cache tier behind each pod's bbolt
// file, and short-lived per-VIN locks so that concurrent misses on several
// pods make one vPIC call.
//
// Redis is an accelerator, never a dependency: every command runs under a
// short timeout (REDIS_TIMEOUT), and a failure makes the caller fall back to
// what a single process does alone (its own buckets, its own pacer, its own
// cache, its own call). OutageAfter failures in a row start an outage:
// Redis is then left alone for RetryInterval at a time, so an outage costs
// requests nothing; it is logged once when it starts and once when it
// ends, and counted in metrics.
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

// RetryInterval is how long Redis is left alone, once an outage has
// started, before the next command tries it again.
const RetryInterval = time.Second

// OutageAfter is how many failed commands in a row make an outage: one
// slow answer on a busy node falls back for its own request only, but
// does not stop the others from using Redis.
const OutageAfter = 3

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
	downSince time.Time
	// down is true during an outage (read without the lock on every
	// command; changed under it).
	down atomic.Bool
	// retryAt is when, during an outage, the next command may try Redis
	// (UnixNano); commands before it are skipped.
	retryAt atomic.Int64
	// failures counts failed commands since the last success.
	failures atomic.Int64
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
	// At least the requests a pod serves at once (the default is 10 per
	// CPU): with limits on every hit makes one command, and a hit that
	// waits for a pooled connection waits for nothing useful.
	opts.PoolSize = max(opts.PoolSize, 64)
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	redis.SetLogger(debugLog{logger})
	r := &Redis{rdb: redis.NewClient(opts), prefix: prefix, timeout: timeout, logger: logger, metrics: metrics, now: time.Now}
	r.metrics.setUp(true)
	if err := r.Ping(ctx); err != nil {
		if ctx.Err() == nil {
			r.startOutage("ping", err) // at start one failure is enough to say so
		}
		return r, nil
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
	if r.down.Load() && !r.skipping() {
		_ = r.do(ctx, "ping", func(ctx context.Context) error { return r.rdb.Ping(ctx).Err() })
	}
	if r.down.Load() {
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
// during an outage (errSkipped). redis.Nil (no such key) is an answer, not
// a failure. OutageAfter failures in a row start an outage (logged once);
// the first success ends it (logged once). A caller's own cancellation is
// not counted against Redis.
func (r *Redis) do(ctx context.Context, op string, fn func(context.Context) error) error {
	if r.skipping() {
		return errSkipped
	}
	return r.try(ctx, op, fn)
}

// try is do without the skip: for a command whose failure costs more than
// its timeout (letting go of a lock that others wait for).
func (r *Redis) try(ctx context.Context, op string, fn func(context.Context) error) error {
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
	if r.failures.Load() != 0 {
		r.failures.Store(0)
	}
	if !r.down.Load() {
		return // the common case: no outage, no lock
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down.Load() {
		return
	}
	r.retryAt.Store(0)
	r.down.Store(false)
	r.metrics.setUp(true)
	r.logger.Info("redis reachable again: limits, pacing and the second cache tier are shared again",
		"outage_seconds", int(r.now().Sub(r.downSince).Seconds()))
}

func (r *Redis) fail(op string, err error) {
	r.metrics.error()
	if r.failures.Add(1) < OutageAfter && !r.down.Load() {
		return // a blip: this request did without Redis, the next tries it
	}
	r.startOutage(op, err)
}

// startOutage leaves Redis alone for RetryInterval and, unless an outage
// is already on, logs its start and counts it.
func (r *Redis) startOutage(op string, err error) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt.Store(now.Add(RetryInterval).UnixNano())
	if r.down.Load() {
		return
	}
	r.down.Store(true)
	r.downSince = now
	r.metrics.outage()
	r.metrics.setUp(false)
	r.logger.Warn("redis unreachable: limits and vPIC pacing are per process and the cache is the pod's own until it is back",
		"op", op, "err", redact.Error(err))
}

// debugLog sends go-redis's own messages (failed dials of its pool, for
// one) to the service's JSON log at debug level: the outage is reported
// once, in do, not once per connection attempt.
type debugLog struct{ logger *slog.Logger }

func (d debugLog) Printf(ctx context.Context, format string, v ...any) {
	d.logger.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
