package observe_test

// These tests set OpenTelemetry's global provider and propagator, as
// SetupTracing does in a service, and restore them: none of them is
// parallel.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/observe/otlptest"
	"github.com/gatewayapis/shared/requestid"
)

const (
	gatewayTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	gatewaySpanID  = "00f067aa0ba902b7"
	traceparent    = "00-" + gatewayTraceID + "-" + gatewaySpanID + "-01"
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func newTracedServer(logs io.Writer) (*echo.Echo, http.Handler) {
	logger := slog.New(observe.TraceLogHandler(slog.NewJSONHandler(logs, nil)))
	reg := observe.NewRegistry()
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(logger, nil, func(c echo.Context, he *httperr.Error) error {
		return c.JSON(he.Status, map[string]string{"code": he.Code})
	})
	e.Use(requestid.Middleware(logger, observe.TracingScope()))
	e.Use(observe.Middleware(logger, observe.NewMetrics(reg)))
	e.Use(observe.Recover(logger))
	e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/fail", func(c echo.Context) error { return errors.New("plain failure") })
	return e, observe.Handler(reg)
}

func TestTracingScope(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	var logs bytes.Buffer
	e, _ := newTracedServer(&logs)
	for _, p := range []string{"/items/VIN123?api_key=secret", "/fail", "/missing/abc"} {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.Header.Set("traceparent", traceparent)
		req.Header.Set("User-Agent", "gateway/1")
		req.Header.Set("Authorization", "Bearer token")
		e.ServeHTTP(httptest.NewRecorder(), req)
	}

	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("spans = %d, want 3", len(spans))
	}
	for i, tt := range []struct {
		name, route string
		status      int64
		errStatus   bool
	}{
		{"GET /items/{id}", "/items/{id}", 200, false},
		{"GET /fail", "/fail", 500, true},
		{"GET unmatched", "unmatched", 404, false},
	} {
		s := spans[i]
		if s.Name() != tt.name {
			t.Errorf("span %d name = %q, want %q", i, s.Name(), tt.name)
		}
		if s.SpanKind() != trace.SpanKindServer {
			t.Errorf("%s: kind = %v, want server", tt.name, s.SpanKind())
		}
		if got := s.SpanContext().TraceID().String(); got != gatewayTraceID {
			t.Errorf("%s: trace id = %s, want the gateway's %s", tt.name, got, gatewayTraceID)
		}
		if got := s.Parent().SpanID().String(); got != gatewaySpanID || !s.Parent().IsRemote() {
			t.Errorf("%s: parent = %s, want the gateway's remote span %s", tt.name, got, gatewaySpanID)
		}
		a := attrs(s)
		want := map[attribute.Key]attribute.Value{
			"http.request.method":       attribute.StringValue("GET"),
			"http.route":                attribute.StringValue(tt.route),
			"http.response.status_code": attribute.Int64Value(tt.status),
			"url.scheme":                attribute.StringValue("http"),
			"server.address":            attribute.StringValue("example.com"),
			"user_agent.original":       attribute.StringValue("gateway/1"),
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("%s: %s = %v, want %v", tt.name, k, a[k].String(), v.String())
			}
		}
		for k, v := range a {
			if s := v.String(); strings.Contains(s, "VIN123") || strings.Contains(s, "secret") || strings.Contains(s, "token") {
				t.Errorf("%s: attribute %s = %q holds the raw path, the query or a header", tt.name, k, s)
			}
		}
		if got := s.Status().Code == codes.Error; got != tt.errStatus {
			t.Errorf("%s: error status = %v, want %v", tt.name, got, tt.errStatus)
		}
	}

	// The access lines were written inside the server span.
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] != "request" {
			continue
		}
		if m["trace_id"] != gatewayTraceID || len(m["span_id"].(string)) != 16 {
			t.Errorf("access line %s: want trace_id %s and a span_id", l, gatewayTraceID)
		}
	}
}

