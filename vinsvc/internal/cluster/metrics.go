package cluster

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts what Redis did for the service. A nil *Metrics records
// nothing.
type Metrics struct {
	up        prometheus.Gauge
	errors    prometheus.Counter
	outages   prometheus.Counter
	tierHits  *prometheus.CounterVec
	lockWaits *prometheus.CounterVec
	// The tier counters, resolved once: the local one is on the hit path.
	localHits, redisHits prometheus.Counter
}

// NewMetrics registers the Redis metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vinsvc_redis_up",
			Help: "1 while Redis answers, 0 during an outage (the service then runs on per-process limits and its own cache).",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vinsvc_redis_errors_total",
			Help: "Redis commands that failed or timed out (REDIS_TIMEOUT).",
		}),
		outages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vinsvc_redis_outages_total",
			Help: "Redis outages seen (a failure after a success).",
		}),
		tierHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vinsvc_cache_tier_hits_total",
			Help: "Cache hits by tier: local (the pod's bbolt file) or redis (the shared second tier).",
		}, []string{"tier"}),
		lockWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vinsvc_upstream_lock_waits_total",
			Help: "Misses that waited for another replica's vPIC call, by outcome: filled (its answer arrived), released (it let go without an answer) or timeout; after the last two this pod calls vPIC itself.",
		}, []string{"outcome"}),
	}
	reg.MustRegister(m.up, m.errors, m.outages, m.tierHits, m.lockWaits)
	m.localHits, m.redisHits = m.tierHits.WithLabelValues(tierLocal), m.tierHits.WithLabelValues(tierRedis)
	return m
}

func (m *Metrics) setUp(up bool) {
	if m == nil {
		return
	}
	if up {
		m.up.Set(1)
	} else {
		m.up.Set(0)
	}
}

func (m *Metrics) error() {
	if m != nil {
		m.errors.Inc()
	}
}

func (m *Metrics) outage() {
	if m != nil {
		m.outages.Inc()
	}
}

const (
	tierLocal = "local"
	tierRedis = "redis"
)

func (m *Metrics) tierHit(tier string) {
	switch {
	case m == nil:
	case tier == tierLocal:
		m.localHits.Inc()
	default:
		m.redisHits.Inc()
	}
}

func (m *Metrics) lockWait(outcome string) {
	if m != nil {
		m.lockWaits.WithLabelValues(outcome).Inc()
	}
}
