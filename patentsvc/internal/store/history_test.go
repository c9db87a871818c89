package store_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

func count(n int) *int { return &n }

// dueOf is tracked company id's current due time (zero once untracked).
func dueOf(t *testing.T, s *store.Store, id int64) time.Time {
	t.Helper()
	c, err := s.Tracking().TrackedCompany(ctx, id)
	if err != nil && !errors.Is(err, patent.ErrNotFound) {
		t.Fatal(err)
	}
	return c.NextRunAt
}

// recordRun records a run of company id at its current due time, as its
// scheduled run's unit would.
func recordRun(t *testing.T, s *store.Store, id int64, n int, at time.Time, failures int, next time.Time,
	alert *patent.Alert, deliveries []patent.Delivery) error {
	t.Helper()
	_, err := s.Tracking().RecordRun(ctx, id, dueOf(t, s, id), patent.RunOutcome{Count: n, At: at, Failures: failures, Next: next, Alerts: alertList(alert)}, deliveries)
	return err
}

// alertList is alert as RunOutcome.Alerts: none for nil.
func alertList(alert *patent.Alert) []patent.Alert {
	if alert == nil {
		return nil
	}
	return []patent.Alert{*alert}
}

// recordFailure records a failed run of company id at its current due time.
func recordFailure(t *testing.T, s *store.Store, id int64, at time.Time, failures int, next time.Time) error {
	t.Helper()
	_, err := s.Tracking().RecordFailure(ctx, id, dueOf(t, s, id), at, failures, next)
	return err
}

// mustHistory returns the runs of the company tracked as name since since.
func mustHistory(t *testing.T, s *store.Store, name patent.CompanyName, since time.Time) []patent.TrackingRun {
	t.Helper()
	_, runs, err := s.Tracking().TrackingHistory(ctx, name, since)
	if err != nil {
		t.Fatalf("TrackingHistory(%q) = %v", name, err)
	}
	return runs
}

// TestTrackingHistory: every recorded run adds a row to the company's
// history, with its count (none when the search failed), its success and
// whether it raised an alert; the history reads back oldest first, from
// since on, under the name in any letter case.
func TestTrackingHistory(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme Corp", time.Now())
		other, _ := storetest.Track(ctx, s, "Other", time.Now())
		t0 := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
		day := 24 * time.Hour
		if err := recordRun(t, s, acme.ID, 10, t0, 0, t0.Add(day), nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := recordFailure(t, s, acme.ID, t0.Add(day), 1, t0.Add(day+time.Minute)); err != nil {
			t.Fatal(err)
		}
		// Searched, then the analysis failed: a count, not a success.
		if err := recordRun(t, s, acme.ID, 11, t0.Add(day+time.Minute), 2, t0.Add(day+3*time.Minute), nil, nil); err != nil {
			t.Fatal(err)
		}
		alert := patent.Alert{CompanyName: "Acme Corp", AlertType: patent.AlertTypePatentCountChange, Message: "up", OldValue: 11, NewValue: 20}
		if err := recordRun(t, s, acme.ID, 20, t0.Add(2*day), 0, t0.Add(3*day), &alert, deliveriesOf("h", "https://a.example/h")); err != nil {
			t.Fatal(err)
		}
		if err := recordRun(t, s, other.ID, 99, t0, 0, t0.Add(day), nil, nil); err != nil {
			t.Fatal(err)
		}

		tc, runs, err := s.Tracking().TrackingHistory(ctx, "ACME corp", t0)
		if err != nil || tc.ID != acme.ID || tc.CompanyName != "Acme Corp" {
			t.Fatalf("TrackingHistory = %+v, %v, want Acme Corp", tc, err)
		}
		want := []patent.TrackingRun{
			{RunAt: t0, PatentCount: count(10), Success: true},
			{RunAt: t0.Add(day)},
			{RunAt: t0.Add(day + time.Minute), PatentCount: count(11)},
			{RunAt: t0.Add(2 * day), PatentCount: count(20), Success: true, Alert: true},
		}
		for i := range want { // no patent changes recorded: empty lists
			want[i].NewPatents, want[i].DroppedPatents = []string{}, []string{}
		}
		if !reflect.DeepEqual(runs, want) {
			t.Errorf("history =\n%s\nwant\n%s", runsText(runs), runsText(want))
		}
		if got := mustHistory(t, s, "Acme Corp", t0.Add(2*day)); !reflect.DeepEqual(got, want[3:]) {
			t.Errorf("history since the last run =\n%s\nwant\n%s", runsText(got), runsText(want[3:]))
		}
		if alerts, _ := s.Tracking().ListAlerts(ctx, 10); len(alerts) != 1 || alerts[0].Message != "up" || countDeliveries(t, s) != 1 {
			t.Errorf("alerts %+v with %d deliveries, want the run's alert and its delivery", alerts, countDeliveries(t, s))
		}
		if got := mustTrackedID(t, s, acme.ID); got.LastPatentCount != 20 || got.ConsecutiveFailures != 0 {
			t.Errorf("tracked company after the runs: %+v", got)
		}

		if _, _, err := s.Tracking().TrackingHistory(ctx, "Nobody", t0); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("TrackingHistory(untracked) = %v, want ErrNotFound", err)
		}
		// Untracking deletes the history; tracking again starts a new one.
		if err := s.Tracking().DeleteTracked(ctx, "acme corp"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Tracking().TrackingHistory(ctx, "Acme Corp", t0); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("TrackingHistory(untracked) = %v, want ErrNotFound", err)
		}
		if _, err := storetest.Track(ctx, s, "Acme Corp", time.Now()); err != nil {
			t.Fatal(err)
		}
		if runs := mustHistory(t, s, "Acme Corp", t0); len(runs) != 0 {
			t.Errorf("history of a company tracked again = %+v, want none", runs)
		}
		if runs := mustHistory(t, s, "Other", t0); len(runs) != 1 {
			t.Errorf("history of another company = %+v, want its one run", runs)
		}
	})
}

