package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/cluster"
	"github.com/gatewayapis/vinsvc/internal/cluster/redistest"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

const cacheTTL = 90 * 24 * time.Hour

// replica is one pod's view: its Redis connection with metrics and logs,
// and its own bbolt file.
type replica struct {
	r       *cluster.Redis
	metrics *cluster.Metrics
	reg     *prometheus.Registry
	logs    *syncbuf.Buffer
	local   *cache.Cache
	tier    *cluster.Cache
}

func newReplica(t *testing.T, url, prefix string, timeout time.Duration) *replica {
	t.Helper()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	reg := prometheus.NewRegistry()
	m := cluster.NewMetrics(reg)
	r, err := cluster.Open(context.Background(), url, prefix, timeout, logger, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	local, err := cache.Open(filepath.Join(t.TempDir(), "vincache.db"), cacheTTL, logger, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	return &replica{r: r, metrics: m, reg: reg, logs: logs, local: local, tier: r.Cache(local, cacheTTL)}
}

func shared(t *testing.T) (url, prefix string) {
	url = redistest.URL(t)
	return url, redistest.Prefix(t, url)
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// sharedLimiters returns n replicas' limiters for spec on the test Redis.
func sharedLimiters(t *testing.T, spec string, n int) []*ratelimit.Limiter {
	t.Helper()
	url, prefix := shared(t)
	var limiters []*ratelimit.Limiter
	for range n {
		limiters = append(limiters, limiterOn(t, newReplica(t, url, prefix, time.Second), spec))
	}
	return limiters
}

// TestLimitsAcrossReplicas: a plan of 30/1m is one budget for three
// replicas: exactly 30 of 60 requests spread over them pass, and a refusal
// carries the time until the next token.
func TestLimitsAcrossReplicas(t *testing.T) {
	limiters := sharedLimiters(t, "MEGA=30/1m", 3)
	allowed := 0
	var last ratelimit.Decision
	for i := range 60 {
		d := limiters[i%3].Take(context.Background(), "mega", "alice", 1)
		if d.Allowed {
			allowed++
		} else {
			last = d
		}
		if d.Limit != 30 {
			t.Fatalf("request %d: limit %d, want 30", i, d.Limit)
		}
	}
	if allowed != 30 {
		t.Errorf("%d of 60 allowed across 3 replicas, want exactly 30", allowed)
	}
	if last.Remaining != 0 || last.RetryAfter <= 0 || last.RetryAfter > 2*time.Second {
		t.Errorf("refusal = %+v, want 0 remaining and about 2 s to wait (60 s / 30)", last)
	}
	// Another subscriber has a budget of their own.
	if d := limiters[0].Take(context.Background(), "MEGA", "bob", 5); !d.Allowed || d.Remaining != 25 {
		t.Errorf("bob's first request = %+v, want allowed with 25 left", d)
	}
}

// TestPacerAcrossReplicas: UPSTREAM_MAX_RPS is the cluster's: after one
// replica's attempt, another's waits for the next slot.
func TestPacerAcrossReplicas(t *testing.T) {
	url, prefix := shared(t)
	a, b := newReplica(t, url, prefix, time.Second), newReplica(t, url, prefix, time.Second)
	pa, pb := a.r.Pacer(0.5), b.r.Pacer(0.5) // one attempt every 2 s
	if err := pa.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := pb.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second replica's attempt within the slot: %v, want it to wait past its deadline", err)
	}
}

func decoded(v string, ttl time.Duration) vin.Decoded {
	mk := "HONDA"
	return vin.Decoded{
		Result: vin.Result{VIN: v, Make: &mk, ErrorCode: "0"},
		Raw:    json.RawMessage(`{"VIN":"` + v + `","Make":"HONDA"}`),
		TTL:    ttl,
	}
}

// TestTierSharesAnswers: an answer one replica stored is a hit on another
// (copied into its own file, raw record included); a snapshot answer keeps
// its short lifetime in Redis and in the copy.
func TestTierSharesAnswers(t *testing.T) {
	url, prefix := shared(t)
	a, b := newReplica(t, url, prefix, time.Second), newReplica(t, url, prefix, time.Second)
	ctx := context.Background()
	const v, snapV = "1HGCM82633A004352", "5YJ3E1EA7KF317000"
	snap := decoded(snapV, time.Hour)
	snap.Result.Source = vin.SourceSnapshot
	if err := a.tier.Put(ctx, []vin.Decoded{decoded(v, 0), snap}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.tier.Get(ctx, v, true)
	if err != nil || !ok || *got.Result.Make != "HONDA" || !strings.Contains(string(got.Raw), "HONDA") {
		t.Fatalf("replica b Get = %+v, %v, %v; want a's answer with its raw record", got, ok, err)
	}
	if _, ok, _ := b.local.Get(ctx, v, true); !ok {
		t.Error("a Redis hit was not copied into the replica's own file")
	}
	got, ok, _ = b.tier.Get(ctx, snapV, false)
	if !ok || got.Result.Source != vin.SourceSnapshot || got.Raw != nil {
		t.Fatalf("snapshot answer on b = %+v, %v; want it with its source, without raw", got, ok)
	}
	if hits := counter(t, b.reg, "vinsvc_cache_tier_hits_total", "tier", "redis"); hits != 2 {
		t.Errorf("redis tier hits on b = %v, want 2", hits)
	}
	// Redis keeps the snapshot answer for its own TTL, not CACHE_TTL.
	rdb := rawClient(t, url)
	if ttl := rdb.PTTL(ctx, prefix+"v1:vin:"+snapV).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("snapshot answer's Redis TTL = %v, want at most 1h", ttl)
	}
	if ttl := rdb.PTTL(ctx, prefix+"v1:vin:"+v).Val(); ttl < cacheTTL-time.Minute {
		t.Errorf("vPIC answer's Redis TTL = %v, want CACHE_TTL", ttl)
	}
}

// TestLocalHitNeverTouchesRedis: a hit in the pod's own file answers
// without a Redis command, so an unreachable Redis costs it nothing.
func TestLocalHitNeverTouchesRedis(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", 50*time.Millisecond)
	ctx := context.Background()
	const v = "1HGCM82633A004352"
	if err := rep.local.Put(ctx, []vin.Decoded{decoded(v, 0)}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for range 100 {
		if _, ok, err := rep.tier.Get(ctx, v, false); !ok || err != nil {
			t.Fatalf("local hit: %v, %v", ok, err)
		}
	}
	if n := counter(t, rep.reg, "vinsvc_redis_errors_total"); n != 0 {
		t.Errorf("%v Redis errors on local hits, want none (no Redis command)", n)
	}
}

// countingUpstream is vPIC as the lock sees it: it counts calls and takes
// latency per call. A call is announced on called, when it is not nil.
type countingUpstream struct {
	calls   atomic.Int64
	vins    atomic.Int64
	latency time.Duration
	fail    error
	called  chan struct{}
}

func (c *countingUpstream) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	outs, err := c.DecodeBatch(ctx, []string{v})
	if err != nil {
		return vin.Decoded{}, err
	}
	return outs[0].Decoded, outs[0].Err
}

func (c *countingUpstream) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	c.calls.Add(1)
	c.vins.Add(int64(len(vins)))
	if c.called != nil {
		c.called <- struct{}{}
	}
	select {
	case <-time.After(c.latency):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.fail != nil {
		return nil, c.fail
	}
	outs := make([]vin.Outcome, len(vins))
	for i, v := range vins {
		outs[i] = vin.Outcome{Decoded: decoded(v, 0)}
	}
	return outs, nil
}

// TestConcurrentMissesOneCall: 20 concurrent misses of one VIN on three
// replicas make one vPIC call; every one gets the answer.
func TestConcurrentMissesOneCall(t *testing.T) {
	url, prefix := shared(t)
	up := &countingUpstream{latency: 200 * time.Millisecond}
	var reps []*cluster.Upstream
	for range 3 {
		rep := newReplica(t, url, prefix, time.Second)
		reps = append(reps, rep.r.Upstream(up, rep.tier, 10*time.Second, 5*time.Second))
	}
	const v = "1HGCM82633A004352"
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			d, err := reps[i%3].Decode(context.Background(), v)
			if err == nil && d.Result.VIN != v {
				err = fmt.Errorf("answer for %q", d.Result.VIN)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := up.calls.Load(); n != 1 {
		t.Errorf("%d vPIC calls for 20 concurrent misses on 3 replicas, want 1", n)
	}
}

// TestBatchOverlapOneCallPerVIN: two replicas' batches that share VINs ask
// vPIC for each VIN once.
func TestBatchOverlapOneCallPerVIN(t *testing.T) {
	url, prefix := shared(t)
	up := &countingUpstream{latency: 200 * time.Millisecond}
	a, b := newReplica(t, url, prefix, time.Second), newReplica(t, url, prefix, time.Second)
	ua := a.r.Upstream(up, a.tier, 10*time.Second, 5*time.Second)
	ub := b.r.Upstream(up, b.tier, 10*time.Second, 5*time.Second)
	var first, second []string
	for i := range 10 {
		v := fmt.Sprintf("1HGCM82633A%06d", i)
		first = append(first, v)
		if i >= 5 {
			second = append(second, v)
		}
	}
	second = append(second, "1HGCM82633A999999")
	var wg sync.WaitGroup
	for _, job := range []struct {
		u    *cluster.Upstream
		vins []string
	}{{ua, first}, {ub, second}} {
		wg.Go(func() {
			outs, err := job.u.DecodeBatch(context.Background(), job.vins)
			for i, o := range outs {
				if err != nil || o.Err != nil || o.Result.VIN != job.vins[i] {
					t.Errorf("outcome %d = %+v, %v", i, o, err)
				}
			}
		})
	}
	wg.Wait()
	if n := up.vins.Load(); n != 11 {
		t.Errorf("vPIC asked for %d VINs, want 11 (each distinct VIN once)", n)
	}
}

// TestFailedHolderReleasesWaiters: when the holder's call fails it lets
// go at once; a waiter does not sit out the whole wait but calls vPIC
// itself.
func TestFailedHolderReleasesWaiters(t *testing.T) {
	url, prefix := shared(t)
	bad := &countingUpstream{latency: 100 * time.Millisecond, fail: errors.New("vPIC 503"), called: make(chan struct{}, 1)}
	good := &countingUpstream{}
	a, b := newReplica(t, url, prefix, time.Second), newReplica(t, url, prefix, time.Second)
	ua := a.r.Upstream(bad, a.tier, 10*time.Second, time.Minute)
	ub := b.r.Upstream(good, b.tier, 10*time.Second, time.Minute)
	const v = "1HGCM82633A004352"
	done := make(chan error, 1)
	go func() { _, err := ua.Decode(context.Background(), v); done <- err }()
	select {
	case <-bad.called: // a holds the lock: it calls vPIC
	case <-time.After(20 * time.Second):
		t.Fatal("the holder never called vPIC")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := ub.Decode(ctx, v)
	if err != nil || d.Result.VIN != v {
		t.Fatalf("waiter: %+v, %v (it should call vPIC itself once the holder failed)", d, err)
	}
	if err := <-done; err == nil {
		t.Error("holder's failure not reported")
	}
	if good.calls.Load() != 1 {
		t.Errorf("waiter made %d calls, want 1", good.calls.Load())
	}
	if n := counter(t, b.reg, "vinsvc_upstream_lock_waits_total", "outcome", "released"); n != 1 {
		t.Errorf("lock waits released = %v, want 1", n)
	}
}

// rawClient is a plain client, to look at what the service stored.
func rawClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLimitsConcurrentExact: decisions of concurrent requests travel to
// Redis in shared pipelines; 300 requests at once over three replicas on
// a plan of 100/1m still let exactly 100 through.
func TestLimitsConcurrentExact(t *testing.T) {
	limiters := sharedLimiters(t, "MEGA=100/1m", 3)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			if limiters[i%3].Take(context.Background(), "MEGA", "alice", 1).Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 100 {
		t.Errorf("%d of 300 concurrent requests allowed with 100/1m, want exactly 100", n)
	}
}
