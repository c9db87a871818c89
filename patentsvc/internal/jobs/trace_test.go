package jobs_test

import (
	"context"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/shared/observe/otlptest"
)

// TestRunSpanLinksSubmitter: Submit stores the submitting span's
// traceparent with the job, and the run is a root span linked to that span,
// with the analysis in the run's trace; a job submitted outside any span
// has no traceparent and its run no link.
//
// The recorder is installed as the global tracer provider; the package's
// other tests submit outside any span, and this test keeps only the runs
// of its own jobs.
func TestRunSpanLinksSubmitter(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	g := &gateBatcher{release: make(chan struct{}, 2)}
	g.release <- struct{}{}
	g.release <- struct{}{}
	w := newWorld(t, store.SQLite, g, defaults, 1, nil, slog.New(slog.DiscardHandler))
	st, r := w.st, w.runner

	reqCtx, req := otel.Tracer("test").Start(context.Background(), "POST /analyze/batch/async")
	traced, err := r.Submit(reqCtx, 1, []patent.CompanyName{"Acme"}, 1, "m")
	req.End()
	if err != nil {
		t.Fatal(err)
	}
	untraced, err := r.Submit(context.Background(), 1, []patent.CompanyName{"Beta"}, 1, "m")
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, traced.ID, patent.JobCompleted)
	waitStatus(t, st, untraced.ID, patent.JobCompleted)

	if want := "00-" + req.SpanContext().TraceID().String() + "-" + req.SpanContext().SpanID().String() + "-01"; traced.TraceParent != want {
		t.Errorf("Submit(traced).TraceParent = %q, want %q", traced.TraceParent, want)
	}
	if untraced.TraceParent != "" {
		t.Errorf("Submit(untraced).TraceParent = %q, want empty", untraced.TraceParent)
	}
	runs := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.Name() != "job run" {
			continue
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "job.id" {
				runs[kv.Value.AsString()] = s
			}
		}
	}
	run, ok := runs[traced.ID]
	if !ok {
		t.Fatalf("no job run span for job %s", traced.ID)
	}
	if run.Parent().IsValid() || run.SpanContext().TraceID() == req.SpanContext().TraceID() {
		t.Errorf("job run parent %v, trace %s: want a root span of a new trace", run.Parent(), run.SpanContext().TraceID())
	}
	if links := run.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != req.SpanContext().SpanID() {
		t.Errorf("job run links = %v, want one to the submitting span", links)
	}
	if u, ok := runs[untraced.ID]; !ok || len(u.Links()) != 0 {
		t.Errorf("untraced job's run span: found %v, links %v; want one without links", ok, u)
	}
}
