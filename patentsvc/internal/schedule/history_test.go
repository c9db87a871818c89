package schedule_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestRunsHistory: every scheduled run that reports back adds a row to
// the company's history, at the run's time, with its count (none when the
// search failed), its success, and whether it raised the alert stored
// with it; the alert's webhook deliveries are composed with it.
func TestRunsHistory(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			clk := &clock{t: start}
			fake := newFake()
			log := &alertLog{}
			r := newRig(t, d, clk.Now, schedule.Config{Interval: time.Hour, Threshold: 20}, fake, log)
			st := r.st
			var want []string
			round := func(n int, fail bool, line string) {
				t.Helper()
				fake.mu.Lock()
				fake.counts["Acme"], fake.fail["Acme"] = n, fail
				fake.mu.Unlock()
				if len(want) == 0 {
					storetest.Track(ctx, st, "Acme", clk.Now()) // the first run is queued with the company
					r.settle(t)
				} else {
					r.tick(t)
				}
				want = append(want, clk.Now().Format(time.RFC3339)+" "+line)
				clk.Advance(time.Hour)
			}
			round(10, false, "10 success alert=false") // the baseline never alerts
			round(14, false, "14 success alert=true")  // +40%
			round(15, false, "15 success alert=false") // +7.1%
			round(99, true, "null failed alert=false") // the search failed
			// Retried after the back-off (1 min), within the hour.
			round(9, false, "9 success alert=true") // -40% from 15

			_, runs, err := st.Tracking().TrackingHistory(ctx, "acme", start)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				c, ok := "null", "failed"
				if r.PatentCount != nil {
					c = fmt.Sprint(*r.PatentCount)
				}
				if r.Success {
					ok = "success"
				}
				got = append(got, fmt.Sprintf("%s %s %s alert=%t", r.RunAt.Format(time.RFC3339), c, ok, r.Alert))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if alerts, _ := st.Tracking().ListAlerts(ctx, 10); len(alerts) != 2 || len(log.all()) != 2 {
				t.Errorf("%d alerts stored, %d composed, want 2 and 2", len(alerts), len(log.all()))
			}
		})
	}
}

var _ schedule.Store = store.Tracking{}
