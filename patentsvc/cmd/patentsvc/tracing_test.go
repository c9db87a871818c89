package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/shared/observe/otlptest"
	"github.com/gatewayapis/testkit/wait"
)

// The gateway's spans: the parents the test sends in traceparent.
const (
	gatewayTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	gatewaySpan    = "00f067aa0ba902b7"
	submitterTrace = "0af7651916cd43dd8448eb211c80319c"
	submitterSpan  = "b7ad6b7169203331"
	trackerTrace   = "5b8aa5a2d2c872e8321cf37308d69df2"
	trackerSpan    = "051581bf3cb55c13"
)

// TestRunTracing runs the service with an OTLP/HTTP receiver and checks
// the spans of a company analysis and of an async job (decisions.md,
// "Tracing (issue 13)"): one trace from the gateway's span through the
// server span to the search, the PDF downloads and extractions, the model
// and the database; the upstreams receive that trace in traceparent; the
// job's run is a root span linked to the request that submitted it; no
// attribute holds a key or a password.
//
// It is not parallel: tracing is process-wide (the global tracer
// provider), and it must not see the other tests' services.
func TestRunTracing(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	// SetupTracing (in run) sets process-wide state; put it back after.
	t.Cleanup(resetTracing)
	st := storetest.Open(t, store.SQLite, time.Now) // only to build the world's fixtures
	w := analysistest.NewWorld(t, st)
	w.Company("Acme Corp", 2)
	dir := t.TempDir()
	base, stop, logs := start(t, map[string]string{
		"DATABASE_URL": filepath.Join(dir, "patentsvc.db"), "BCRYPT_COST": "4",
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.LLM.BaseURL(),
		"PDF_ALLOWED_HOSTS": "127.0.0.1", "STORAGE_DIR": filepath.Join(dir, "patents"),
		"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL, "OTEL_BSP_SCHEDULE_DELAY": "100",
	})
	const password = "correct horse battery"
	creds := map[string]string{"email": "ada@example.com", "password": password}
	call(t, "POST", base+"/auth/register", "", creds)
	_, tok := call(t, "POST", base+"/auth/login", "", creds)
	access := tok["access_token"].(string)

	code, res := tracedCall(t, "GET", base+"/analyze/Acme%20Corp", access, "00-"+gatewayTrace+"-"+gatewaySpan+"-01", nil)
	if code != 200 || res["success"] != true {
		t.Fatalf("analyze = %d %v\n%s", code, res, logs)
	}
	code, job := tracedCall(t, "POST", base+"/analyze/batch/async", access, "00-"+submitterTrace+"-"+submitterSpan+"-01",
		map[string]any{"companies": []string{"Acme Corp"}})
	if code != 202 {
		t.Fatalf("async = %d %v", code, job)
	}
	waitForJob(t, base, access, job["job_id"].(string))
	// The first user is an admin: track a company, whose first run starts
	// at once (RunNow).
	if code, body := tracedCall(t, "POST", base+"/admin/tracked", access, "00-"+trackerTrace+"-"+trackerSpan+"-01",
		map[string]any{"company_name": "Acme Corp"}); code != 201 {
		t.Fatalf("track = %d %v", code, body)
	}
	recv.WaitFor(20*time.Second, func(spans []otlptest.Span) bool { return len(filterSpans(spans, named("scheduled run"))) > 0 })
	if err := stop(); err != nil { // flushes the spans
		t.Fatalf("run = %v\n%s", err, logs)
	}
	spans := recv.Spans()
	if len(spans) == 0 {
		t.Fatalf("no span received\n%s", logs)
	}

	checkAnalysisTrace(t, spans, w)
	checkJobLink(t, spans)
	checkRunNowLink(t, spans)
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if v := kv.GetValue().String(); strings.Contains(v, "serp-key") || strings.Contains(v, "llm-key") ||
				strings.Contains(v, password) || strings.Contains(v, access) {
				t.Errorf("span %q attribute %s holds a secret: %s", s.Name, kv.GetKey(), v)
			}
		}
	}
	if !strings.Contains(logs.String(), `"trace_id":"`+gatewayTrace+`"`) {
		t.Errorf("no log line carries the analysis's trace id\n%s", logs)
	}
}

