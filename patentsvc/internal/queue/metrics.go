package queue

import (
	"context"
	"database/sql"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// metricsTimeout bounds the queries of one scrape.
const metricsTimeout = time.Second

// The states a unit may be in while it is not done, as River names them.
var waitingStates = []string{"available", "pending", "retryable", "scheduled", "running"}

// kinds are the kinds of unit, for the metrics' series.
var kinds = []string{patent.KindScheduledRun, patent.KindJobStart, patent.KindDelivery}

// RegisterMetrics registers the queue's metrics in reg, read from the
// database at scrape time (so every replica shows the whole cluster's
// queue): patentsvc_queue_units{kind,state}, the units of each kind not
// done (available: due and waiting for a worker; scheduled and retryable:
// waiting for their time; running), and
// patentsvc_queue_oldest_available_seconds{kind}, how long the oldest unit
// of each kind that is due has waited for a worker (0 when none waits). A
// scrape whose queries do not answer within a second reports neither.
// base's values carry over to the queries, not its cancellation.
func (q *Queue) RegisterMetrics(base context.Context, reg prometheus.Registerer) {
	reg.MustRegister(&collector{q: q, base: context.WithoutCancel(base),
		units: prometheus.NewDesc("patentsvc_queue_units",
			"Units of the work queue not done, by kind (scheduled_run, job_start, webhook_delivery) and River state, across every replica.",
			[]string{"kind", "state"}, nil),
		oldest: prometheus.NewDesc("patentsvc_queue_oldest_available_seconds",
			"How long the oldest due unit of each kind has waited for a worker, in seconds (0 when none waits).",
			[]string{"kind"}, nil)})
}

type collector struct {
	q             *Queue
	base          context.Context
	units, oldest *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.units
	ch <- c.oldest
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(c.base, metricsTimeout)
	defer cancel()
	counts, ages, err := c.q.stats(ctx)
	if err != nil {
		return
	}
	for _, k := range kinds {
		for _, s := range waitingStates {
			ch <- prometheus.MustNewConstMetric(c.units, prometheus.GaugeValue, float64(counts[k+"/"+s]), k, s)
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, ages[k], k)
	}
}

// stats counts the units not done by "kind/state", and gives the age in
// seconds of each kind's oldest available unit.
func (q *Queue) stats(ctx context.Context) (map[string]int64, map[string]float64, error) {
	age := "EXTRACT(EPOCH FROM (now() - MIN(scheduled_at)))"
	if q.dialect == SQLite {
		age = "(julianday('now') - julianday(MIN(scheduled_at))) * 86400"
	}
	rows, err := q.db.QueryContext(ctx, "SELECT kind, state, COUNT(*), "+age+" FROM river_job"+
		" WHERE state IN ('available', 'pending', 'retryable', 'scheduled', 'running') GROUP BY kind, state")
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	counts, ages := map[string]int64{}, map[string]float64{}
	for rows.Next() {
		var kind, state string
		var n int64
		var oldest sql.NullFloat64
		if err := rows.Scan(&kind, &state, &n, &oldest); err != nil {
			return nil, nil, err
		}
		counts[kind+"/"+state] = n
		if state == "available" && oldest.Valid {
			ages[kind] = max(oldest.Float64, 0)
		}
	}
	return counts, ages, rows.Err()
}
