// Package observe holds the middleware that makes a request visible: one
// JSON access-log line and one Prometheus observation per request, written
// from the same final values so logs and metrics never disagree, plus panic
// recovery that logs the stack through slog, and OpenTelemetry tracing
// (tracing.go): the setup from the OTEL_* variables, the server-span
// middleware, the client-span transport and the log handler that adds
// trace_id and span_id to a traced request's lines.
//
// Requests are labelled by route pattern (e.g. /v1/decode), never by raw
// URL, so label cardinality stays bounded; requests that match no route are
// labelled "unmatched".
package observe

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/shared/requestid"
)

// UnmatchedRoute labels requests that matched no route.
const UnmatchedRoute = "unmatched"

// Metrics holds the HTTP request metrics common to both services.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// series caches each label set's counter and histogram, so that a
	// request costs one map lookup instead of two label hashes and
	// validations in the vectors (and no strconv of the status). The
	// label sets are the vectors' own, so the map is as bounded as they
	// are; nothing deletes from the vectors, so an entry never goes stale.
	// The map is never changed once published: a new label set copies it
	// under mu, so a request reads it without a lock (a read lock's
	// shared counter, taken on every request, was itself contended).
	mu     sync.Mutex
	series atomic.Pointer[map[seriesKey]*series]
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
	// exemplarAt is when each latency bucket (the last one is +Inf) last
	// got an exemplar, in Unix nanoseconds.
	exemplarAt [len(latencyBuckets) + 1]atomic.Int64
}

// latencyBuckets are the latency histogram's upper bounds, in seconds.
var latencyBuckets = [...]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// ExemplarInterval is the least time between two exemplars of one bucket
// of one series. A bucket keeps only its latest exemplar and Prometheus
// reads it once per scrape (every 15 s or more), so one a second shows as
// much as one per request, and a sampled request in a busy bucket does not
// pay for a label map, its trace id's text and the exemplar's own copy.
const ExemplarInterval = time.Second

// observe counts one request and its latency under its labels. When the
// request's span is sampled, the latency carries the trace id as an
// exemplar (exposed in the OpenMetrics format only), at most once per
// ExemplarInterval per bucket; end is when the request ended.
func (m *Metrics) observe(ctx context.Context, route, method string, status int, latency time.Duration, end time.Time) {
	k := seriesKey{route, method, status}
	s, ok := (*m.series.Load())[k]
	if !ok {
		s = m.newSeries(k)
	}
	s.requests.Inc()
	secs := latency.Seconds()
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		at := &s.exemplarAt[sort.SearchFloat64s(latencyBuckets[:], secs)]
		last, now := at.Load(), end.UnixNano()
		if eo, ok := s.latency.(prometheus.ExemplarObserver); ok && now-last >= int64(ExemplarInterval) && at.CompareAndSwap(last, now) {
			eo.ObserveWithExemplar(secs, prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	s.latency.Observe(secs)
}

// newSeries returns k's series, adding it to a copy of the map when it
// is new.
func (m *Metrics) newSeries(k seriesKey) *series {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if s, ok := old[k]; ok { // added while this request waited for the lock
		return s
	}
	code := strconv.Itoa(k.status)
	s := &series{requests: m.requests.WithLabelValues(k.route, k.method, code), latency: m.latency.WithLabelValues(k.route, k.method, code)}
	next := make(map[seriesKey]*series, len(old)+1)
	maps.Copy(next, old)
	next[k] = s
	m.series.Store(&next)
	return s
}

// NewRegistry returns a registry with the Go runtime and process collectors,
// the base every service registers its own metrics in. Using a registry per
// server, not the global one, keeps tests independent.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// NewMetrics registers the HTTP metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by route pattern, method and status.",
			Buckets: latencyBuckets[:],
		}, []string{"route", "method", "status"}),
	}
	m.series.Store(&map[seriesKey]*series{})
	reg.MustRegister(m.requests, m.latency)
	return m
}

// Handler serves the registry in the Prometheus exposition format, or in
// the OpenMetrics format to a scraper that asks for it (Accept), which is
// the one that carries the latency histogram's trace-id exemplars.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, EnableOpenMetrics: true})
}

// Middleware writes the access-log line and the metrics for every request.
// It must run after requestid.Middleware and before Recover. It forwards the
// handler's error to Echo's error handler first (HandleError), so the status
// it records is the one the client received.
func Middleware(logger *slog.Logger, m *Metrics) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		HandleError:  true,
		LogLatency:   true,
		LogStatus:    true,
		LogMethod:    true,
		LogRoutePath: true,
		LogURIPath:   true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			route := v.RoutePath
			if route == "" {
				route = UnmatchedRoute
			}
			ctx := c.Request().Context()
			// Known methods by name, any other as _OTHER: a client inventing
			// methods (Echo answers them 405) must not add series.
			method := semconvMethod(v.Method)
			end := v.StartTime.Add(v.Latency)
			m.observe(ctx, route, method, v.Status, v.Latency, end)

			line := accessLine{end: end, level: slog.LevelInfo, requestID: requestid.FromContext(ctx),
				method: method, route: route, status: v.Status, latency: v.Latency, path: v.URIPath}
			if v.Status >= http.StatusInternalServerError {
				line.level = slog.LevelWarn
			}
			// As LogAttrs: a handler's error goes nowhere.
			if h := logger.Handler(); !h.Enabled(ctx, line.level) {
				return nil
			} else if lh, ok := h.(*logHandler); ok {
				_ = lh.writeAccess(ctx, &line)
			} else {
				_ = h.Handle(ctx, line.record())
			}
			return nil
		},
	})
}

// record is the access line as a slog record, for a handler other than
// NewLogHandler's. It has no caller's pc: logger.LogAttrs would walk the
// stack for one (runtime.Callers) on every request, for a source the
// access line never shows.
func (l *accessLine) record() slog.Record {
	attrs := [...]slog.Attr{
		slog.String("request_id", l.requestID),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.Int("status", l.status),
		slog.Float64("latency_ms", latencyMillis(l.latency)),
		{},
	}
	n := 5 // five attributes fit in a slog.Record without allocating
	if l.route == UnmatchedRoute {
		attrs[5], n = slog.String("path", l.path), 6
	}
	r := slog.NewRecord(l.end, l.level, "request", 0)
	r.AddAttrs(attrs[:n]...)
	return r
}

// Recover turns a panic into an error that flows to Echo's error handler (a
// 500 with the service's error body), after logging the panic value and
// stack at ERROR with the request id.
func Recover(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			requestid.Logger(c.Request().Context(), logger).Error("panic recovered",
				"route", c.Path(), "err", err.Error(), "stack", string(stack))
			return err // returning nil would swallow the error and send nothing
		},
	})
}
