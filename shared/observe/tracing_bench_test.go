package observe_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/observe/otlptest"
	"github.com/gatewayapis/shared/requestid"
)

type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracingScope measures what the server span adds to the request
// id middleware per request: never sampled (what nine requests in ten pay
// at a ratio of 0.1), always sampled, and tracing off.
//
//	go test -run '^$' -bench TracingScope ./observe
func BenchmarkTracingScope(b *testing.B) {
	for _, tt := range []struct {
		name    string
		sampler sdktrace.Sampler // nil: tracing off
	}{{"off", nil}, {"unsampled", sdktrace.NeverSample()}, {"sampled", sdktrace.AlwaysSample()}} {
		b.Run(tt.name, func(b *testing.B) {
			otlptest.RestoreGlobals(b)
			if tt.sampler != nil {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}), sdktrace.WithSampler(tt.sampler))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				otel.SetTracerProvider(tp)
				otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
			}
			e := echo.New()
			h := requestid.Middleware(slog.New(slog.DiscardHandler), observe.TracingScope())(func(c echo.Context) error {
				return c.NoContent(http.StatusNoContent)
			})
			req := httptest.NewRequest(http.MethodGet, "/v1/decode", nil)
			req.Header.Set(requestid.Header, "fixed-id")
			w := httptest.NewRecorder()
			c := e.NewContext(req, w)
			b.ReportAllocs()
			for b.Loop() {
				c.Reset(req, w)
				_ = h(c)
			}
		})
	}
}