// checkAnalysisTrace checks the analysis's span tree under the gateway's
// span, and the traceparent the upstreams received.
func checkAnalysisTrace(t *testing.T, spans []otlptest.Span, w *analysistest.World) {
	t.Helper()
	trace := inTrace(spans, gatewayTrace)
	server := findSpan(t, trace, func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
	if !strings.HasPrefix(server.Name, "GET /analyze/") || strings.Contains(server.Name, "Acme") {
		t.Errorf("server span name = %q, want the route template", server.Name)
	}
	if got := hex.EncodeToString(server.ParentSpanId); got != gatewaySpan {
		t.Errorf("server span's parent = %s, want the gateway's span %s", got, gatewaySpan)
	}
	analysis := findSpan(t, trace, named("analyze company"))
	wantChild(t, analysis, server)
	if v, _ := analysis.Attr("patent.count"); v != "2" {
		t.Errorf("analyze company patent.count = %q, want 2", v)
	}

	serp := findSpan(t, trace, clientOf(w.Serp.URL))
	wantChild(t, serp, analysis)
	if u, _ := serp.Attr("url.full"); strings.Contains(u, "?") || strings.Contains(u, "api_key") {
		t.Errorf("search span url.full = %q, want no query string", u)
	}
	if n := len(filterSpans(trace, clientOf(w.PDFs.URL))); n != 2 {
		t.Errorf("%d PDF download spans, want 2", n)
	}
	extracts := filterSpans(trace, named("extract pdf"))
	if len(extracts) != 2 {
		t.Fatalf("%d extract pdf spans, want 2", len(extracts))
	}
	for _, e := range extracts {
		wantChild(t, e, analysis)
		id, _ := e.Attr("patent.id")
		pages, _ := e.Attr("pdf.pages")
		ocr, _ := e.Attr("pdf.ocr")
		if id == "" || pages == "" || pages == "0" || ocr != "false" {
			t.Errorf("extract pdf attributes: patent.id %q, pdf.pages %q, pdf.ocr %q", id, pages, ocr)
		}
	}

	chat := findSpan(t, trace, named("chat "+patent.DefaultModel))
	wantChild(t, chat, analysis)
	for _, key := range []string{"gen_ai.request.model", "gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if v, ok := chat.Attr(key); !ok || v == "" {
			t.Errorf("llm span has no %s", key)
		}
	}
	wantChild(t, findSpan(t, trace, clientOf(w.LLM.URL)), chat)

	db := filterSpans(trace, func(s otlptest.Span) bool { _, ok := s.Attr("db.system.name"); return ok })
	if len(db) == 0 {
		t.Error("no database statement span in the analysis's trace")
	}
	for _, s := range db {
		if q, _ := s.Attr("db.query.text"); strings.Contains(q, "Acme") {
			t.Errorf("statement span %q has a bound value: %s", s.Name, q)
		}
	}

	// The upstreams received the trace in traceparent.
	want := "-" + gatewayTrace + "-"
	if calls := w.Serp.Calls(); len(calls) == 0 || !strings.Contains(calls[0].Header.Get("traceparent"), want) {
		t.Errorf("the search request's traceparent is not in trace %s", gatewayTrace)
	}
	if calls := w.LLM.Calls(); len(calls) == 0 || !strings.Contains(calls[0].Header.Get("traceparent"), want) {
		t.Errorf("the model request's traceparent is not in trace %s", gatewayTrace)
	}
	if tps := w.PDFs.Traceparents(); len(tps) < 2 || !strings.Contains(tps[0], want) || !strings.Contains(tps[1], want) {
		t.Errorf("PDF download traceparents = %q, want trace %s", tps, gatewayTrace)
	}
}

