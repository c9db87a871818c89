package cluster

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"golang.org/x/time/rate"
)

// Pacer spaces vPIC attempts so that UPSTREAM_MAX_RPS holds for the whole
// cluster: one GCRA slot every 1/maxRPS seconds in Redis, taken by
// whichever replica asks first. When Redis cannot answer, the process's own
// pacer (the same rate, for this process alone) does.
type Pacer struct {
	r     *Redis
	gcr   *redis_rate.Limiter
	limit redis_rate.Limit
	local *rate.Limiter
}

// Pacer returns the cluster's pacer for maxRPS attempts per second.
func (r *Redis) Pacer(maxRPS float64) *Pacer {
	return &Pacer{
		r:     r,
		gcr:   redis_rate.NewLimiter(r.rdb),
		limit: redis_rate.Limit{Rate: 1, Burst: 1, Period: time.Duration(float64(time.Second) / maxRPS)},
		local: rate.NewLimiter(rate.Limit(maxRPS), 1),
	}
}

// Wait blocks until this replica may make an attempt, or ctx ends.
func (p *Pacer) Wait(ctx context.Context) error {
	for {
		var res *redis_rate.Result
		err := p.r.do(ctx, "pace", func(ctx context.Context) error {
			var err error
			res, err = p.gcr.Allow(ctx, p.r.key("pace", "vpic"), p.limit)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return p.local.Wait(ctx)
		}
		if res.Allowed > 0 {
			return nil
		}
		t := time.NewTimer(res.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
