package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/cluster"
	"github.com/gatewayapis/vinsvc/internal/cluster/redistest"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// The fault tests run on a redis-server of their own, never on the shared
// one: they stop it, slow it down and break its keys.

// faultTimeout is the tests' REDIS_TIMEOUT: long enough that a busy
// machine does not turn an answering Redis into a timeout, short against
// the 5 s a sleeping Redis takes.
const faultTimeout = 250 * time.Millisecond

func limiterOn(t *testing.T, rep *replica, spec string) *ratelimit.Limiter {
	t.Helper()
	plans, err := ratelimit.Parse(spec, ratelimit.Limit{N: 60, Per: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return ratelimit.New(plans, time.Now, ratelimit.WithShared(rep.r.Limits()))
}

// TestOutageFallsBackAndRecovers: Redis killed under load: every request
// is still answered, by the process's own bucket; the outage is logged
// once, counted, and shown; once Redis is back the cluster's budget
// decides again and the end is logged once.
func TestOutageFallsBackAndRecovers(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	clk := clocktest.New(time.Now()) // the outage's quiet interval passes when the test says so
	cluster.SetClock(rep.r, clk.Now)
	lim := limiterOn(t, rep, "BASIC=5/1m")
	ctx := context.Background()
	for range 5 {
		lim.Take(ctx, "BASIC", "alice", 1) // the cluster's budget is spent
	}
	if d := lim.Take(ctx, "BASIC", "alice", 1); d.Allowed {
		t.Fatal("sixth request allowed with Redis up")
	}
	srv.Stop()
	for i := range 200 {
		d := lim.Take(ctx, "BASIC", "alice", 1)
		if want := i < 5; d.Allowed != want { // the process's own bucket, full at the outage
			t.Fatalf("request %d during the outage: allowed %v, want %v", i, d.Allowed, want)
		}
	}
	if got := rep.r.State(ctx); got != cluster.StateUnreachable {
		t.Errorf("state during the outage = %q", got)
	}
	if n := strings.Count(rep.logs.String(), "redis unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once\n%s", n, rep.logs)
	}
	if counter(t, rep.reg, "vinsvc_redis_up") != 0 || counter(t, rep.reg, "vinsvc_redis_outages_total") != 1 ||
		counter(t, rep.reg, "vinsvc_redis_errors_total") < 1 {
		t.Error("outage not reflected in vinsvc_redis_up / _outages_total / _errors_total")
	}

	srv.Restart() // empty: the budget starts again
	clk.Advance(cluster.RetryInterval - time.Nanosecond)
	if got := rep.r.State(ctx); got != cluster.StateUnreachable {
		t.Fatalf("state within the quiet interval, Redis back = %q, want %q (Redis left alone)", got, cluster.StateUnreachable)
	}
	clk.Advance(time.Nanosecond)
	if got := rep.r.State(ctx); got != cluster.StateOK {
		t.Fatalf("state after Redis came back = %q", got)
	}
	allowed := 0
	for range 8 {
		if lim.Take(ctx, "BASIC", "alice", 1).Allowed {
			allowed++
		}
	}
	if allowed != 5 {
		t.Errorf("%d of 8 allowed after the outage, want the cluster's 5", allowed)
	}
	if n := strings.Count(rep.logs.String(), "redis reachable again"); n != 1 {
		t.Errorf("end of outage logged %d times, want once\n%s", n, rep.logs)
	}
	if counter(t, rep.reg, "vinsvc_redis_up") != 1 {
		t.Error("vinsvc_redis_up not back to 1")
	}
}

// TestSlowRedisNeverHoldsARequest: a Redis that stops answering (DEBUG
// SLEEP) costs a request at most the command timeout; the request is
// answered by the process's own bucket and cache.
func TestSlowRedisNeverHoldsARequest(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	lim := limiterOn(t, rep, "BASIC=5/1m")
	ctx := context.Background()
	srv.Sleep(5 * time.Second)
	began := time.Now()
	d := lim.Take(ctx, "BASIC", "alice", 1)
	_, ok, err := rep.tier.Get(ctx, "1HGCM82633A004352", false)
	putErr := rep.tier.Put(ctx, []vin.Decoded{decoded("1HGCM82633A004352", 0)})
	took := time.Since(began)
	if !d.Allowed || ok || err != nil || putErr != nil {
		t.Errorf("with Redis asleep: take %+v, get ok=%v err=%v, put %v; want answers from the process alone", d, ok, err, putErr)
	}
	// Three calls, each bounded by one Redis timeout. The bound is loose
	// (Redis sleeps 5 s) so a busy machine cannot fail it.
	if took > 3*time.Second {
		t.Errorf("requests took %v with Redis asleep for 5 s; want each bounded by REDIS_TIMEOUT", took)
	}
	if _, ok, _ := rep.local.Get(ctx, "1HGCM82633A004352", false); !ok {
		t.Error("the answer was not stored in the pod's own file while Redis slept")
	}
}

// TestRedisDownAtStart: a Redis that does not answer at start is no
// reason not to start; the service runs alone and says so.
func TestRedisDownAtStart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	if got := rep.r.State(context.Background()); got != cluster.StateUnreachable {
		t.Errorf("state = %q, want unreachable", got)
	}
	lim := limiterOn(t, rep, "BASIC=2/1m")
	if d := lim.Take(context.Background(), "BASIC", "a", 1); !d.Allowed || d.Limit != 2 {
		t.Errorf("take = %+v, want allowed by the process's bucket", d)
	}
	if !strings.Contains(rep.logs.String(), "redis unreachable") {
		t.Errorf("start-up outage not logged:\n%s", rep.logs)
	}
}

