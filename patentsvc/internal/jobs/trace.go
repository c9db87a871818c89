package jobs

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
)

// tracerName names the tracer of the jobs' spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/jobs"

// traceParent is the W3C traceparent of the span in ctx (the submitting
// request's server span), "" when there is none: stored with the job so
// that its run can link to the request (decisions.md, "Tracing (issue
// 13)").
func traceParent(ctx context.Context) string { return observe.TraceParent(ctx) }

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
	if link, ok := observe.LinkTo(j.TraceParent); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	return otel.Tracer(tracerName).Start(ctx, "job run", opts...)
}