func TestTracingScopeOff(t *testing.T) {
	otlptest.RestoreGlobals(t)
	// The global default provider: what a service has when SetupTracing
	// found no endpoint.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	scope := observe.TracingScope()
	if scope != nil {
		t.Fatalf("TracingScope() with tracing off = %T, want nil", scope)
	}
	var sawSpan bool
	handler := func(c echo.Context) error {
		sawSpan = sawSpan || trace.SpanContextFromContext(c.Request().Context()).IsValid()
		return nil
	}
	logger := slog.New(slog.DiscardHandler)
	allocs := func(mw echo.MiddlewareFunc) float64 {
		h := mw(handler)
		e := echo.New()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("traceparent", traceparent)
		req.Header.Set(requestid.Header, "fixed-id") // no UUID drawn
		c := e.NewContext(req, httptest.NewRecorder())
		return testing.AllocsPerRun(100, func() { c.SetRequest(req); _ = h(c) })
	}
	with, without := allocs(requestid.Middleware(logger, scope)), allocs(requestid.Middleware(logger))
	if with != without {
		t.Errorf("with tracing off the request id middleware allocates %v times per request, %v without the scope", with, without)
	}
	if sawSpan {
		t.Error("with tracing off a span was started")
	}
}

// An unsampled request (the gateway's traceparent says not sampled, or
// the ratio sampler said no) is still a child of the gateway's trace, so
// that outbound calls carry it, but records nothing and writes no trace
// id into its log lines: an id there always names a trace the collector
// has.
func TestTracingScopeUnsampled(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	var logs bytes.Buffer
	var seen trace.SpanContext
	e, _ := newTracedServer(&logs)
	e.GET("/seen", func(c echo.Context) error {
		seen = trace.SpanContextFromContext(c.Request().Context())
		return c.NoContent(http.StatusNoContent)
	})
	req := httptest.NewRequest(http.MethodGet, "/seen", nil)
	req.Header.Set("traceparent", "00-"+gatewayTraceID+"-"+gatewaySpanID+"-00")
	e.ServeHTTP(httptest.NewRecorder(), req)
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("an unsampled request recorded %d spans", n)
	}
	if seen.TraceID().String() != gatewayTraceID || seen.IsSampled() {
		t.Errorf("the handler saw span context %v, want the gateway's trace, not sampled", seen)
	}
	if strings.Contains(logs.String(), "trace_id") || !strings.Contains(logs.String(), `"msg":"request"`) {
		t.Errorf("access line of an unsampled request = %s, want one without trace_id", logs.String())
	}
}

func TestTracingTransport(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	var got []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
		if len(got) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer upstream.Close()

	client := &http.Client{Transport: observe.TracingTransport(nil)}
	ctx, parent := otel.Tracer("test").Start(context.Background(), "request")
	target := strings.Replace(upstream.URL, "http://", "http://user:pass@", 1) + "/api/x?api_key=secret&q=acme"
	for range 2 { // a retry: two round trips, two spans
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("traceparent") != "" {
			t.Error("the transport modified the caller's request")
		}
	}
	parent.End()

	var clientSpans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			clientSpans = append(clientSpans, s)
		}
	}
	if len(clientSpans) != 2 || len(got) != 2 {
		t.Fatalf("client spans = %d, upstream requests = %d, want 2 and 2", len(clientSpans), len(got))
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(upstream.URL, "http://"), ":")
	for i, s := range clientSpans {
		if s.Name() != "GET" {
			t.Errorf("span %d name = %q, want GET", i, s.Name())
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %d is not a child of the caller's span", i)
		}
		wantTP := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"
		if got[i] != wantTP {
			t.Errorf("attempt %d traceparent = %q, want %q", i, got[i], wantTP)
		}
		a := attrs(s)
		if u := a["url.full"].AsString(); u != upstream.URL+"/api/x" {
			t.Errorf("url.full = %q, want %q (no userinfo, no query)", u, upstream.URL+"/api/x")
		}
		if a["server.address"].AsString() != host || a["server.port"].String() != port || a["http.request.method"].AsString() != "GET" {
			t.Errorf("span %d attributes = %v", i, s.Attributes())
		}
		for k, v := range a {
			if strings.Contains(v.String(), "secret") || strings.Contains(v.String(), "pass") {
				t.Errorf("attribute %s = %q holds a secret", k, v.String())
			}
		}
	}
	if a := attrs(clientSpans[0]); a["http.response.status_code"].AsInt64() != 503 || a["error.type"].AsString() != "503" ||
		clientSpans[0].Status().Code != codes.Error {
		t.Errorf("503 attempt: attributes %v, status %v", clientSpans[0].Attributes(), clientSpans[0].Status())
	}
	if a := attrs(clientSpans[1]); a["http.response.status_code"].AsInt64() != 200 || clientSpans[1].Status().Code == codes.Error {
		t.Errorf("200 attempt: attributes %v, status %v", clientSpans[1].Attributes(), clientSpans[1].Status())
	}
}

