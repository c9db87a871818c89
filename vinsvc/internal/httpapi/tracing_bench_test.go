package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gatewayapis/shared/observe/otlptest"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// discardExporter is an exporter that drops every batch: the benchmark
// measures the spans' cost in the request, not a collector's.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkDecodeHitTracing measures a cache-hit decode through the whole
// router with tracing off (no provider: what SetupTracing leaves without
// an endpoint), and with a provider at parentbased_traceidratio 0 (what an
// unsampled request costs), 0.1 and 1.0 behind the real batch span
// processor, as in production. Requests carry no traceparent, so the
// ratio decides. Compare the three in one run
// (docs/performance.md has the figures):
//
//	go test -run '^$' -bench 'DecodeHitTracing' -count 6 ./internal/httpapi
func BenchmarkDecodeHitTracing(b *testing.B) {
	run := func(b *testing.B, h http.Handler) {
		req := hitRequest()
		b.ReportAllocs()
		for b.Loop() {
			serveHit(b, h, req)
		}
	}
	for _, tt := range []struct {
		name  string
		ratio float64 // < 0: tracing off
	}{{"off", -1}, {"ratio-0", 0}, {"ratio-0.1", 0.1}, {"ratio-1.0", 1.0}} {
		b.Run(tt.name, func(b *testing.B) {
			if tt.ratio >= 0 {
				useProvider(b, tt.ratio)
			}
			run(b, hitServer(b))
		})
	}
}

// BenchmarkDecodeHitTracingRatio reports the cost of tracing on the
// cache-hit path as ratios to tracing off, measured in one run: the three
// servers of BenchmarkDecodeHitTracing take turns, a block of requests
// each, so that a machine's changing load weighs on all three alike, and
// each ratio is of the median blocks. Its ns/op is a round of the three.
//
//	go test -run '^$' -bench 'DecodeHitTracingRatio' -benchtime 400x ./internal/httpapi
func BenchmarkDecodeHitTracingRatio(b *testing.B) {
	const block = 200
	servers := []http.Handler{hitServer(b)} // tracing off: built before any provider
	for _, ratio := range []float64{0.1, 1.0} {
		useProvider(b, ratio)
		servers = append(servers, hitServer(b))
	}
	req := hitRequest()
	perBlock := make([][]float64, len(servers)) // ns per request, one per block
	for b.Loop() {
		for i, h := range servers {
			start := time.Now()
			for range block {
				serveHit(b, h, req)
			}
			perBlock[i] = append(perBlock[i], float64(time.Since(start).Nanoseconds())/block)
		}
	}
	median := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
	off := median(perBlock[0])
	b.ReportMetric(off, "ns/hit-off")
	b.ReportMetric(median(perBlock[1])/off, "ratio-0.1/off")
	b.ReportMetric(median(perBlock[2])/off, "ratio-1.0/off")
}

// hitServer returns the service's router over a cache that holds the
// benchmark's VIN. NewServer reads the global tracer provider: install one
// first to trace.
func hitServer(b *testing.B) http.Handler {
	en := newEnv(b, quiet(), withLimits("default=1000000000/1m"))
	if _, err := en.dec.Decode(context.Background(), vpictest.VINHondaAccord, false); err != nil {
		b.Fatal(err)
	}
	return en.e
}

func hitRequest() *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/v1/decode?vin="+vpictest.VINHondaAccord, nil)
	req.Header.Set("X-Gateway-Proxy-Secret", secret)
	req.Header.Set("X-Gateway-User", "bench")
	return req
}

func serveHit(b *testing.B, h http.Handler, req *http.Request) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatal(rec.Code)
	}
}

// useProvider installs a sampling provider with a batch span processor
// over a discarding exporter until the end of tb, as SetupTracing would.
func useProvider(tb testing.TB, ratio float64) {
	tb.Helper()
	otlptest.RestoreGlobals(tb)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(discardExporter{}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
}
