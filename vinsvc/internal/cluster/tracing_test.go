package cluster_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewayapis/vinsvc/internal/cluster/redistest"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// TestTierSpans: inside a recording span, a miss in the pod's file is a
// cache.local.get span with cache.hit false and the Redis lookup a
// cache.redis.get span with cache.hit true, both children of the caller's.
func TestTierSpans(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newReplica(t, srv.URL(), "p:", time.Second), newReplica(t, srv.URL(), "p:", time.Second)
	const v = "1HGCM82633A004352"
	if err := a.tier.Put(context.Background(), []vin.Decoded{decoded(v, 0)}); err != nil {
		t.Fatal(err)
	}

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, ok, err := b.tier.Get(ctx, v, false); !ok || err != nil {
		t.Fatalf("Get = %v, %v; want a Redis hit", ok, err)
	}
	parent.End()

	want := map[string]bool{"cache.local.get": false, "cache.redis.get": true}
	for _, s := range rec.Ended() {
		hit, ok := want[s.Name()]
		if !ok {
			continue
		}
		delete(want, s.Name())
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the caller's span", s.Name())
		}
		var got attribute.Value
		for _, kv := range s.Attributes() {
			if kv.Key == "cache.hit" {
				got = kv.Value
			}
		}
		if got.Type() != attribute.BOOL || got.AsBool() != hit {
			t.Errorf("%s cache.hit = %v, want %v", s.Name(), got.String(), hit)
		}
	}
	if len(want) != 0 {
		t.Errorf("spans missing: %v", want)
	}
}
