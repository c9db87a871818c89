package vpic

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	opDecode = "decode"
	opBatch  = "batch"
	opProbe  = "probe"

	outcomeOK        = "ok"
	outcomeNetwork   = "network_error"
	outcomeStatus    = "http_error"
	outcomeBadAnswer = "bad_answer"
)

// Metrics counts upstream calls. A nil *Metrics records nothing.
type Metrics struct {
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	retries *prometheus.CounterVec
}

// NewMetrics registers the upstream metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vinsvc_upstream_requests_total",
			Help: "Calls to vPIC (all attempts of one call count once), by operation and outcome.",
		}, []string{"operation", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vinsvc_upstream_request_duration_seconds",
			Help:    "Duration of calls to vPIC including retries and pacing waits, by operation.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40},
		}, []string{"operation"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vinsvc_upstream_retries_total",
			Help: "Retried attempts to vPIC, by operation.",
		}, []string{"operation"}),
	}
	reg.MustRegister(m.calls, m.latency, m.retries)
	return m
}

func (m *Metrics) observe(op, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(op, outcome).Inc()
	m.latency.WithLabelValues(op).Observe(d.Seconds())
}

func (m *Metrics) retry(op string) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(op).Inc()
}

type opKey struct{}

func withOp(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

func opFromContext(ctx context.Context) string {
	op, _ := ctx.Value(opKey{}).(string)
	return op
}
