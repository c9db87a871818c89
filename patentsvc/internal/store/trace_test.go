package store_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/shared/observe/otlptest"
)

// TestStatementSpans checks the statements' spans: one per statement under
// the span in the context, with the SQL's placeholders and never its bound
// values, none for a statement outside a span; and that a job keeps the
// traceparent it was created with.
//
// The recorder is installed as the global tracer provider; the other tests
// of the package make no span (their statements run outside any span).
func TestStatementSpans(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		ctx, parent := otel.Tracer("test").Start(context.Background(), "parent "+t.Name())
		j, err := s.Jobs().CreateJob(ctx, patent.Job{ID: "job-" + strings.ReplaceAll(t.Name(), "/", "-"), Companies: []string{"Secret Corp"},
			MaxWorkers: 1, Model: "m", TraceParent: traceparent}, 0, 0)
		parent.End()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Jobs().Job(context.Background(), j.ID); err != nil { // outside any span
			t.Fatal(err)
		}
		var insert sdktrace.ReadOnlySpan
		for _, sp := range rec.Ended() {
			if sp.Parent().SpanID() == parent.SpanContext().SpanID() && sp.Name() == "insert jobs" {
				insert = sp
			}
			if sp.Name() == "select jobs" {
				t.Errorf("a statement outside any span made span %q", sp.Name())
			}
		}
		if insert == nil {
			t.Fatal("no insert jobs span under the parent")
		}
		attrs := map[string]string{}
		for _, kv := range insert.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		q := attrs["db.query.text"]
		if !strings.Contains(q, "?") && !strings.Contains(q, "$1") || strings.Contains(q, "Secret Corp") || strings.Contains(q, "owner-secret") {
			t.Errorf("db.query.text = %q, want the statement with placeholders only", q)
		}
		for _, key := range []string{"db.system.name", "db.operation.name", "db.collection.name"} {
			if attrs[key] == "" {
				t.Errorf("insert jobs span has no %s: %v", key, attrs)
			}
		}
		got, err := s.Jobs().Job(context.Background(), j.ID)
		if err != nil || got.TraceParent != traceparent {
			t.Errorf("Job(%s).TraceParent = %q, %v; want %q", j.ID, got.TraceParent, err, traceparent)
		}
	})
}
