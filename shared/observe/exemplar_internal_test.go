package observe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/trace"
)

// TestExemplarInterval: a bucket gets an exemplar from the first sampled
// request, keeps it for ExemplarInterval whatever other sampled requests
// fall into it, and takes the next one after; other buckets are
// independent.
func TestExemplarInterval(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	sampled := func(id byte) context.Context {
		sc := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID:    trace.TraceID{id, 1},
			SpanID:     trace.SpanID{1},
			TraceFlags: trace.FlagsSampled,
		})
		return trace.ContextWithSpanContext(context.Background(), sc)
	}
	t0 := time.Unix(1_800_000_000, 0)
	fast, slow := 200*time.Microsecond, 20*time.Millisecond
	m.observe(sampled(1), "/r", "GET", 200, fast, t0)
	m.observe(sampled(2), "/r", "GET", 200, fast, t0.Add(ExemplarInterval/2)) // same bucket, too soon
	m.observe(sampled(3), "/r", "GET", 200, slow, t0.Add(ExemplarInterval/2)) // another bucket
	exemplars := func() map[float64]string {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[float64]string{}
		for _, mf := range mfs {
			if mf.GetName() != "http_request_duration_seconds" {
				continue
			}
			for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
				if ex := b.GetExemplar(); ex != nil {
					got[b.GetUpperBound()] = traceIDOf(ex)
				}
			}
		}
		return got
	}
	got := exemplars()
	if !strings.HasPrefix(got[.0005], "01") || !strings.HasPrefix(got[.025], "03") || len(got) != 2 {
		t.Errorf("exemplars = %v, want trace 01… in the 0.5 ms bucket and 03… in the 25 ms one", got)
	}
	m.observe(sampled(4), "/r", "GET", 200, fast, t0.Add(ExemplarInterval))
	if got := exemplars(); !strings.HasPrefix(got[.0005], "04") {
		t.Errorf("after ExemplarInterval the 0.5 ms bucket's exemplar = %s, want trace 04…", got[.0005])
	}
}

func traceIDOf(ex *dto.Exemplar) string {
	for _, l := range ex.GetLabel() {
		if l.GetName() == "trace_id" {
			return l.GetValue()
		}
	}
	return ""
}
