package cache_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// TestGetSpans: inside a recording span, Get (a read of the file) and Put
// are spans of their own with cache.hit and cache.memory; a hit from
// memory is an attribute of the caller's span instead; outside a
// recording span, a hit from memory still allocates nothing.
func TestGetSpans(t *testing.T) {
	c := mustOpenTemp(t, clocktest.New(t0))
	const v = "1HGCM82633A004352"

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, ok, err := c.Get(ctx, v, false); ok || err != nil {
		t.Fatalf("Get before Put = %v, %v; want a miss", ok, err)
	}
	if err := c.Put(ctx, []vin.Decoded{sampleDecoded(v)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(ctx, v, false); !ok || err != nil {
		t.Fatalf("Get after Put = %v, %v; want a hit", ok, err)
	}
	if d, ok, err := c.Get(ctx, v, true); !ok || err != nil || d.Raw == nil {
		t.Fatalf("Get with raw after Put = %v, %v; want a hit from the file", ok, err)
	}
	parent.End()

	type want struct {
		name        string
		hit, memory bool
	}
	var got []want
	for _, s := range rec.Ended() {
		if s.Name() == "request" {
			if !slices.Contains(s.Attributes(), attribute.Bool("vinsvc.cache.memory_hit", true)) {
				t.Errorf("caller's span attributes = %v, want vinsvc.cache.memory_hit", s.Attributes())
			}
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the caller's span", s.Name())
		}
		w := want{name: s.Name()}
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "cache.hit":
				w.hit = kv.Value.AsBool()
			case "cache.memory":
				w.memory = kv.Value.AsBool()
			}
		}
		got = append(got, w)
	}
	wantSpans := []want{{"cache.local.get", false, false}, {"cache.local.put", false, false}, {"cache.local.get", true, false}}
	if diff := cmp.Diff(wantSpans, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}

	bg := context.Background()
	if allocs := testing.AllocsPerRun(100, func() { _, _, _ = c.Get(bg, v, false) }); allocs != 0 {
		t.Errorf("a memory hit outside a span allocates %v times, want 0", allocs)
	}
}
