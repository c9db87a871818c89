package schedule_test

import (
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// hooks is a schedule.Notifier that keeps the alerts it composed for and
// composes one delivery each.
type hooks struct {
	mu     sync.Mutex
	alerts []patent.Alert
}

func (h *hooks) AlertDeliveries(a patent.Alert) ([]patent.Delivery, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.alerts = append(h.alerts, a)
	return []patent.Delivery{{ID: "msg_" + a.AlertType, Event: "alert." + a.AlertType, URL: "https://hooks.example/h",
		URLHost: "https://hooks.example", Payload: []byte(`{}`)}}, nil
}

// takeRun is the scheduled run queued last for company, as its unit
// carries it; the unit is marked completed, as the queue does once it has
// run.
func takeRun(t *testing.T, st *store.Store, company string) patent.ScheduledRun {
	t.Helper()
	var last patent.ScheduledRun
	var id int64
	for _, u := range storetest.Units(t, st, patent.KindScheduledRun) {
		var run patent.ScheduledRun
		if err := json.Unmarshal([]byte(u.Args), &run); err != nil {
			t.Fatal(err)
		}
		if run.CompanyName == company {
			last, id = run, u.ID
		}
	}
	storetest.SetUnitState(t, st, id, "completed")
	return last
}

// TestRunComposesBeforeItStores: a run composes its alerts, with the ids
// its unit carries and the run's time, and their webhook deliveries, and
// stores them with the run in one call: the stored alerts have those ids,
// and each has its delivery. The unit run again (its replica died after
// the run was recorded) reads the company first and analyses nothing; run
// again without knowing it (a first attempt), it analyses but records
// nothing twice.
func TestRunComposesBeforeItStores(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	st := storetest.Open(t, store.SQLite, clk.Now)
	fake := newFake()
	h := &hooks{}
	sched := schedule.New(schedule.Config{Interval: time.Hour, Threshold: 20, NewPatentAlerts: true}, st.Tracking(), fake, h, slog.New(slog.DiscardHandler), clk.Now)
	if _, err := storetest.Track(ctx, st, "Acme", clk.Now()); err != nil {
		t.Fatal(err)
	}
	fake.set("Acme", 10)
	fake.pubs["Acme"] = []string{"US1A1"}
	if err := sched.Run(ctx, takeRun(t, st, "Acme")); err != nil { // the baseline
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	sched.QueueDue(ctx)
	u := takeRun(t, st, "Acme")
	fake.set("Acme", 20)
	fake.pubs["Acme"] = []string{"US1A1", "US2A1"}
	if err := sched.Run(ctx, u); err != nil {
		t.Fatal(err)
	}
	stored, _ := st.Tracking().ListAlerts(ctx, 10)
	if len(stored) != 2 || len(h.alerts) != 2 {
		t.Fatalf("stored %+v, composed %+v; want a count change and a new patents alert", stored, h.alerts)
	}
	for i, a := range h.alerts {
		if a.ID != u.AlertIDs[i] || !a.CreatedAt.Equal(clk.Now()) {
			t.Errorf("composed alert %d = id %d at %v, want the unit's id %d at the run's time %v", i, a.ID, a.CreatedAt, u.AlertIDs[i], clk.Now())
		}
	}
	for _, a := range stored {
		if a.ID != u.AlertIDs[0] && a.ID != u.AlertIDs[1] {
			t.Errorf("stored alert %+v, want one of the unit's ids %v", a, u.AlertIDs)
		}
		if d, err := st.Deliveries().Delivery(ctx, "msg_"+a.AlertType); err != nil || d.Event != "alert."+a.AlertType {
			t.Errorf("alert %s: delivery %+v, %v; want stored with it", a.AlertType, d, err)
		}
	}

	calls := fake.callsOf("Acme")
	u.Attempt = 2
	if err := sched.Run(ctx, u); err != nil || fake.callsOf("Acme") != calls {
		t.Errorf("the unit run again: %v, %d analyses; want none (its due time was recorded)", err, fake.callsOf("Acme")-calls)
	}
	u.Attempt = 1
	if err := sched.Run(ctx, u); err != nil {
		t.Fatal(err)
	}
	if again, _ := st.Tracking().ListAlerts(ctx, 10); len(again) != 2 {
		t.Errorf("alerts after the unit ran twice: %d, want 2", len(again))
	}
}