// TestRecordRunIsOneTransaction: the run, its history row, its alert and
// the alert's deliveries commit together or not at all; and a company
// untracked meanwhile records nothing, its alert neither.
func TestRecordRunIsOneTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme", time.Now())
		t0 := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
		if err := recordRun(t, s, acme.ID, 10, t0, 0, t0.Add(time.Hour), nil, nil); err != nil {
			t.Fatal(err)
		}
		before := mustTrackedID(t, s, acme.ID)
		alert := testAlert
		failing := deliveriesOf("dup", "https://a.example/h")
		failing = append(failing, failing[0]) // a duplicate id: the insert fails
		if err := recordRun(t, s, acme.ID, 20, t0.Add(time.Hour), 0, t0.Add(2*time.Hour), &alert, failing); err == nil {
			t.Fatal("RecordRun with a failing delivery insert = nil, want an error")
		}
		if got := mustTrackedID(t, s, acme.ID); got.LastPatentCount != 10 || !got.NextRunAt.Equal(before.NextRunAt) {
			t.Errorf("tracked company after a failed RecordRun: %+v, want it unchanged", got)
		}
		if runs := mustHistory(t, s, "Acme", t0); len(runs) != 1 {
			t.Errorf("history after a failed RecordRun: %+v, want the first run only", runs)
		}
		if alerts, _ := s.Tracking().ListAlerts(ctx, 10); len(alerts) != 0 || countDeliveries(t, s) != 0 {
			t.Errorf("after a failed RecordRun: %d alerts, %d deliveries, want none", len(alerts), countDeliveries(t, s))
		}

		if err := s.Tracking().DeleteTracked(ctx, "Acme"); err != nil {
			t.Fatal(err)
		}
		if err := recordRun(t, s, acme.ID, 30, t0.Add(time.Hour), 0, t0.Add(2*time.Hour), &alert, deliveriesOf("u", "https://a.example/h")); err != nil {
			t.Errorf("RecordRun(untracked) = %v, want nil", err)
		}
		if err := recordFailure(t, s, acme.ID, t0.Add(time.Hour), 1, t0.Add(2*time.Hour)); err != nil {
			t.Errorf("RecordFailure(untracked) = %v, want nil", err)
		}
		if alerts, _ := s.Tracking().ListAlerts(ctx, 10); len(alerts) != 0 || countDeliveries(t, s) != 0 {
			t.Errorf("after runs of an untracked company: %d alerts, %d deliveries, want none", len(alerts), countDeliveries(t, s))
		}
	})
}

// TestPruneTrackingRuns: runs before the cut-off go, in batches (more rows
// than one batch), of every company; later ones stay.
func TestPruneTrackingRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme", time.Now())
		beta, _ := storetest.Track(ctx, s, "Beta", time.Now())
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		const n = 1300 // per company: 2,600 rows, three batches of 1,000
		for i := range n {
			at := t0.Add(time.Duration(i) * time.Minute)
			for _, id := range []int64{acme.ID, beta.ID} {
				if err := recordRun(t, s, id, i, at, 0, at.Add(time.Minute), nil, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		cut := t0.Add(1100 * time.Minute) // the first 1,100 runs of each
		got, err := s.Tracking().PruneTrackingRuns(ctx, cut)
		if err != nil || got != 2200 {
			t.Fatalf("PruneTrackingRuns = %d, %v, want 2200", got, err)
		}
		for _, name := range []patent.CompanyName{"Acme", "Beta"} {
			runs := mustHistory(t, s, name, t0)
			if len(runs) != n-1100 || !runs[0].RunAt.Equal(cut) {
				t.Errorf("%s after the prune: %d runs from %v, want %d from %v", name, len(runs), runs[0].RunAt, n-1100, cut)
			}
		}
		if got, err := s.Tracking().PruneTrackingRuns(ctx, cut); err != nil || got != 0 {
			t.Errorf("second PruneTrackingRuns = %d, %v, want 0", got, err)
		}
	})
}

