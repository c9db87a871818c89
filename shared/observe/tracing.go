package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/requestid"
)

// TracerName is the instrumentation scope of the spans this package and
// the services start.
const TracerName = "github.com/gatewayapis/shared/observe"

// SetupTracing configures OpenTelemetry from the standard environment
// variables only, read through getenv (decisions.md "Tracing (issue 13)"):
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL (/ _TRACES_PROTOCOL: http/protobuf, the
// default, or grpc), OTEL_EXPORTER_OTLP_HEADERS (/ _TRACES_HEADERS),
// OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_SERVICE_NAME
// (default service), OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default
// parentbased_always_on), OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_* and
// OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none.
//
// With no endpoint set, or OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none,
// tracing is off: no exporter, no provider, no background work, exactly one
// log line saying so, and shutdown is a no-op. Otherwise a batching exporter
// (it never blocks a request: spans are dropped when its queue is full) and
// the W3C tracecontext+baggage propagator are installed globally, and
// shutdown flushes the queued spans within its context's deadline (pass
// SHUTDOWN_TIMEOUT's context) and puts the previous globals back; calling
// it again does nothing.
//
// An invalid value of one of the variables is an error naming it; nothing
// is installed then.
func SetupTracing(ctx context.Context, service, version string, getenv func(string) string, logger *slog.Logger) (shutdown func(context.Context) error, err error) {
	noShutdown := func(context.Context) error { return nil }
	env, err := loadTraceEnv(getenv, service)
	if err != nil {
		return noShutdown, err
	}
	if env.off != "" {
		logger.Info("tracing off", "reason", env.off)
		return noShutdown, nil
	}
	exp, err := newExporter(ctx, env)
	if err != nil {
		return noShutdown, err
	}
	res, err := newResource(ctx, env, version)
	if err != nil {
		return noShutdown, err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, env.batch...), // WithBlocking not set: a full queue drops spans
		sdktrace.WithResource(res),
		sdktrace.WithSampler(env.sampler),
	)
	prevTP, prevProp, prevEH := otel.GetTracerProvider(), otel.GetTextMapPropagator(), otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing export failed", "err", redact.Text(err.Error())) // the collector's URL and answer, without URLs
	}))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	logger.Info("tracing on", "endpoint", env.endpointForLog(), "protocol", env.protocol,
		"service_name", env.service, "sampler", env.samplerName)
	var once sync.Once
	return func(ctx context.Context) error {
		err := tp.Shutdown(ctx)
		// Put the globals back, so that what is built afterwards (the
		// next run in the same test process) sees tracing off again.
		once.Do(func() {
			otel.SetTracerProvider(prevTP)
			otel.SetTextMapPropagator(prevProp)
			otel.SetErrorHandler(prevEH)
		})
		if err != nil {
			return fmt.Errorf("tracing shutdown: %w", err)
		}
		return nil
	}, nil
}

// tracingOn reports whether tp records anything: false for the no-op
// provider and for the global default (a delegate that stays a no-op until
// SetTracerProvider is called, which SetupTracing does only when tracing
// is on). The global delegate's type is internal to otel, hence the
// package-path test.
func tracingOn(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return false
	}
	t := reflect.TypeOf(tp)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() != "go.opentelemetry.io/otel/internal/global"
}

// StartSpan starts an internal span named name as a child of the span in
// ctx, from that span's own tracer provider, when that span is recording.
// Otherwise it returns ctx and its (non-recording) span unchanged, without
// allocating: with tracing off, or in an unsampled trace, it costs a context
// lookup. Callers set attributes only when span.IsRecording().
func StartSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(TracerName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
}

