package cluster

import (
	"context"

	"github.com/go-redis/redis_rate/v10"

	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

// Limits is the cluster's rate-limit budget: one GCRA bucket per plan and
// subscriber in Redis (go-redis/redis_rate), shared by every replica. It
// implements ratelimit.Shared.
type Limits struct {
	r   *Redis
	gcr *redis_rate.Limiter
}

// Limits returns the shared rate-limit budget. Its decisions go to Redis
// in batches (autoPipeline).
func (r *Redis) Limits() *Limits {
	return &Limits{r: r, gcr: redis_rate.NewLimiter(&autoPipeline{Client: r.rdb, timeout: r.timeout})}
}

// Take spends cost from the bucket of key, which holds at most limit.N and
// refills limit.N per limit.Per: the same bucket as the process's own
// (ratelimit's token bucket), kept in Redis. A refused request spends
// nothing.
func (l *Limits) Take(ctx context.Context, key string, limit ratelimit.Limit, cost int) (ratelimit.Decision, error) {
	var res *redis_rate.Result
	err := l.r.do(ctx, "rate limit", func(ctx context.Context) error {
		var err error
		res, err = l.gcr.AllowN(ctx, l.r.key("limit", key), redis_rate.Limit{Rate: limit.N, Burst: limit.N, Period: limit.Per}, cost)
		return err
	})
	if err != nil {
		return ratelimit.Decision{}, err
	}
	d := ratelimit.Decision{Allowed: res.Allowed > 0, Limit: limit.N, Remaining: max(res.Remaining, 0)}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
	}
	return d, nil
}
