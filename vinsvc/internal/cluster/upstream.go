package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// PollInterval is how often a replica waiting for another's vPIC call
// looks for its answer in Redis.
const PollInterval = 20 * time.Millisecond

// VPIC is what Upstream calls for the VINs whose locks it takes, its next:
// *vpic.Client implements it. Declared here, where it is called, so that
// this adapter imports neither vpic nor the decoder.
type VPIC interface {
	// Decode decodes one VIN.
	Decode(ctx context.Context, v string) (vin.Decoded, error)
	// DecodeBatch decodes up to 50 VINs in one call: one Outcome per VIN,
	// in order; a non-nil error means the whole call failed.
	DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error)
}

// Upstream makes concurrent misses of one VIN on several replicas one vPIC
// call. Before calling vPIC for a VIN a replica takes the VIN's lock in
// Redis (SET NX with an expiry); the holder stores the answer in the Redis
// tier before letting go. A replica that finds the lock taken waits for
// that answer; when it does not come within the wait (the holder is slow,
// failed, or died), it calls vPIC itself. Without Redis every replica
// calls vPIC itself, as a single process does. It implements the decoder's
// upstream (decoding.Upstream) and decorates vPIC's client (VPIC).
type Upstream struct {
	next    VPIC
	r       *Redis
	tier    *Cache
	lockTTL time.Duration
	wait    time.Duration
}

// Upstream wraps next. lockTTL bounds how long a lock outlives a holder
// that died (use the longest call, all attempts included); wait is how long
// a replica waits for another's answer before calling vPIC itself.
func (r *Redis) Upstream(next VPIC, tier *Cache, lockTTL, wait time.Duration) *Upstream {
	return &Upstream{next: next, r: r, tier: tier, lockTTL: lockTTL, wait: wait}
}

// Decode decodes one VIN.
func (u *Upstream) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	out := u.resolve(ctx, []string{v}, func(ctx context.Context, vins []string) []vin.Outcome {
		d, err := u.next.Decode(ctx, vins[0])
		return []vin.Outcome{{Decoded: d, Err: err}}
	})[0]
	return out.Decoded, out.Err
}

// DecodeBatch decodes up to 50 VINs, calling vPIC (in one batch) only for
// those no other replica is fetching. A failed call is reported on each of
// its VINs; the error result is always nil.
func (u *Upstream) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	return u.resolve(ctx, vins, func(ctx context.Context, vins []string) []vin.Outcome {
		outs, err := u.next.DecodeBatch(ctx, vins)
		if err != nil {
			outs = make([]vin.Outcome, len(vins))
			for i := range outs {
				outs[i].Err = err
			}
		}
		return outs
	}), nil
}

// call asks vPIC for vins, one Outcome per VIN in order.
type call func(ctx context.Context, vins []string) []vin.Outcome

// resolve calls vPIC for the VINs whose lock it takes, and meanwhile waits
// for the others' answers; the VINs still unanswered after the wait are
// called for too.
func (u *Upstream) resolve(ctx context.Context, vins []string, fetch call) []vin.Outcome {
	token := newToken()
	owned := u.lock(ctx, vins, token)
	outs := make([]vin.Outcome, len(vins))
	var mine, theirs []int
	for i := range vins {
		if owned[i] {
			mine = append(mine, i)
		} else {
			theirs = append(theirs, i)
		}
	}
	// A holder may have stored its answer and let go between the caller's
	// cache lookup and this lock: look once more before calling.
	if len(mine) > 0 {
		got := u.tier.remote(ctx, pick(vins, mine))
		var need, done []int
		for _, i := range mine {
			if d, ok := got[vins[i]]; ok {
				outs[i] = vin.Outcome{Decoded: d, Cached: true}
				done = append(done, i)
			} else {
				need = append(need, i)
			}
		}
		if len(done) > 0 {
			u.unlock(ctx, pick(vins, done), token)
		}
		mine = need
	}
	var wg sync.WaitGroup
	if len(mine) > 0 {
		wg.Go(func() {
			u.fetchInto(ctx, vins, mine, outs, fetch)
			u.unlock(context.WithoutCancel(ctx), pick(vins, mine), token)
		})
	}
	if len(theirs) > 0 {
		got := u.await(ctx, pick(vins, theirs))
		var left []int
		for _, i := range theirs {
			if d, ok := got[vins[i]]; ok {
				outs[i] = vin.Outcome{Decoded: d, Cached: true}
				continue
			}
			left = append(left, i)
		}
		if len(left) > 0 {
			u.fetchInto(ctx, vins, left, outs, fetch)
		}
	}
	wg.Wait()
	return outs
}