// checkJobLink checks that the job's run is a root span of its own trace,
// linked to the server span of the request that submitted the job.
func checkJobLink(t *testing.T, spans []otlptest.Span) {
	t.Helper()
	submit := findSpan(t, inTrace(spans, submitterTrace), func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
	run := findSpan(t, spans, named("job run"))
	if len(run.ParentSpanId) != 0 || hex.EncodeToString(run.TraceId) == submitterTrace {
		t.Errorf("job run: parent %x, trace %x; want a root span of a new trace", run.ParentSpanId, run.TraceId)
	}
	if len(run.Links) != 1 || hex.EncodeToString(run.Links[0].TraceId) != submitterTrace ||
		!bytes.Equal(run.Links[0].SpanId, submit.SpanId) {
		t.Errorf("job run links = %v, want one to the submitting request's span %x", run.Links, submit.SpanId)
	}
	if len(filterSpans(inTrace(spans, hex.EncodeToString(run.TraceId)), named("analyze company"))) != 1 {
		t.Error("the job's analysis is not in the job run's trace")
	}
}

// checkRunNowLink checks that a tracked company's first run is a root
// span linked to the server span of the request that tracked it.
func checkRunNowLink(t *testing.T, spans []otlptest.Span) {
	t.Helper()
	track := findSpan(t, inTrace(spans, trackerTrace), func(s otlptest.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
	run := findSpan(t, spans, named("scheduled run"))
	if len(run.ParentSpanId) != 0 || hex.EncodeToString(run.TraceId) == trackerTrace {
		t.Errorf("scheduled run: parent %x, trace %x; want a root span of a new trace", run.ParentSpanId, run.TraceId)
	}
	if len(run.Links) != 1 || !bytes.Equal(run.Links[0].SpanId, track.SpanId) {
		t.Errorf("scheduled run links = %v, want one to the tracking request's span %x", run.Links, track.SpanId)
	}
}

// resetTracing puts back what SetupTracing replaced process-wide, so the
// tests after this one run with tracing off: a no-op provider and
// propagator, and an error handler that drops (SetupTracing's logs to a
// service that has stopped).
func resetTracing() {
	otel.SetTracerProvider(noop.NewTracerProvider())
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
}

// tracedCall is call with a traceparent header.
func tracedCall(t *testing.T, method, url, token, traceparent string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func waitForJob(t *testing.T, base, access, id string) {
	t.Helper()
	var job map[string]any
	if !wait.Until(30*time.Second, func() bool {
		_, job = call(t, "GET", base+"/jobs/"+id, access, nil)
		return job["status"] == "completed" || job["status"] == "failed"
	}) || job["status"] != "completed" {
		t.Fatalf("job = %v", job)
	}
}

func inTrace(spans []otlptest.Span, traceID string) []otlptest.Span {
	return filterSpans(spans, func(s otlptest.Span) bool { return hex.EncodeToString(s.TraceId) == traceID })
}

func filterSpans(spans []otlptest.Span, keep func(otlptest.Span) bool) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func findSpan(t *testing.T, spans []otlptest.Span, match func(otlptest.Span) bool) otlptest.Span {
	t.Helper()
	found := filterSpans(spans, match)
	if len(found) == 0 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("span not found among %q", names)
	}
	return found[0]
}

func named(name string) func(otlptest.Span) bool {
	return func(s otlptest.Span) bool { return s.Name == name }
}

// clientOf matches the client spans of requests to the server at base.
func clientOf(base string) func(otlptest.Span) bool {
	u, _ := url.Parse(base)
	return func(s otlptest.Span) bool {
		port, _ := s.Attr("server.port")
		return s.Kind == tracepb.Span_SPAN_KIND_CLIENT && port == u.Port()
	}
}

func wantChild(t *testing.T, child, parent otlptest.Span) {
	t.Helper()
	if !bytes.Equal(child.ParentSpanId, parent.SpanId) {
		t.Errorf("span %q's parent is %x, want %q (%x)", child.Name, child.ParentSpanId, parent.Name, parent.SpanId)
	}
}