// TraceParent is the W3C traceparent of the span in ctx, "" when there is
// none: stored with work that outlives its request (a job, a tracked
// company's first run), whose run then links its root span to the request
// (LinkTo) instead of keeping the request's trace open for minutes.
func TraceParent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// LinkTo is a link to the span a traceparent names; ok is false when the
// traceparent is empty or not valid.
func LinkTo(traceparent string) (trace.Link, bool) {
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

// TracingScope starts a server span per request, named
// "<METHOD> <route template>" (e.g. "GET /v1/decode", "GET
// /analyze/{company_name}"; "<METHOD> unmatched" when no route matched,
// never the raw path), as a child of an incoming W3C traceparent, with the
// HTTP semantic-convention attributes http.request.method, http.route,
// http.response.status_code, url.scheme, server.address and
// user_agent.original (no path, query string or other header), and an
// error status on 5xx. Give it to requestid.Middleware, which is
// registered before Middleware, so the access line and the metrics see
// the span:
//
//	e.Use(requestid.Middleware(logger, observe.TracingScope()))
//
// The span goes into the context requestid builds anyway, so tracing adds
// no copy of the request. It reads the global tracer provider and
// propagator once, when called: call SetupTracing first. With tracing off
// it returns nil, which requestid.Middleware skips.
func TracingScope() requestid.Scope {
	tp := otel.GetTracerProvider()
	if !tracingOn(tp) {
		return nil
	}
	prop := otel.GetTextMapPropagator()
	t := &tracingScope{
		tracer: tp.Tracer(TracerName),
		prop:   prop,
		opts:   []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}, // built once: no allocation per request
	}
	for _, f := range prop.Fields() {
		t.fields = append(t.fields, canonicalKey(f))
	}
	return t
}

type tracingScope struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	opts   []trace.SpanStartOption
	fields []string // the propagator's headers, canonical
	names  spanNames
}

// Enter implements requestid.Scope: the server span, in the returned
// context. An unsampled request pays for the span context and nothing
// else: attributes are set, at Exit, only on a recording span (the
// samplers SetupTracing offers do not read them).
func (t *tracingScope) Enter(c echo.Context, parent context.Context) context.Context {
	r := c.Request()
	for _, f := range t.fields { // most requests carry none: skip the extraction then
		if len(r.Header[f]) > 0 {
			parent = t.prop.Extract(parent, headerCarrier(r.Header))
			break
		}
	}
	ctx, _ := t.tracer.Start(parent, t.names.get(r.Method, c.Path()).span, t.opts...)
	return ctx
}

// Exit implements requestid.Scope: the status and attributes of a
// recording span, then its end.
func (t *tracingScope) Exit(c echo.Context, ctx context.Context, err error) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		r := c.Request()
		endServerSpan(span, c, r, t.names.get(r.Method, c.Path()).route, responseStatus(c, err))
	}
	span.End()
}

// headerCarrier is propagation.HeaderCarrier without the allocation of
// canonicalising the W3C header names on every lookup.
type headerCarrier http.Header

// Get implements propagation.TextMapCarrier.
func (hc headerCarrier) Get(key string) string {
	if v := hc[canonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (hc headerCarrier) Set(key, value string) { hc[canonicalKey(key)] = []string{value} }

// Keys implements propagation.TextMapCarrier.
func (hc headerCarrier) Keys() []string { return propagation.HeaderCarrier(hc).Keys() }

func canonicalKey(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return http.CanonicalHeaderKey(key)
}

// endServerSpan sets a recording server span's attributes and status.
func endServerSpan(span trace.Span, c echo.Context, r *http.Request, route string, status int) {
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs,
		attribute.String("http.request.method", semconvMethod(r.Method)),
		attribute.String("http.route", route),
		attribute.String("url.scheme", c.Scheme()),
		attribute.Int("http.response.status_code", status))
	if host, _ := splitHostPort(r.Host); host != "" {
		attrs = append(attrs, attribute.String("server.address", host))
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, attribute.String("user_agent.original", ua))
	}
	if status >= http.StatusInternalServerError {
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(status)))
		span.SetStatus(codes.Error, "")
	}
	span.SetAttributes(attrs...)
}