// TestAnalysesPerMonth: the company's non-cached analyses (any letter
// case) per calendar month in UTC, every month from since's to now's,
// empty ones included.
func TestAnalysesPerMonth(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			now := time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)
			s := storetest.Open(t, d, func() time.Time { return now })
			for _, a := range []struct {
				company string
				at      time.Time
				cached  bool
			}{
				{"Acme", time.Date(2025, 12, 31, 23, 59, 0, 0, time.UTC), false}, // before since
				{"Acme", time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), false},
				{"ACME", time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC), false},
				{"Acme", time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC), true}, // cached
				{"Acme", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), false},
				{"Beta", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), false},
				{"Acme", time.Date(2026, 4, 15, 11, 0, 0, 0, time.UTC), false},
			} {
				if _, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: a.company, AnalysisType: patent.AnalysisPortfolio,
					Cached: a.cached, Timestamp: a.at}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Analyses().AnalysesPerMonth(ctx, "acme", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			want := []patent.MonthCount{
				{Month: "2026-01", Key: "acme", Count: 2},
				{Month: "2026-02", Key: "acme", Count: 0},
				{Month: "2026-03", Key: "acme", Count: 1},
				{Month: "2026-04", Key: "acme", Count: 1},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("AnalysesPerMonth = %+v, want %+v", got, want)
			}
		})
	}
}

// mustTrackedID returns the tracked company whose id is id.
func mustTrackedID(t *testing.T, s *store.Store, id int64) patent.TrackedCompany {
	t.Helper()
	list, err := s.Tracking().ListTracked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("tracked company %d not found", id)
	return patent.TrackedCompany{}
}

// runsText shows runs one a line, counts by value.
func runsText(runs []patent.TrackingRun) string {
	var b strings.Builder
	for _, r := range runs {
		c := "null"
		if r.PatentCount != nil {
			c = fmt.Sprint(*r.PatentCount)
		}
		fmt.Fprintf(&b, "  %s count=%s success=%t alert=%t\n", r.RunAt.Format(time.RFC3339), c, r.Success, r.Alert)
	}
	return b.String()
}