func TestTracingTransportError(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/x?key=secret", nil)
	if _, err := observe.TracingTransport(nil).RoundTrip(req); err == nil {
		t.Fatal("RoundTrip with a canceled context succeeded")
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("spans = %d, want 1", len(spans))
	}
	if a := attrs(spans[0]); a["error.type"].AsString() != "canceled" || spans[0].Status().Code != codes.Error {
		t.Errorf("failed attempt: attributes %v, status %v", spans[0].Attributes(), spans[0].Status())
	}
}

func TestTracingTransportOff(t *testing.T) {
	otlptest.RestoreGlobals(t)
	base := http.DefaultTransport
	if got := observe.TracingTransport(base); got != base {
		t.Errorf("TracingTransport with tracing off = %T, want the base transport itself", got)
	}
}

func TestTraceLogHandler(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(observe.TraceLogHandler(slog.NewJSONHandler(&buf, nil))).With("demo", true)
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "x")
	logger.InfoContext(ctx, "inside", "k", 1)
	logger.InfoContext(context.Background(), "outside")
	span.End()

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var in, out map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &out); err != nil {
		t.Fatal(err)
	}
	sc := span.SpanContext()
	if in["trace_id"] != sc.TraceID().String() || in["span_id"] != sc.SpanID().String() || in["demo"] != true {
		t.Errorf("line inside the span = %s, want trace_id %s, span_id %s and demo", lines[0], sc.TraceID(), sc.SpanID())
	}
	if _, ok := out["trace_id"]; ok {
		t.Errorf("line outside any span = %s, want no trace_id", lines[1])
	}
}

func TestExemplars(t *testing.T) {
	otlptest.UseRecorder(t)
	e, metrics := newTracedServer(io.Discard)
	req := httptest.NewRequest(http.MethodGet, "/items/1", nil)
	req.Header.Set("traceparent", traceparent)
	e.ServeHTTP(httptest.NewRecorder(), req)

	scrape := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	scrape.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	w := httptest.NewRecorder()
	metrics.ServeHTTP(w, scrape)
	if body := w.Body.String(); !strings.Contains(body, `# {trace_id="`+gatewayTraceID+`"}`) {
		t.Errorf("OpenMetrics scrape has no exemplar with the trace id:\n%s", body)
	}

	// Not sampled (flags 00): no exemplar.
	e2, metrics2 := newTracedServer(io.Discard)
	req = httptest.NewRequest(http.MethodGet, "/items/1", nil)
	req.Header.Set("traceparent", "00-"+gatewayTraceID+"-"+gatewaySpanID+"-00")
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample()))))
	e2.ServeHTTP(httptest.NewRecorder(), req)
	w = httptest.NewRecorder()
	metrics2.ServeHTTP(w, scrape)
	if strings.Contains(w.Body.String(), "trace_id") {
		t.Errorf("exemplar for an unsampled request:\n%s", w.Body.String())
	}
}

