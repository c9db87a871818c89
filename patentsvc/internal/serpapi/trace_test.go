package serpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/shared/observe/otlptest"
)

// TestSearchSpans checks the client spans of a search with tracing on: one
// per attempt (a 503 then a 200: two), children of the caller's span, with
// no attribute holding the API key that the query string carries, and
// SerpApi receiving the trace in traceparent.
//
// The recorder is installed as the global tracer provider (the client's
// transport reads it when built); the test keeps only the spans under its
// own parent.
func TestSearchSpans(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Unavailable())
	c := serpapi.NewClient(fake.BaseURL(), testKey, 5*time.Second, 1, discardLogger())

	ctx, parent := otel.Tracer("test").Start(context.Background(), "parent")
	if _, err := c.Search(ctx, patent.SearchQuery{Company: serpapitest.CompanyKraft}); err != nil {
		t.Fatal(err)
	}
	parent.End()

	var attempts int
	for _, s := range rec.Ended() {
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			continue
		}
		attempts++
		for _, kv := range s.Attributes() {
			if v := kv.Value.String(); strings.Contains(v, testKey) || strings.Contains(v, "api_key") {
				t.Errorf("span %q attribute %s = %q holds the API key", s.Name(), kv.Key, v)
			}
		}
	}
	if attempts != 2 {
		t.Errorf("%d client spans under the caller's span, want 2 (one per attempt)", attempts)
	}
	want := "-" + parent.SpanContext().TraceID().String() + "-"
	for _, call := range fake.Calls() {
		if tp := call.Header.Get("traceparent"); !strings.Contains(tp, want) {
			t.Errorf("SerpApi received traceparent %q, want trace %s", tp, want)
		}
	}
}
