package schedule_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestNewPatentAlerts: with NEW_PATENT_ALERTS a run that finds patents no
// earlier run saw raises a new_patents alert (not on the baseline, not for
// drops, not for a patent that comes back); without it no such alert is
// raised, and the history still records the new and dropped patents.
func TestNewPatentAlerts(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
			fake := newFake()
			log := &alertLog{}
			// The count rule never fires: only the new patents rule is seen.
			r := newRig(t, store.SQLite, clk.Now, schedule.Config{Interval: time.Hour, Threshold: 1000, NewPatentAlerts: on}, fake, log)
			round := func(ids ...string) {
				t.Helper()
				fake.mu.Lock()
				fake.pubs["Acme"], fake.counts["Acme"] = ids, len(ids)
				fake.mu.Unlock()
				if _, err := r.st.Tracking().TrackedCompany(ctx, 1); err != nil {
					storetest.Track(ctx, r.st, "Acme", clk.Now())
					r.settle(t)
				} else {
					r.tick(t)
				}
				clk.Advance(time.Hour)
			}
			round("A1", "B1")             // baseline
			round("N1", "A1", "B1", "N2") // two new
			round("A1", "N1", "N2")       // B1 dropped
			round("A1", "B1", "N1", "N2") // B1 back: neither
			var newAlerts []patent.Alert
			for _, a := range log.all() {
				if a.AlertType == patent.AlertTypeNewPatents {
					newAlerts = append(newAlerts, a)
				}
			}
			if !on {
				if len(newAlerts) != 0 {
					t.Errorf("NEW_PATENT_ALERTS=false raised %+v", newAlerts)
				}
			} else if len(newAlerts) != 1 || newAlerts[0].NewValue != 2 || newAlerts[0].OldValue != 2 ||
				len(newAlerts[0].Patents) != 2 || newAlerts[0].Patents[0].PatentID != "N1" || newAlerts[0].Patents[1].PatentID != "N2" {
				t.Errorf("new_patents alerts = %+v, want one for N1 and N2", newAlerts)
			}
			_, runs, err := r.st.Tracking().TrackingHistory(ctx, "Acme", time.Time{})
			if err != nil || len(runs) != 4 {
				t.Fatalf("history = %+v, %v", runs, err)
			}
			var got [][2][]string
			for _, run := range runs {
				got = append(got, [2][]string{run.NewPatents, run.DroppedPatents})
			}
			want := [][2][]string{{{}, {}}, {{"N1", "N2"}, {}}, {{}, {"B1"}}, {{}, {}}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("history new/dropped = %q, want %q", got, want)
			}
			if runs[1].Alert != on || runs[2].Alert {
				t.Errorf("alert flags = %v %v, want %v false", runs[1].Alert, runs[2].Alert, on)
			}
		})
	}
}

// TestBaselineAfterMigration: a company tracked before runs kept what they
// saw (migration 0011: analysed before, no seen_since, no seen patents) is
// not told that its whole first page is new. An empty answer does not
// start its baseline; its next answer with patents does, and only later
// patents are new.
func TestBaselineAfterMigration(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	fake := newFake()
	log := &alertLog{}
	r := newRig(t, store.SQLite, clk.Now, schedule.Config{Interval: time.Hour, Threshold: 1000, NewPatentAlerts: true}, fake, log)
	answer := func(ids ...string) {
		fake.mu.Lock()
		fake.pubs["Acme"], fake.counts["Acme"] = ids, 5
		fake.mu.Unlock()
	}
	answer("A1")
	storetest.Track(ctx, r.st, "Acme", clk.Now())
	r.settle(t)
	// The state migration 0011 leaves a company analysed before it in.
	db, err := r.st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"UPDATE tracked_companies SET seen_since = NULL", "DELETE FROM tracked_patents"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, ids := range [][]string{{}, {"A1", "B1", "C1"}, {"A1", "B1", "C1", "D1"}} {
		clk.Advance(time.Hour)
		answer(ids...)
		r.tick(t)
	}
	var newAlerts []patent.Alert
	for _, a := range log.all() {
		if a.AlertType == patent.AlertTypeNewPatents {
			newAlerts = append(newAlerts, a)
		}
	}
	if len(newAlerts) != 1 || len(newAlerts[0].Patents) != 1 || newAlerts[0].Patents[0].PatentID != "D1" {
		t.Errorf("new_patents alerts = %+v, want one, for D1 alone", newAlerts)
	}
	_, runs, _ := r.st.Tracking().TrackingHistory(ctx, "Acme", time.Time{})
	if len(runs) != 4 || len(runs[1].NewPatents)+len(runs[2].NewPatents) != 0 || !reflect.DeepEqual(runs[3].NewPatents, []string{"D1"}) {
		t.Errorf("history = %+v", runs)
	}
}
