package jobs

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// tracerName names the tracer of the jobs' spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/jobs"

// traceParent is the W3C traceparent of the span in ctx (the submitting
// request's server span), "" when there is none: stored with the job so
// that its run can link to the request (decisions.md, "Tracing (issue
// 13)").
func traceParent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// startRun starts the span of a job's run: a root span (a job outlives
// the request that submitted it, and its trace would otherwise hold the
// request open for minutes) linked to the submitting request's span when
// the job has its traceparent. The attributes are the job's id and size,
// never the companies' names or the user.
func startRun(ctx context.Context, j patent.Job) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("job.id", j.ID), attribute.Int("job.companies", len(j.Companies))),
	}
	if link, ok := linkTo(j.TraceParent); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	return otel.Tracer(tracerName).Start(ctx, "job run", opts...)
}

// linkTo is a link to the span a traceparent names; ok is false when the
// traceparent is empty or not valid.
func linkTo(traceparent string) (trace.Link, bool) {
	if traceparent == "" {
		return trace.Link{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}