func TestSetupTracingOff(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
	}{
		{"no endpoint", map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{"disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			otlptest.RestoreGlobals(t)
			var logs bytes.Buffer
			before := otel.GetTracerProvider()
			shutdown, err := observe.SetupTracing(context.Background(), "svc", "v1", mapEnv(tt.env), slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatalf("SetupTracing: %v", err)
			}
			if otel.GetTracerProvider() != before {
				t.Error("SetupTracing installed a provider with tracing off")
			}
			if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), `"msg":"tracing off"`) {
				t.Errorf("log = %q, want exactly one line saying tracing is off", logs.String())
			}
			if err := shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
}

func TestSetupTracingInvalid(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "sometimes"}, "OTEL_TRACES_SAMPLER"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "OTEL_TRACES_SAMPLER_ARG"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, "OTEL_RESOURCE_ATTRIBUTES"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_BSP_SCHEDULE_DELAY": "soon"}, "OTEL_BSP_SCHEDULE_DELAY"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			otlptest.RestoreGlobals(t)
			_, err := observe.SetupTracing(context.Background(), "svc", "v1", mapEnv(tt.env), slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SetupTracing(%v) error = %v, want one naming %s", tt.env, err, tt.want)
			}
		})
	}
}

func TestSetupTracingExports(t *testing.T) {
	otlptest.RestoreGlobals(t)
	recv := otlptest.NewReceiver(t)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-collector-token=abc%20def",
		"OTEL_SERVICE_NAME":           "vinsvc-canary",
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment.name=staging,service.name=ignored",
		"OTEL_TRACES_SAMPLER":         "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":     "1",
		"OTEL_BSP_SCHEDULE_DELAY":     "60000", // only shutdown's flush sends it
	}
	var logs bytes.Buffer
	shutdown, err := observe.SetupTracing(context.Background(), "vinsvc", "1.2.3", mapEnv(env), slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("SetupTracing: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"tracing on"`) || strings.Contains(logs.String(), "abc") {
		t.Errorf("log = %q, want one line saying tracing is on, without the headers", logs.String())
	}

	e, _ := newTracedServer(io.Discard)
	req := httptest.NewRequest(http.MethodGet, "/items/1", nil)
	req.Header.Set("traceparent", traceparent)
	e.ServeHTTP(httptest.NewRecorder(), req)
	if recv.Requests() != 0 {
		t.Errorf("the exporter sent %d requests before the batch was due", recv.Requests())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if tp := otel.GetTracerProvider(); reflect.TypeOf(tp) == reflect.TypeOf(&sdktrace.TracerProvider{}) {
		t.Error("after shutdown the global tracer provider is still the SDK's")
	}
	spans := recv.Spans()
	if len(spans) != 1 {
		t.Fatalf("received %d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "GET /items/{id}" || traceHex(s.TraceId) != gatewayTraceID || traceHex(s.ParentSpanId) != gatewaySpanID {
		t.Errorf("span = %q trace %s parent %s, want GET /items/{id} under the gateway's span", s.Name, traceHex(s.TraceId), traceHex(s.ParentSpanId))
	}
	for k, want := range map[string]string{"service.name": "vinsvc-canary", "service.version": "1.2.3", "deployment.environment.name": "staging"} {
		if s.Resource[k] != want {
			t.Errorf("resource %s = %q, want %q", k, s.Resource[k], want)
		}
	}
	if h := recv.Headers()[0]; h.Get("X-Collector-Token") != "abc def" || h.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("export request headers = %v", h)
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func traceHex(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// traceService is an OTLP/gRPC trace receiver.
type traceService struct {
	collectorpb.UnimplementedTraceServiceServer
	got chan *collectorpb.ExportTraceServiceRequest
}

func (s *traceService) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	s.got <- req
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func TestSetupTracingGRPC(t *testing.T) {
	otlptest.RestoreGlobals(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	svc := &traceService{got: make(chan *collectorpb.ExportTraceServiceRequest, 10)}
	collectorpb.RegisterTraceServiceServer(srv, svc)
	go srv.Serve(ln)
	defer srv.Stop()

	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	shutdown, err := observe.SetupTracing(context.Background(), "patentsvc", "v1", mapEnv(env), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("SetupTracing: %v", err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "job")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	select {
	case req := <-svc.got:
		rs := req.GetResourceSpans()
		if len(rs) != 1 || rs[0].GetScopeSpans()[0].GetSpans()[0].GetName() != "job" {
			t.Errorf("export request = %v, want the span job", req)
		}
	default:
		t.Fatal("no export request over gRPC")
	}
}

// TestTracingTransportWithoutURLPath: a target whose path is its secret (a
// Slack incoming webhook) is recorded as scheme://host only.
func TestTracingTransportWithoutURLPath(t *testing.T) {
	rec := otlptest.UseRecorder(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer upstream.Close()
	client := &http.Client{Transport: observe.TracingTransport(nil, observe.WithoutURLPath())}
	resp, err := client.Post(upstream.URL+"/services/T000/B000/XXXXtoken", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	for k, v := range attrs(spans[0]) {
		if strings.Contains(v.String(), "XXXXtoken") || strings.Contains(v.String(), "/services") {
			t.Errorf("attribute %s = %q holds the path", k, v.String())
		}
	}
	if u := attrs(spans[0])["url.full"].AsString(); u != upstream.URL {
		t.Errorf("url.full = %q, want %q", u, upstream.URL)
	}
}

// TestSetupTracingExportSettings: OTEL_EXPORTER_OTLP_TRACES_HEADERS wins
// over OTEL_EXPORTER_OTLP_HEADERS, gzip compression reaches the collector
// compressed (and decodable), and OTEL_EXPORTER_OTLP_TIMEOUT bounds an
// export to a collector that never answers, so shutdown ends in time.
func TestSetupTracingExportSettings(t *testing.T) {
	export := func(t *testing.T, env map[string]string) (func(context.Context) error, *echo.Echo) {
		otlptest.RestoreGlobals(t)
		env["OTEL_BSP_SCHEDULE_DELAY"] = "60000" // only shutdown's flush sends
		shutdown, err := observe.SetupTracing(context.Background(), "vinsvc", "1.2.3", mapEnv(env), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("SetupTracing: %v", err)
		}
		e, _ := newTracedServer(io.Discard)
		req := httptest.NewRequest(http.MethodGet, "/items/1", nil)
		req.Header.Set("traceparent", traceparent)
		e.ServeHTTP(httptest.NewRecorder(), req)
		return shutdown, e
	}

	t.Run("gzip and per-signal headers", func(t *testing.T) {
		recv := otlptest.NewReceiver(t)
		shutdown, _ := export(t, map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        recv.URL,
			"OTEL_EXPORTER_OTLP_HEADERS":         "x-collector-token=general",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "x-collector-token=traces",
			"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
		})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if n := len(recv.Spans()); n != 1 {
			t.Fatalf("received %d spans, want 1", n)
		}
		h := recv.Headers()[0]
		if h.Get("Content-Encoding") != "gzip" || h.Get("X-Collector-Token") != "traces" {
			t.Errorf("export request headers = %v, want gzip and the traces token", h)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		// A collector that never answers: the exporter gives up on the
		// request after OTEL_EXPORTER_OTLP_TIMEOUT (the default is 10 s),
		// and shutdown returns by its context's deadline whatever the
		// exporter's retries would do next.
		gaveUp := make(chan time.Duration, 10)
		silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			_, _ = io.Copy(io.Discard, r.Body) // read it all, or the server never notices the client leaving
			<-r.Context().Done()
			gaveUp <- time.Since(start)
		}))
		defer silent.Close()
		shutdown, _ := export(t, map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": silent.URL,
			"OTEL_EXPORTER_OTLP_TIMEOUT":  "300",
		})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		err := shutdown(ctx)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("shutdown took %s, past its context's 3 s deadline", took)
		}
		if err == nil {
			t.Error("shutdown reported no error for an export that never succeeded")
		}
		select {
		case d := <-gaveUp:
			if d < 200*time.Millisecond || d > 2*time.Second {
				t.Errorf("the exporter gave up on its request after %s, want about 300 ms", d)
			}
		case <-time.After(5 * time.Second):
			t.Error("the exporter never gave up on its request")
		}
	})
}
