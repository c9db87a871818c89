package schedule_test

import (
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestScheduledRunRequestedByNull runs a tracked company through the real
// analyzer and store: the analysis a scheduled run stores records no
// requester (requested_by NULL), beside one a user asked for.
func TestScheduledRunRequestedByNull(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			var an schedule.Analyzer
			r := newRigWith(t, d, time.Now, func(st *store.Store) schedule.Analyzer {
				w := analysistest.NewWorld(t, st)
				w.Company("Acme Corp", 1)
				an = w.Analyzer(nil)
				return an
			}, schedule.Config{Interval: time.Hour, Threshold: 20})
			st := r.st
			if res := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{RequestedBy: "5"}); !res.Success {
				t.Fatalf("user's analysis = %+v", res)
			}
			if _, err := storetest.Track(ctx, st, "Acme Corp", time.Now()); err != nil {
				t.Fatal(err)
			}
			r.settle(t) // a newly tracked company's first run is queued with it
			recs := analysistest.Analyses(t, st)
			if len(recs) != 2 || recs[0].RequestedBy != "5" || recs[1].RequestedBy != "" {
				t.Fatalf("stored analyses = %+v, want the user's (requested by \"5\") then the scheduled run's (none)", recs)
			}
		})
	}
}
