package schedule_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestScheduledRunRequestedByNull runs a tracked company through the real
// analyzer and store: the analysis a scheduled run stores records no
// requester (requested_by NULL), beside one a user asked for.
func TestScheduledRunRequestedByNull(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			st := storetest.Open(t, d, time.Now)
			w := analysistest.NewWorld(t, st)
			w.Company("Acme Corp", 1)
			an := w.Analyzer(nil)
			if r := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{RequestedBy: "5"}); !r.Success {
				t.Fatalf("user's analysis = %+v", r)
			}
			sched, err := schedule.New(t.Context(), schedule.Config{Interval: time.Hour, Threshold: 20}, st, an, st.Elector(),
				nil, slog.New(slog.DiscardHandler), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateTracked(ctx, "Acme Corp"); err != nil {
				t.Fatal(err)
			}
			sched.Dispatch() // a newly tracked company is due at once
			recs := analysistest.Analyses(t, st)
			if len(recs) != 2 || recs[0].RequestedBy != "5" || recs[1].RequestedBy != "" {
				t.Fatalf("stored analyses = %+v, want the user's (requested by \"5\") then the scheduled run's (none)", recs)
			}
		})
	}
}