// fetchInto calls vPIC for vins[idx...], fills outs and stores the answers
// in Redis, where waiting replicas find them.
func (u *Upstream) fetchInto(ctx context.Context, vins []string, idx []int, outs []vin.Outcome, fetch call) {
	got := fetch(ctx, pick(vins, idx))
	var ok []vin.Decoded
	for j, i := range idx {
		outs[i] = got[j]
		if got[j].Err == nil {
			ok = append(ok, got[j].Decoded)
		}
	}
	u.tier.putRemote(ctx, ok)
}

// lock takes the VINs' locks in one round trip; owned[i] is true for each
// taken. When Redis cannot answer, every VIN counts as owned: this replica
// calls vPIC itself.
func (u *Upstream) lock(ctx context.Context, vins []string, token string) []bool {
	owned := make([]bool, len(vins))
	cmds := make([]*redis.BoolCmd, len(vins))
	err := u.r.do(ctx, "lock", func(ctx context.Context) error {
		_, err := u.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, v := range vins {
				cmds[i] = p.SetNX(ctx, u.r.key("lock", v), token, u.lockTTL)
			}
			return nil
		})
		return err
	})
	for i := range owned {
		owned[i] = err != nil || cmds[i].Val()
	}
	return owned
}

// unlockScript deletes each key that still holds this holder's token, so
// a lock that expired and was taken by another replica is left alone.
var unlockScript = redis.NewScript(`
for i, k in ipairs(KEYS) do
  if redis.call("GET", k) == ARGV[1] then redis.call("DEL", k) end
end
return 0`)

// unlock lets go of the VINs' locks. It tries even during an outage's
// quiet second: a lock left behind makes other replicas wait for it.
func (u *Upstream) unlock(ctx context.Context, vins []string, token string) {
	keys := make([]string, len(vins))
	for i, v := range vins {
		keys[i] = u.r.key("lock", v)
	}
	_ = u.r.try(ctx, "unlock", func(ctx context.Context) error {
		return unlockScript.Run(ctx, u.r.rdb, keys, token).Err()
	})
}

// await polls Redis for the answers of vins, which other replicas are
// fetching, until each has an answer or its lock is gone, or the wait is
// over. It returns the answers found.
func (u *Upstream) await(ctx context.Context, vins []string) map[string]vin.Decoded {
	found := make(map[string]vin.Decoded, len(vins))
	pending := vins
	deadline := time.NewTimer(u.wait)
	defer deadline.Stop()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return found
		case <-deadline.C:
			u.r.metrics.lockWait("timeout")
			return found
		case <-tick.C:
		}
		var next []string
		held, got := u.peek(ctx, pending)
		for _, v := range pending {
			if d, ok := got[v]; ok {
				found[v] = d
			} else if held[v] {
				next = append(next, v)
			} // neither: the holder let go without an answer; call for it
		}
		pending = next
	}
	if len(found) == len(vins) {
		u.r.metrics.lockWait("filled")
	} else {
		u.r.metrics.lockWait("released")
	}
	return found
}

// peek reads, in one round trip, which of the VINs' locks are still taken
// and then the answers stored for them. The order matters: a holder stores
// its answer before it lets go, so a lock seen gone means its answer, if
// there is one, is seen. When Redis cannot answer, no lock is held and no
// answer found: the caller stops waiting.
func (u *Upstream) peek(ctx context.Context, vins []string) (held map[string]bool, found map[string]vin.Decoded) {
	locks, recs := make([]string, len(vins)), make([]string, len(vins))
	for i, v := range vins {
		locks[i], recs[i] = u.r.key("lock", v), u.r.key(recordKind, v)
	}
	var lockVals, recVals *redis.SliceCmd
	if err := u.r.do(ctx, "lock check", func(ctx context.Context) error {
		_, err := u.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			lockVals, recVals = p.MGet(ctx, locks...), p.MGet(ctx, recs...)
			return nil
		})
		return err
	}); err != nil {
		return nil, nil
	}
	held = make(map[string]bool, len(vins))
	for i, val := range lockVals.Val() {
		held[vins[i]] = val != nil
	}
	return held, u.tier.parseAll(vins, recVals.Val())
}

func pick(vins []string, idx []int) []string {
	out := make([]string, len(idx))
	for j, i := range idx {
		out[j] = vins[i]
	}
	return out
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
