// Package ratelimit enforces the per-plan request limits of the VIN service
// with token buckets, one per plan and subscriber.
//
// A plan "N/D" is a bucket holding at most N tokens that refills at N per D
// (so a client can spend N at once, then N per D on average). A request
// costs one token per VIN. Buckets idle long enough to be full again are
// dropped by the janitor, so memory follows the active subscribers only.
//
// With a Shared budget (Redis, WithShared) the bucket is one for the whole
// cluster; the process's own buckets answer only when the shared one
// cannot (an outage), so limits stay on, per process, while it lasts.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultPlan is the plan used when a request names none or an unknown one.
const DefaultPlan = "DEFAULT"

// JanitorInterval is how often the service's janitor (RunJanitor) drops
// idle buckets: often enough that memory follows the active subscribers,
// rarely enough that the sweep's lock goes unnoticed.
const JanitorInterval = time.Minute

// Limit is N requests per Per.
type Limit struct {
	N   int
	Per time.Duration
}

// String formats the limit as it is configured, e.g. "60/1m0s".
func (l Limit) String() string { return strconv.Itoa(l.N) + "/" + l.Per.String() }

// Plans maps upper-cased plan names to their limits. It always holds
// DefaultPlan.
type Plans map[string]Limit

// Parse reads a RATE_LIMITS value: "off", or comma-separated NAME=N/DURATION
// entries (e.g. "BASIC=60/1m,default=60/1m"). Names are case-insensitive.
// When no default entry is given, fallback is used for it. It returns nil
// Plans for "off".
func Parse(s string, fallback Limit) (Plans, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return nil, nil
	}
	plans := Plans{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, spec, ok := strings.Cut(part, "=")
		name = strings.ToUpper(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q: want NAME=N/DURATION", part)
		}
		ns, ds, ok := strings.Cut(strings.TrimSpace(spec), "/")
		if !ok {
			return nil, fmt.Errorf("entry %q: want NAME=N/DURATION", part)
		}
		n, err := strconv.Atoi(strings.TrimSpace(ns))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("entry %q: count must be a whole number of at least 1", part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("entry %q: period must be a positive duration such as 1m", part)
		}
		if _, dup := plans[name]; dup {
			return nil, fmt.Errorf("plan %s given twice", name)
		}
		plans[name] = Limit{N: n, Per: d}
	}
	if len(plans) == 0 {
		return nil, errors.New("no plans given (use \"off\" to disable limiting)")
	}
	if _, ok := plans[DefaultPlan]; !ok {
		plans[DefaultPlan] = fallback
	}
	return plans, nil
}

// String lists the plans in a stable order.
func (p Plans) String() string {
	if p == nil {
		return "off"
	}
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + p[n].String()
	}
	return strings.Join(parts, ",")
}

// Decision is the answer to one Take.
type Decision struct {
	Allowed bool
	// Limit is the plan's N, for X-RateLimit-Limit.
	Limit int
	// Remaining is the whole tokens left after this request.
	Remaining int
	// RetryAfter is how long until the request would be allowed; zero when
	// allowed.
	RetryAfter time.Duration
}

// Shared is a budget kept outside the process, one for every replica: the
// same bucket semantics (GCRA is the token bucket's equivalent), keyed by
// key. An error means it could not answer; the Limiter then answers from
// its own buckets.
type Shared interface {
	Take(ctx context.Context, key string, limit Limit, cost int) (Decision, error)
}

// Limiter holds the buckets. It is safe for concurrent use.
type Limiter struct {
	plans  Plans
	now    func() time.Time
	shared Shared // nil: the process's own buckets only

	mu      sync.Mutex
	buckets map[bucketKey]*bucket
}

// bucketKey names a bucket: a struct, not the two strings joined, so that
// finding a bucket allocates nothing.
type bucketKey struct{ plan, subscriber string }

type bucket struct {
	lim      *rate.Limiter
	limit    Limit
	lastSeen time.Time
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithShared makes s the budget of record, with the process's own buckets
// answering only when s fails.
func WithShared(s Shared) Option { return func(l *Limiter) { l.shared = s } }

// New returns a Limiter for plans (which must hold DefaultPlan).
func New(plans Plans, now func() time.Time, opts ...Option) *Limiter {
	l := &Limiter{plans: plans, now: now, buckets: make(map[bucketKey]*bucket)}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Take spends cost tokens from the bucket of (plan, subscriber), if they are
// there. The plan name is case-insensitive; an empty or unknown one uses
// the default plan. Nothing is spent when the request is refused. With a
// Shared budget the cluster's bucket decides; when it cannot answer, the
// process's own does.
func (l *Limiter) Take(ctx context.Context, plan, subscriber string, cost int) Decision {
	plan = strings.ToUpper(strings.TrimSpace(plan))
	limit, ok := l.plans[plan]
	if !ok {
		plan, limit = DefaultPlan, l.plans[DefaultPlan]
	}
	if l.shared != nil && cost <= limit.N { // more than N: takeLocal refuses it
		if d, err := l.shared.Take(ctx, plan+":"+subscriber, limit, cost); err == nil {
			return d
		}
	}
	return l.takeLocal(plan, subscriber, limit, cost)
}

// takeLocal spends from the process's own bucket.
func (l *Limiter) takeLocal(plan, subscriber string, limit Limit, cost int) Decision {
	now := l.now()
	key := bucketKey{plan, subscriber}

	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		every := limit.Per / time.Duration(limit.N)
		b = &bucket{lim: rate.NewLimiter(rate.Every(every), limit.N), limit: limit}
		b.lim.SetLimitAt(now, rate.Every(every)) // start the bucket full at now
		l.buckets[key] = b
	}
	b.lastSeen = now
	l.mu.Unlock()

	d := Decision{Limit: limit.N}
	r := b.lim.ReserveN(now, cost)
	switch {
	case !r.OK():
		// More than the bucket can ever hold: refuse for a whole period.
		d.RetryAfter = limit.Per
	case r.DelayFrom(now) > 0:
		d.RetryAfter = r.DelayFrom(now)
		r.CancelAt(now)
	default:
		d.Allowed = true
	}
	d.Remaining = int(math.Max(0, math.Floor(b.lim.TokensAt(now))))
	return d
}

// Sweep drops buckets that have been idle long enough to be full again; a
// new bucket starts full, so dropping them changes no answer.
func (l *Limiter) Sweep() int {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k, b := range l.buckets {
		if now.Sub(b.lastSeen) > b.limit.Per {
			delete(l.buckets, k)
			n++
		}
	}
	return n
}

// Len returns the number of live buckets.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// RunJanitor calls Sweep every interval until ctx ends.
func (l *Limiter) RunJanitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Sweep()
		}
	}
}
