package httpapi

import "github.com/prometheus/client_golang/prometheus"

// registerMetrics adds the cache and upstream-state metrics, read from
// their sources at scrape time so they never drift.
func registerMetrics(reg prometheus.Registerer, dec Decoder, cache Cache, monitor UpstreamMonitor) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vinsvc_cache_hits_total",
			Help: "VIN lookups answered from the cache (each VIN of a request once).",
		}, func() float64 { h, _ := dec.Counts(); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vinsvc_cache_misses_total",
			Help: "VIN lookups the cache could not answer.",
		}, func() float64 { _, m := dec.Counts(); return float64(m) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vinsvc_cache_entries",
			Help: "Decoded VINs in the cache.",
		}, func() float64 { return float64(cache.Stats().Entries) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vinsvc_cache_size_bytes",
			Help: "Size of the bbolt cache file.",
		}, func() float64 { return float64(cache.Stats().SizeBytes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vinsvc_cache_evictions_total",
			Help: "Expired entries deleted by the sweep.",
		}, func() float64 { return float64(cache.Stats().Evictions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "vinsvc_decodes_total",
			Help:        "VINs answered, by source: cache, vpic (a fresh vPIC answer) or snapshot (a fresh snapshot answer).",
			ConstLabels: prometheus.Labels{"source": "cache"},
		}, func() float64 { h, _ := dec.Counts(); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "vinsvc_decodes_total",
			Help:        "VINs answered, by source: cache, vpic (a fresh vPIC answer) or snapshot (a fresh snapshot answer).",
			ConstLabels: prometheus.Labels{"source": "vpic"},
		}, func() float64 { v, _ := dec.SourceCounts(); return float64(v) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "vinsvc_decodes_total",
			Help:        "VINs answered, by source: cache, vpic (a fresh vPIC answer) or snapshot (a fresh snapshot answer).",
			ConstLabels: prometheus.Labels{"source": "snapshot"},
		}, func() float64 { _, s := dec.SourceCounts(); return float64(s) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vinsvc_snapshot_errors_total",
			Help: "Snapshot reads that failed (VINs the snapshot does not know are not counted).",
		}, func() float64 { return float64(dec.SnapshotErrors()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vinsvc_upstream_reachable",
			Help: "1 when the last upstream check succeeded, else 0.",
		}, func() float64 {
			if monitor.State().Reachable {
				return 1
			}
			return 0
		}),
	)
}
