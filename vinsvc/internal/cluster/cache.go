package cluster

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Cache is the two-tier cache: the pod's own (its bbolt file) first, Redis
// second. A hit in the pod's own tier never touches Redis; a miss there is
// looked up in Redis, and a Redis hit is copied into the pod's tier with
// the lifetime it has left. Every answer stored goes to both tiers. It
// implements the decoder's cache (decoding.Cache) and decorates the pod's
// own (LocalCache).
type Cache struct {
	local LocalCache
	r     *Redis
	ttl   time.Duration // CACHE_TTL: the lifetime of an answer with no TTL of its own
}

// Cache returns the two-tier cache over local, whose entries live for ttl
// (CACHE_TTL) unless an answer carries a shorter TTL (snapshot answers).
func (r *Redis) Cache(local LocalCache, ttl time.Duration) *Cache {
	return &Cache{local: local, r: r, ttl: ttl}
}

// LocalCache is what Cache needs of the pod's own tier, its next:
// *cache.Cache (the bbolt file) implements it. Declared here, where it is
// called, so that this adapter imports neither the cache nor the decoder.
type LocalCache interface {
	// Get returns the stored answer for a normalised VIN; ok is false when
	// there is none or it has expired. Raw is filled only when withRaw is
	// true.
	Get(ctx context.Context, v string, withRaw bool) (d vin.Decoded, ok bool, err error)
	// Put stores answers, with their raw records, in one transaction.
	Put(ctx context.Context, ds []vin.Decoded) error
}

// recordKind names the answers' keys; bump its version on any change of
// entry's shape.
const recordKind = "v1:vin"

// Get returns v from the pod's tier, else from Redis (storing it in the
// pod's tier). An error of the pod's tier is returned only when Redis has
// no answer either.
func (c *Cache) Get(ctx context.Context, v string, withRaw bool) (vin.Decoded, bool, error) {
	d, ok, localErr := c.local.Get(ctx, v, withRaw)
	if ok {
		c.r.metrics.tierHit(tierLocal)
		return d, true, nil
	}
	got, ok := c.remoteOne(ctx, v)
	if !ok {
		return vin.Decoded{}, false, localErr
	}
	c.r.metrics.tierHit(tierRedis)
	if err := c.local.Put(ctx, []vin.Decoded{got}); err != nil {
		c.r.logger.WarnContext(ctx, "cache write failed", "count", 1, "err", err.Error())
	}
	if !withRaw {
		got.Raw = nil
	}
	return got, true, nil
}

// Put stores the answers in the pod's tier and in Redis. Only the pod's
// tier's error is returned: Redis reports its own outages.
func (c *Cache) Put(ctx context.Context, ds []vin.Decoded) error {
	err := c.local.Put(ctx, ds)
	c.putRemote(ctx, ds)
	return err
}

// putRemote writes the answers to Redis in one round trip, each key
// expiring with its answer.
func (c *Cache) putRemote(ctx context.Context, ds []vin.Decoded) {
	if len(ds) == 0 {
		return
	}
	now := c.r.now()
	_ = c.r.do(ctx, "cache put", func(ctx context.Context) error {
		_, err := c.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, d := range ds {
				ttl := d.TTL
				if ttl <= 0 || ttl > c.ttl {
					ttl = c.ttl
				}
				exp := now.Add(ttl)
				val, err := encodeEntry(entry{Expires: exp.UnixMilli(), Result: d.Result, Raw: d.Raw})
				if err != nil {
					return err
				}
				p.Set(ctx, c.r.key(recordKind, d.Result.VIN), val, ttl)
			}
			return nil
		})
		return err
	})
}

// remoteOne reads v's answer from Redis. Inside a recording span it is a
// span of its own, "cache.redis.get", with cache.hit.
func (c *Cache) remoteOne(ctx context.Context, v string) (vin.Decoded, bool) {
	ctx, span := observe.StartSpan(ctx, "cache.redis.get")
	got, ok := c.remote(ctx, []string{v})[v]
	if span.IsRecording() {
		span.SetAttributes(attribute.String("db.system.name", "redis"), attribute.Bool("cache.hit", ok))
		span.End()
	}
	return got, ok
}

// remote reads the answers Redis has for vins, in one round trip. A
// missing, expired or unreadable entry is absent from the map; a Redis
// failure gives an empty map.
func (c *Cache) remote(ctx context.Context, vins []string) map[string]vin.Decoded {
	keys := make([]string, len(vins))
	for i, v := range vins {
		keys[i] = c.r.key(recordKind, v)
	}
	var vals []any
	err := c.r.do(ctx, "cache get", func(ctx context.Context) error {
		var err error
		vals, err = c.r.rdb.MGet(ctx, keys...).Result()
		return err
	})
	if err != nil {
		return nil
	}
	return c.parseAll(vins, vals)
}

// parseAll reads MGET's answer for vins: the entries that are there,
// readable and alive.
func (c *Cache) parseAll(vins []string, vals []any) map[string]vin.Decoded {
	now := c.r.now()
	out := make(map[string]vin.Decoded, len(vals))
	for i, val := range vals {
		s, ok := val.(string)
		if !ok {
			continue
		}
		if d, ok := c.parse(vins[i], s, now); ok {
			out[vins[i]] = d
		}
	}
	return out
}

// parse reads one entry for v; ok is false for an unreadable one, one for
// another VIN, or one whose lifetime has ended.
func (c *Cache) parse(v, s string, now time.Time) (vin.Decoded, bool) {
	e, err := decodeEntry([]byte(s))
	if err != nil || e.Result.VIN != v {
		c.r.logger.Warn("unreadable entry in the redis cache tier; treated as a miss", "vin", v)
		return vin.Decoded{}, false
	}
	left := time.UnixMilli(e.Expires).Sub(now)
	if left <= 0 {
		return vin.Decoded{}, false
	}
	d := vin.Decoded{Result: e.Result, Raw: e.Raw}
	if left < c.ttl {
		d.TTL = left // the pod's tier keeps it no longer than Redis does
	}
	return d, true
}