// TestRedisErrorAnswers: Redis answering errors (here WRONGTYPE on a
// broken bucket key) is an outage like any other: the request is answered
// by the process's own bucket.
func TestRedisErrorAnswers(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	rawClient(t, srv.URL()).HSet(context.Background(), "rate:p:limit:BASIC:alice", "broken", "1")
	lim := limiterOn(t, rep, "BASIC=2/1m")
	for i := range 3 {
		if d := lim.Take(context.Background(), "BASIC", "alice", 1); d.Allowed != (i < 2) {
			t.Errorf("request %d: %+v", i, d)
		}
	}
	if counter(t, rep.reg, "vinsvc_redis_errors_total") < 1 {
		t.Error("error answer not counted")
	}
}

// TestUpstreamWithoutRedis: with Redis gone, the lock is not taken and
// every replica calls vPIC itself.
func TestUpstreamWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	up := &countingUpstream{}
	u := rep.r.Upstream(up, rep.tier, time.Minute, time.Minute)
	srv.Stop()
	outs, err := u.DecodeBatch(context.Background(), []string{"1HGCM82633A004352", "5YJ3E1EA7KF317000"})
	if err != nil || outs[0].Err != nil || outs[1].Err != nil || up.calls.Load() != 1 {
		t.Errorf("batch without Redis: %+v, %v, %d calls; want one vPIC call answering both", outs, err, up.calls.Load())
	}
}

// TestScriptFlushed: a Redis that lost the rate-limit script (SCRIPT
// FLUSH, a restart with the same data, a failover) gets it again through
// EVAL; no request notices.
func TestScriptFlushed(t *testing.T) {
	srv := redistest.Start(t)
	rep := newReplica(t, srv.URL(), "p:", faultTimeout)
	lim := limiterOn(t, rep, "BASIC=3/1m")
	ctx := context.Background()
	lim.Take(ctx, "BASIC", "alice", 1)
	if err := rawClient(t, srv.URL()).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} {
		if d := lim.Take(ctx, "BASIC", "alice", 1); d.Allowed != want {
			t.Errorf("request %d after SCRIPT FLUSH: %+v, want allowed %v (the shared budget)", i+2, d, want)
		}
	}
	if n := counter(t, rep.reg, "vinsvc_redis_errors_total"); n != 0 {
		t.Errorf("%v Redis errors after SCRIPT FLUSH, want none", n)
	}
}
