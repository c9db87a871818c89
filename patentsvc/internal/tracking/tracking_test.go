package tracking_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/tracking"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// TestTrackQueuesTheFirstRunAtOnce: tracking a company makes it due now
// and queues its first scheduled run with it, carrying its due time, its
// name and the request's trace parent; a second spelling of the name is
// the company tracked already; untracking cancels the run.
func TestTrackQueuesTheFirstRunAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		tr := tracking.New(st.Tracking(), clock)
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
		ctx := trace.ContextWithSpanContext(context.Background(), sc)

		c, err := tr.Track(ctx, "Acme Corp")
		if err != nil {
			t.Fatal(err)
		}
		if !c.NextRunAt.Equal(now) || c.LastAnalysisAt != nil {
			t.Errorf("tracked %+v: want due now (%v), never analysed", c, now)
		}
		units := storetest.Units(t, st, patent.KindScheduledRun)
		if len(units) != 1 {
			t.Fatalf("%d scheduled-run units queued, want 1", len(units))
		}
		var run patent.ScheduledRun
		if err := json.Unmarshal([]byte(units[0].Args), &run); err != nil {
			t.Fatal(err)
		}
		if run.TrackedID != c.ID || !run.DueAt.Equal(now) || run.CompanyName != "Acme Corp" || len(run.AlertIDs) != patent.AlertsPerRun {
			t.Errorf("first run %+v: want company %d due %v with %d alert ids", run, c.ID, now, patent.AlertsPerRun)
		}
		if want := "00-01000000000000000000000000000000-0200000000000000-01"; run.TraceParent != want {
			t.Errorf("first run's trace parent %q, want the request's %q", run.TraceParent, want)
		}

		var dup *patent.AlreadyTrackedError
		if _, err := tr.Track(ctx, "ACME CORP"); !errors.As(err, &dup) || dup.Tracked.ID != c.ID {
			t.Errorf("tracking ACME CORP again: %v, want an AlreadyTrackedError carrying company %d", err, c.ID)
		}
		if list, err := tr.Tracked(ctx); err != nil || len(list) != 1 {
			t.Errorf("Tracked = %d companies, %v; want 1", len(list), err)
		}

		if err := tr.Untrack(ctx, "acme corp"); err != nil {
			t.Fatal(err)
		}
		if u := storetest.Units(t, st, patent.KindScheduledRun); len(u) != 1 || u[0].State != "cancelled" {
			t.Errorf("after untracking, units %+v: want the first run cancelled", u)
		}
		if err := tr.Untrack(ctx, "Acme Corp"); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("untracking again: %v, want ErrNotFound", err)
		}
		if _, _, err := tr.History(ctx, "Acme Corp", 30); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("history of an untracked company: %v, want ErrNotFound", err)
		}
	})
}
