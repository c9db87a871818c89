package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestTrackedHistory: GET /admin/tracked/{company_name}/history answers
// the company's scheduled runs of the last days (365 by default), oldest
// first, under its name as first written, with the count null for a run
// whose search failed and alert true for a run that raised one; an
// untracked company is 404, a bad name or days 422.
func TestTrackedHistory(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)
		ctx := context.Background()
		acme, err := storetest.Track(ctx, en.st, "Acme Corp", en.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Track(ctx, en.st, "Idle Inc", en.clk.Now()); err != nil {
			t.Fatal(err)
		}
		now := en.clk.Now()
		at := func(days int) time.Time { return now.AddDate(0, 0, -days) }
		mustRun := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		alert := patent.Alert{CompanyName: "Acme Corp", AlertType: patent.AlertTypePatentCountChange,
			Message: "Patent count for Acme Corp increased by 50.0% (from 10 to 15)", OldValue: 10, NewValue: 15}
		mustRun(recordRun(t, en.st, acme.ID, 8, at(400), 0, at(399), nil, nil)) // outside the default window
		mustRun(recordRun(t, en.st, acme.ID, 10, at(30), 0, at(29), nil, nil))
		mustRun(recordFailure(t, en.st, acme.ID, at(29), 1, at(29).Add(time.Minute)))
		mustRun(recordRun(t, en.st, acme.ID, 15, at(29).Add(time.Minute), 0, at(28), &alert, nil))
		mustRun(recordRun(t, en.st, acme.ID, 15, at(1), 1, at(1).Add(time.Minute), nil, nil)) // analysis failed

		rec := en.do(t, request{target: "/admin/tracked/acme%20corp/history", token: tok})
		wantStatus(t, rec, http.StatusOK)
		wantKeys(t, rec.Body.Bytes(), "company_name", "points")
		golden(t, "tracked-history-200", rec.Body.Bytes())

		var body struct {
			CompanyName string `json:"company_name"`
			Points      []struct {
				RunAt time.Time `json:"run_at"`
			} `json:"points"`
		}
		decode(t, en.do(t, request{target: "/admin/tracked/Acme%20Corp/history?days=3650", token: tok}), &body)
		if len(body.Points) != 5 || !body.Points[0].RunAt.Equal(at(400)) {
			t.Errorf("days=3650: %+v, want all 5 runs from the oldest", body)
		}
		decode(t, en.do(t, request{target: "/admin/tracked/Acme%20Corp/history?days=1", token: tok}), &body)
		if len(body.Points) != 1 || !body.Points[0].RunAt.Equal(at(1)) {
			t.Errorf("days=1: %+v, want the last run", body)
		}

		rec = en.do(t, request{target: "/admin/tracked/Idle%20Inc/history", token: tok})
		wantStatus(t, rec, http.StatusOK)
		golden(t, "tracked-history-200-empty", rec.Body.Bytes())

		rec = en.do(t, request{target: "/admin/tracked/Nobody/history", token: tok})
		wantError(t, rec, http.StatusNotFound, "Company Nobody is not tracked")

		for _, target := range []string{
			"/admin/tracked/Acme%20Corp/history?days=0",
			"/admin/tracked/Acme%20Corp/history?days=3651",
			"/admin/tracked/Acme%20Corp/history?days=-1",
			"/admin/tracked/Acme%20Corp/history?days=1.5",
			"/admin/tracked/Acme%20Corp/history?days=abc",
		} {
			b := wantError(t, en.do(t, request{target: target, token: tok}), http.StatusUnprocessableEntity, "")
			if len(b.Errors) != 1 || b.Errors[0].Field != "days" {
				t.Errorf("GET %s: errors %+v, want one on days", target, b.Errors)
			}
		}
		b := wantError(t, en.do(t, request{target: "/admin/tracked/-bad/history", token: tok}), http.StatusUnprocessableEntity, "")
		if len(b.Errors) != 1 || b.Errors[0].Field != "company_name" {
			t.Errorf("bad name: errors %+v, want one on company_name", b.Errors)
		}
		golden(t, "tracked-history-422", en.do(t, request{target: "/admin/tracked/Acme%20Corp/history?days=0", token: tok}).Body.Bytes())
	})
}

// recordRun records a run of tracked company id at its current due time,
// as its scheduled run's unit would.
func recordRun(t *testing.T, st *store.Store, id int64, n int, at time.Time, failures int, next time.Time,
	alert *patent.Alert, deliveries []patent.Delivery) error {
	t.Helper()
	c, err := st.Tracking().TrackedCompany(context.Background(), id)
	if err != nil {
		return err
	}
	out := patent.RunOutcome{Count: n, At: at, Failures: failures, Next: next}
	if alert != nil {
		out.Alerts = []patent.Alert{*alert}
	}
	_, err = st.Tracking().RecordRun(context.Background(), id, c.NextRunAt, out, deliveries)
	return err
}

// recordFailure records a failed run of tracked company id at its current
// due time.
func recordFailure(t *testing.T, st *store.Store, id int64, at time.Time, failures int, next time.Time) error {
	t.Helper()
	c, err := st.Tracking().TrackedCompany(context.Background(), id)
	if err != nil {
		return err
	}
	_, err = st.Tracking().RecordFailure(context.Background(), id, c.NextRunAt, at, failures, next)
	return err
}