// responseStatus is the status the client gets: the written one, or the
// one Echo's error handler will write for err.
func responseStatus(c echo.Context, err error) int {
	if c.Response().Committed || err == nil {
		return c.Response().Status
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return http.StatusInternalServerError
}

// spanNames names server spans: "<METHOD> <route template>", where the
// template is Echo's route path with :param written {param}, and
// UnmatchedRoute when no route matched (Echo's path is then empty). Each
// method and path is converted once and remembered: there are as many as
// routes times methods, and a request then costs one map lookup and no
// allocation.
type spanNames struct{ m sync.Map } // methodPath → spanName

type methodPath struct{ method, path string }

type spanName struct{ span, route string }

func (sn *spanNames) get(method, path string) spanName {
	k := methodPath{semconvMethod(method), path} // bounded: _OTHER for any unknown method
	if n, ok := sn.m.Load(k); ok {
		return n.(spanName)
	}
	route := routeTemplate(path)
	n := spanName{span: k.method + " " + route, route: route}
	sn.m.Store(k, n)
	return n
}

// routeTemplate turns an Echo route path into a route template:
// /analyze/:name becomes /analyze/{name}, "" becomes UnmatchedRoute.
func routeTemplate(path string) string {
	if path == "" {
		return UnmatchedRoute
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

// semconvMethod is the http.request.method value: the known methods as
// they are, anything else _OTHER (bounded cardinality).
func semconvMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// splitHostPort splits host[:port], tolerating a missing port.
func splitHostPort(hostport string) (host string, port int) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.Trim(hostport, "[]"), 0
	}
	port, _ = strconv.Atoi(p)
	return h, port
}

// TracingTransport wraps base (http.DefaultTransport when nil) so that
// every round trip is one client span, named after the method ("GET"), so
// that each attempt of a retrying client is its own span. The span carries
// http.request.method, server.address, server.port, url.full (without the
// query string, fragment and userinfo: an API key in the query never
// reaches a span), http.response.status_code and error.type, and is a
// child of the span in the request's context; the request goes out with
// that span's traceparent/tracestate. The span ends when RoundTrip
// returns, before the body is read.
//
// It reads the global tracer provider and propagator once, when called:
// call SetupTracing first. With tracing off it returns base unchanged.
func TracingTransport(base http.RoundTripper, opts ...TransportOption) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	tp := otel.GetTracerProvider()
	if !tracingOn(tp) {
		return base
	}
	t := &tracingTransport{base: base, tracer: tp.Tracer(TracerName), prop: otel.GetTextMapPropagator()}
	for _, o := range opts {
		o(t)
	}
	return t
}

// TransportOption changes what TracingTransport records.
type TransportOption func(*tracingTransport)

// WithoutURLPath records url.full as the scheme and host only, for targets
// whose path is a secret (a Slack incoming webhook's path is its token).
func WithoutURLPath() TransportOption { return func(t *tracingTransport) { t.hidePath = true } }

type tracingTransport struct {
	base     http.RoundTripper
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	hidePath bool
}

// RoundTrip implements http.RoundTripper.
func (t *tracingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, span := t.tracer.Start(r.Context(), semconvMethod(r.Method),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(clientAttrs(r, t.hidePath)...))
	defer span.End()
	out := r.Clone(ctx) // a RoundTripper must not modify the caller's request
	t.prop.Inject(ctx, propagation.HeaderCarrier(out.Header))
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		kind := errorType(err)
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind) // not err's text: it may hold a URL
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= http.StatusBadRequest {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	return resp, err
}

// clientAttrs returns a client span's request attributes; hidePath leaves
// the path out of url.full.
func clientAttrs(r *http.Request, hidePath bool) []attribute.KeyValue {
	host, port := splitHostPort(r.URL.Host)
	if port == 0 {
		port = 80
		if r.URL.Scheme == "https" {
			port = 443
		}
	}
	return []attribute.KeyValue{
		attribute.String("http.request.method", semconvMethod(r.Method)),
		attribute.String("server.address", host),
		attribute.Int("server.port", port),
		attribute.String("url.full", fullURL(r.URL, hidePath)),
	}
}

// fullURL is u without userinfo, query string and fragment (and without
// its path when hidePath).
func fullURL(u *url.URL, hidePath bool) string {
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	if hidePath {
		clean.Path, clean.RawPath = "", ""
	}
	return clean.String()
}

// errorType is the low-cardinality error.type of a failed round trip.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

// TraceLogHandler wraps h so that every record logged with a context
// holding a sampled span carries trace_id and span_id (32 and 16 lowercase
// hex characters) as its last attributes. Only sampled spans: a trace id
// in a log line always names a trace the collector was sent, and the
// requests the sampler leaves out (nine in ten at a ratio of 0.1) do not
// pay for copying the record and formatting the ids. The request id
// (X-Request-Id) ties every line to its request either way.
func TraceLogHandler(h slog.Handler) slog.Handler { return traceLogHandler{h} }

type traceLogHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		r = r.Clone() // the caller's copy may share its attribute array
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h traceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{h.Handler.WithGroup(name)}
}
