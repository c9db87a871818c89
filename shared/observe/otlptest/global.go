package otlptest

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// RestoreGlobals puts OpenTelemetry's global tracer provider and
// propagator back at the end of tb, for a test that sets them (as
// SetupTracing does in a service). Tests that use it must not be
// parallel.
func RestoreGlobals(tb testing.TB) {
	tb.Helper()
	tp, prop := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	tb.Cleanup(func() {
		// Setting the global default to itself logs a complaint.
		if reflect.TypeOf(otel.GetTracerProvider()) != reflect.TypeOf(tp) || otel.GetTracerProvider() != tp {
			otel.SetTracerProvider(tp)
		}
		if reflect.TypeOf(otel.GetTextMapPropagator()) != reflect.TypeOf(prop) {
			otel.SetTextMapPropagator(prop)
		}
	})
}

// UseRecorder installs, as the global tracer provider until the end of tb,
// one that samples everything and records every span, with the W3C
// propagator (tracecontext and baggage, as SetupTracing installs), and
// returns the recorder. Code that reads the globals when it is built (a
// TracingTransport, TracingScope) must be built afterwards.
func UseRecorder(tb testing.TB) *tracetest.SpanRecorder {
	tb.Helper()
	RestoreGlobals(tb)
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return rec
}
