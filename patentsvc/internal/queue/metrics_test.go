package queue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestMetrics: the queue's gauges count the units not done by kind and
// state, across the database, and tell how long the oldest due unit has
// waited.
func TestMetrics(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			st := storetest.OpenAt(t, d, dsn, time.Now)
			q := storetest.NewQueue(t, st, dsn, queue.Config{}, queue.Workers{}) // no workers: units wait
			for _, name := range []patent.CompanyName{"Acme", "Beta"} {
				if _, err := storetest.Track(context.Background(), st, name, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.Jobs().CreateJob(context.Background(), patent.Job{ID: "j1", UserID: 1, Companies: []string{"Acme"}}, 0, 0); err != nil {
				t.Fatal(err)
			}
			backdate(t, st, 1100*time.Millisecond) // the oldest unit has waited a second
			reg := prometheus.NewRegistry()
			q.RegisterMetrics(context.Background(), reg)
			want := `
# HELP patentsvc_queue_units Units of the work queue not done, by kind (scheduled_run, job_start, webhook_delivery) and River state, across every replica.
# TYPE patentsvc_queue_units gauge
patentsvc_queue_units{kind="job_start",state="available"} 1
patentsvc_queue_units{kind="scheduled_run",state="available"} 2
patentsvc_queue_units{kind="webhook_delivery",state="available"} 0
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want+metricLines(reg)), "patentsvc_queue_units"); err != nil {
				t.Error(err)
			}
			mfs, _ := reg.Gather()
			for _, mf := range mfs {
				if mf.GetName() != "patentsvc_queue_oldest_available_seconds" {
					continue
				}
				for _, m := range mf.Metric {
					kind, age := m.Label[0].GetValue(), m.Gauge.GetValue()
					if waiting := kind != patent.KindDelivery; waiting != (age >= 1 && age < 60) {
						t.Errorf("oldest available %s waited %.2fs", kind, age)
					}
				}
			}
		})
	}
}

// backdate makes every unit of the queue due d before now, as if it had
// waited d for a worker since.
func backdate(tb testing.TB, st *store.Store, d time.Duration) {
	tb.Helper()
	db, err := st.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	var at any = time.Now().Add(-d).UTC()
	q := "UPDATE river_job SET scheduled_at = $1"
	if st.Dialect() == store.SQLite {
		at, q = at.(time.Time).Format("2006-01-02 15:04:05.000"), "UPDATE river_job SET scheduled_at = ?" // River's text times there
	}
	if _, err := db.ExecContext(context.Background(), q, at); err != nil {
		tb.Fatalf("backdate the units: %v", err)
	}
}

// metricLines are the zero series of the states the test does not set.
func metricLines(reg *prometheus.Registry) string {
	var b strings.Builder
	for _, k := range []string{"job_start", "scheduled_run", "webhook_delivery"} {
		for _, s := range []string{"pending", "retryable", "running", "scheduled"} {
			b.WriteString(`patentsvc_queue_units{kind="` + k + `",state="` + s + `"} 0` + "\n")
		}
	}
	return b.String()
}
