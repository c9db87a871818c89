package httpapi

import "github.com/prometheus/client_golang/prometheus"

// registerMetrics registers the service's own metrics in reg (the HTTP
// ones come from observe). The rate-limit store's errors are registered
// whether or not the windows are shared, so dashboards find the series (at
// 0) on every deployment.
func registerMetrics(reg prometheus.Registerer, limits Limits) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "patentsvc_ratelimit_store_errors_total",
		Help: "Calls to the rate-limit windows' database store that failed or timed out; a failed check lets the process's own window decide that request (fail open).",
	}, func() float64 {
		if limits.Cluster == nil {
			return 0
		}
		return float64(limits.Cluster.Errors())
	}))
}