// TestPatentChanges: RecordRun keeps what a run saw (SeenPatents: every
// id, the last run's, since when), its new and dropped patents in the
// history, and ListChanges lists the changed runs of tracked companies
// since a time, newest first, a page at a time; untracking forgets them.
func TestPatentChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, _ := storetest.Track(ctx, s, "Acme", time.Now())
		beta, _ := storetest.Track(ctx, s, "Beta", time.Now())
		seen, err := s.Tracking().SeenPatents(ctx, acme.ID, []string{"A1"})
		if err != nil || seen.Since != nil || len(seen.Known) != 0 || len(seen.Last) != 0 {
			t.Fatalf("SeenPatents before any run = %+v, %v", seen, err)
		}
		t0 := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
		record := func(id int64, at time.Time, ids []string, ch patent.PatentChanges) {
			t.Helper()
			baseline := at.Equal(t0) || at.Equal(t0.Add(90*time.Minute)) // each company's first run
			out := patent.RunOutcome{Count: len(ids), At: at, Next: at.Add(time.Hour), Seen: ids, Changes: ch, Baseline: baseline}
			if ok, err := s.Tracking().RecordRun(ctx, id, dueOf(t, s, id), out, nil); !ok || err != nil {
				t.Fatalf("RecordRun = %v, %v", ok, err)
			}
		}
		record(acme.ID, t0, []string{"A1", "B1", "A1"}, patent.PatentChanges{})
		seen, _ = s.Tracking().SeenPatents(ctx, acme.ID, []string{"A1", "Z9"})
		if seen.Since == nil || !seen.Since.Equal(t0) || !reflect.DeepEqual(seen.Last, []string{"A1", "B1"}) ||
			!reflect.DeepEqual(seen.Known, map[string]bool{"A1": true}) {
			t.Fatalf("SeenPatents after the baseline = %+v", seen)
		}
		n1 := patent.Publication{PatentID: "N1", Title: "New one", PublicationDate: "2026-10-30", PDFLink: "https://x.example/N1.pdf"}
		record(acme.ID, t0.Add(time.Hour), []string{"A1", "N1"}, patent.PatentChanges{New: []patent.Publication{n1}, Dropped: []string{"B1"}})
		record(beta.ID, t0.Add(90*time.Minute), []string{"C1"}, patent.PatentChanges{})
		record(beta.ID, t0.Add(2*time.Hour), []string{}, patent.PatentChanges{Dropped: []string{"C1"}})
		seen, _ = s.Tracking().SeenPatents(ctx, acme.ID, []string{"B1", "N1", "X1"})
		if !seen.Since.Equal(t0) || !reflect.DeepEqual(seen.Last, []string{"A1", "N1"}) || !reflect.DeepEqual(seen.Known, map[string]bool{"B1": true, "N1": true}) {
			t.Errorf("SeenPatents after a change = %+v, want since the baseline, last A1 N1, B1 and N1 known (B1 dropped but seen)", seen)
		}
		if seen, _ := s.Tracking().SeenPatents(ctx, acme.ID, nil); len(seen.Known) != 0 || len(seen.Last) != 2 {
			t.Errorf("SeenPatents of no ids = %+v, want the last run's only", seen)
		}
		_, runs, _ := s.Tracking().TrackingHistory(ctx, "Acme", t0)
		if len(runs) != 2 || !reflect.DeepEqual(runs[1].NewPatents, []string{"N1"}) || !reflect.DeepEqual(runs[1].DroppedPatents, []string{"B1"}) {
			t.Errorf("history = %+v", runs)
		}
		items, next, err := s.Tracking().ListChanges(ctx, t0, 50, "")
		if err != nil || next != "" || len(items) != 2 || items[0].CompanyName != "Beta" || items[1].CompanyName != "Acme" ||
			!reflect.DeepEqual(items[1].Changes.New, []patent.Publication{n1}) || !reflect.DeepEqual(items[0].Changes.Dropped, []string{"C1"}) {
			t.Fatalf("ListChanges = %+v, %q, %v", items, next, err)
		}
		page, next, _ := s.Tracking().ListChanges(ctx, t0, 1, "")
		rest, last, _ := s.Tracking().ListChanges(ctx, t0, 1, next)
		if len(page) != 1 || page[0].CompanyName != "Beta" || len(rest) != 1 || rest[0].CompanyName != "Acme" || last != "" {
			t.Errorf("pages = %+v then %+v (%q)", page, rest, last)
		}
		if late, _, _ := s.Tracking().ListChanges(ctx, t0.Add(90*time.Minute), 50, ""); len(late) != 1 || late[0].CompanyName != "Beta" {
			t.Errorf("changes since 07:30 = %+v, want Beta's only", late)
		}
		if all, _, _ := s.Tracking().ListChanges(ctx, t0, 50, "not a cursor"); len(all) != 2 {
			t.Errorf("a cursor that does not decode: %d items, want the listing from the start", len(all))
		}
		if err := s.Tracking().DeleteTracked(ctx, "Beta"); err != nil {
			t.Fatal(err)
		}
		if left, _, _ := s.Tracking().ListChanges(ctx, t0, 50, ""); len(left) != 1 || left[0].CompanyName != "Acme" {
			t.Errorf("after untracking Beta = %+v", left)
		}
		if _, err := s.Tracking().SeenPatents(ctx, beta.ID, nil); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("SeenPatents of an untracked company = %v, want ErrNotFound", err)
		}
	})
}

// TestAnalysisFacts: a portfolio analysis keeps its portfolio and
// patents; one without them reads back nil.
func TestAnalysisFacts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		why := "document not read: more than 500 pages"
		p := &patent.Portfolio{CPC: []patent.CPCShare{{Code: "H04R", Share: 0.6}}, ByYear: []patent.YearCount{{Year: 2026, Count: 2}},
			Countries: []patent.CountryCount{{Country: "US", Active: 2, Inactive: 0}}, Granted: 1, Applications: 1}
		refs := []patent.PatentRef{{PatentID: "US1B2", Title: "T", PublicationDate: "2026-01-02", PDFLink: "https://x.example/1.pdf", Read: true},
			{PatentID: "US2A1", Error: &why}}
		rec, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "r",
			Portfolio: p, Patents: refs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisSinglePatent, Response: "s"}); err != nil {
			t.Fatal(err)
		}
		var got []patent.AnalysisRecord
		s.Analyses().EachAnalysis(ctx, "Acme", func(r patent.AnalysisRecord) error { got = append(got, r); return nil })
		if len(got) != 2 {
			t.Fatalf("%d analyses", len(got))
		}
		for _, r := range got {
			switch r.ID {
			case rec.ID:
				if !reflect.DeepEqual(r.Portfolio, p) || !reflect.DeepEqual(r.Patents, refs) {
					t.Errorf("stored facts = %+v / %+v", r.Portfolio, r.Patents)
				}
			default:
				if r.Portfolio != nil || r.Patents != nil {
					t.Errorf("a single-patent analysis has facts: %+v", r)
				}
			}
		}
	})
}
