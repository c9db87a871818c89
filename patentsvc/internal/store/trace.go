package store

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"gorm.io/gorm"
	gormtracing "gorm.io/plugin/opentelemetry/tracing"
)

// newTracing is GORM's OpenTelemetry plugin: a client span per statement
// (named "select jobs", "insert analyses", ...; "gorm.Raw"/"gorm.Row" for
// raw SQL) with db.system.name, db.operation.name, db.collection.name and
// db.query.text, under the span in the statement's context.
//
//   - The statement is recorded with its placeholders, never its bound
//     values (decisions.md, "Tracing (issue 13)": no secret in an
//     attribute; a password hash or a token is a bound value).
//   - Statements outside any span (the background loops: the sweeps, the
//     schedule's tick, the queue's metrics, the pruner, the rate-limit
//     janitor, and the migrations at start) make no span: each would otherwise be a trace of
//     its own, several a second. A statement inside a job or scheduled run
//     has that run's span as parent.
//   - The plugin's connection-pool metrics are left off (the service's
//     metrics are Prometheus').
//   - db.system, the older conventions' name of db.system.name, is added
//     for backends that still read it.
func newTracing(dialect string) gorm.Plugin {
	system := "sqlite"
	if dialect == Postgres {
		system = "postgresql"
	}
	return gormtracing.NewPlugin(gormtracing.WithoutQueryVariables(), gormtracing.WithoutMetrics(),
		gormtracing.WithTracerProvider(childrenOnly{}), gormtracing.WithAttributes(attribute.String("db.system", system)))
}

// childrenOnly is the global tracer provider (read at each span, so it
// follows SetupTracing) whose tracers start a span only under a valid
// parent: without one, Start returns ctx and its invalid, non-recording
// span, which the plugin leaves alone.
type childrenOnly struct{ embedded.TracerProvider }

func (childrenOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childTracer{name: name, opts: opts}
}

type childTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (t childTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, parent
	}
	return otel.GetTracerProvider().Tracer(t.name, t.opts...).Start(ctx, spanName, opts...)
}
