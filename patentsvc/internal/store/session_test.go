package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/testkit/wait"
)

// openSession opens s's liveness session and ends its start-up; it is
// closed when the test ends, unless the test closes it first.
func openSession(t *testing.T, s *store.Store) *store.Session {
	t.Helper()
	return storetest.OpenSession(t, s)
}

// TestSessionAlone: a replica whose session opens while no other
// replica's is open is alone (the start-up rule applies); one opening
// beside a live one is not; a session closed no longer counts. On SQLite
// every session is alone.
func TestSessionAlone(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres)
	first := openSession(t, storetest.OpenAt(t, store.Postgres, dsn, time.Now))
	if !first.Alone() {
		t.Fatal("the first session is not alone")
	}
	second := openSession(t, storetest.OpenAt(t, store.Postgres, dsn, time.Now))
	if second.Alone() || second.ID() == first.ID() {
		t.Fatalf("a session beside a live one: alone %v, id %s (first %s); want not alone, another id", second.Alone(), second.ID(), first.ID())
	}
	first.Close()
	third := openSession(t, storetest.OpenAt(t, store.Postgres, dsn, time.Now))
	if third.Alone() {
		t.Error("a session beside the second, alive: alone")
	}
	second.Close()
	third.Close()
	if last := openSession(t, storetest.OpenAt(t, store.Postgres, dsn, time.Now)); !last.Alone() {
		t.Error("a session after every other closed: not alone")
	}
	if sq := openSession(t, storetest.Open(t, store.SQLite, time.Now)); !sq.Alone() {
		t.Error("an SQLite session is not alone")
	}
}

// TestSessionStartupOrder: a replica starting while another is in its
// start-up waits until that one has ended it (Started), so that of two
// replicas starting at once exactly one applies the start-up rule.
func TestSessionStartupOrder(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres)
	a := storetest.OpenAt(t, store.Postgres, dsn, time.Now)
	first, err := a.OpenSession(context.Background(), discard())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	b := storetest.OpenAt(t, store.Postgres, dsn, time.Now)
	blocked, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if se, err := b.OpenSession(blocked, discard()); err == nil {
		se.Close()
		t.Fatal("a session opened while another replica was in its start-up")
	}
	if err := first.Started(context.Background()); err != nil {
		t.Fatal(err)
	}
	second, err := b.OpenSession(context.Background(), discard())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !first.Alone() || second.Alone() {
		t.Errorf("alone: first %v, second %v; want the first only", first.Alone(), second.Alone())
	}
}

// TestLeaderOfOlderVersion: a replica that starts while a River client of
// a version without liveness sessions leads River's maintenance is not
// alone (a rolling update from that version: its jobs are not failed); a
// leader that was a session's, now ended, does not count.
func TestLeaderOfOlderVersion(t *testing.T) {
	for _, tt := range []struct {
		leader string
		alone  bool
	}{
		{"oldhost-4242-abcdef01", false},
		{"somehost/4242/0000abcd", true},
	} {
		t.Run(tt.leader, func(t *testing.T) {
			s := storetest.OpenAt(t, store.Postgres, storetest.DSN(t, store.Postgres), time.Now)
			db, _ := s.SQL()
			if _, err := db.Exec("INSERT INTO river_leader (elected_at, expires_at, leader_id, name) VALUES (now(), now() + interval '1 minute', $1, 'default')", tt.leader); err != nil {
				t.Fatal(err)
			}
			if se := openSession(t, s); se.Alone() != tt.alone {
				t.Errorf("led by %s: alone %v, want %v", tt.leader, se.Alone(), tt.alone)
			}
		})
	}
}

// unitOf reads unit id's state, attempts and last error, as River keeps
// them.
func unitOf(t *testing.T, s *store.Store, id int64) (state string, attempt int, lastError string) {
	t.Helper()
	db, _ := s.SQL()
	q := "SELECT state, attempt, COALESCE(CAST(errors[array_length(errors, 1)] AS TEXT), '') FROM river_job WHERE id = $1"
	if s.Dialect() == store.SQLite {
		q = "SELECT state, attempt, COALESCE(json_extract(errors, '$[#-1]'), '') FROM river_job WHERE id = ?"
	}
	if err := db.QueryRow(q, id).Scan(&state, &attempt, &lastError); err != nil {
		t.Fatal(err)
	}
	return state, attempt, lastError
}

// deadRig is a store with its own session (a live replica's), a second
// replica's session on the same database (the one that dies), and one unit
// of each kind, running on the second: a tracked company's run, a
// delivery's attempt, and a job start holding its job.
type deadRig struct {
	st                  *store.Store
	other               *store.Session
	run, delivery, held int64
	job                 string
}

func newDeadRig(t *testing.T, dialect string) *deadRig {
	t.Helper()
	dsn := storetest.DSN(t, dialect)
	r := &deadRig{st: storetest.OpenAt(t, dialect, dsn, time.Now)}
	if dialect == store.Postgres {
		// The other replica first: this one does not start alone.
		r.other = openSession(t, storetest.OpenAt(t, dialect, dsn, time.Now))
		openSession(t, r.st)
	}
	if _, err := storetest.Track(ctx, r.st, "Acme", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.Tracking().CreateAlert(ctx, testAlert, deliveriesOf("d", "https://a.example/h")); err != nil {
		t.Fatal(err)
	}
	r.job = createJob(t, r.st, "held", 1, "Acme").ID
	r.run = storetest.Units(t, r.st, patent.KindScheduledRun)[0].ID
	r.delivery = storetest.Units(t, r.st, patent.KindDelivery)[0].ID
	r.held = storetest.Units(t, r.st, patent.KindJobStart)[0].ID
	if claim(t, r.st, r.held) != r.job {
		t.Fatal("the job start did not take its job up")
	}
	return r
}

// runOn puts every unit of the rig running on runner.
func (r *deadRig) runOn(t *testing.T, runner string, attempt int) {
	t.Helper()
	for _, id := range []int64{r.run, r.delivery, r.held} {
		storetest.SetUnitRunning(t, r.st, id, runner, attempt)
	}
}

// release releases each kind's dead units and returns how many of each.
func (r *deadRig) release(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for k, release := range map[string]func(context.Context) (int64, error){
		patent.KindScheduledRun: r.st.Tracking().ReleaseDeadUnits,
		patent.KindDelivery:     r.st.Deliveries().ReleaseDeadUnits,
		patent.KindJobStart:     r.st.Jobs().ReleaseDeadUnits,
	} {
		n, err := release(ctx)
		if err != nil {
			t.Fatalf("ReleaseDeadUnits(%s) = %v", k, err)
		}
		out[k] = n
	}
	return out
}

// TestDeadReplicaUnits (PostgreSQL): while the replica running a unit
// holds its session, the unit is left alone; once the session ends, its
// scheduled run and delivery attempt are available again at once (the
// run counted, River's error kept), and its job is lost (its runner
// stopped), failing with its unit cancelled. A runner of a version
// without sessions is left to River's timeouts; a unit past its runs is
// discarded.
func TestDeadReplicaUnits(t *testing.T) {
	r := newDeadRig(t, store.Postgres)
	r.runOn(t, r.other.ID(), 1)
	if got := r.release(t); got[patent.KindScheduledRun]+got[patent.KindDelivery]+got[patent.KindJobStart] != 0 {
		t.Fatalf("released %v while their replica is alive", got)
	}
	if lost, err := r.st.Jobs().LostJobs(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("LostJobs = %+v, %v while the replica is alive", lost, err)
	}

	r.other.Close()
	waitSessionGone(t, r.st, r.other)
	got := r.release(t)
	if got[patent.KindScheduledRun] != 1 || got[patent.KindDelivery] != 1 || got[patent.KindJobStart] != 0 {
		t.Fatalf("released %v, want the run and the delivery (the job start holds a job)", got)
	}
	for _, id := range []int64{r.run, r.delivery} {
		if state, attempt, last := unitOf(t, r.st, id); state != "available" || attempt != 1 || !strings.Contains(last, "replica running the unit stopped") {
			t.Errorf("unit %d after its replica died: %s, attempt %d, error %s; want available, the run counted, the reason kept", id, state, attempt, last)
		}
	}
	lost, err := r.st.Jobs().LostJobs(ctx)
	if err != nil || len(lost) != 1 || lost[0].Job.ID != r.job || !lost[0].RunnerStopped {
		t.Fatalf("LostJobs = %+v, %v; want the held job, its runner stopped", lost, err)
	}
	if ok, err := r.st.Jobs().FailJob(ctx, lost[0].Job, "its replica stopped", nil); !ok || err != nil {
		t.Fatalf("FailJob = %v, %v", ok, err)
	}
	if state, _, _ := unitOf(t, r.st, r.held); state != "cancelled" {
		t.Errorf("the failed job's unit is %s, want cancelled", state)
	}

	// A runner of an older version (no session): left alone.
	storetest.SetUnitRunning(t, r.st, r.run, "oldhost-4242-abcdef01", 1)
	if n, err := r.st.Tracking().ReleaseDeadUnits(ctx); n != 0 || err != nil {
		t.Errorf("a run of an older version's replica: released %d, %v; want left to River's timeouts", n, err)
	}
	// A dead runner's unit past its runs is discarded.
	storetest.SetUnitRunning(t, r.st, r.run, r.other.ID(), store.ScheduledRunAttempts)
	if n, err := r.st.Tracking().ReleaseDeadUnits(ctx); n != 1 || err != nil {
		t.Fatalf("ReleaseDeadUnits = %d, %v", n, err)
	}
	if state, _, _ := unitOf(t, r.st, r.run); state != "discarded" {
		t.Errorf("a unit past its runs is %s, want discarded", state)
	}
}

// waitSessionGone waits until PostgreSQL has ended se's session (closing
// its connection ends it a moment later, on the server's side).
func waitSessionGone(t *testing.T, s *store.Store, se *store.Session) {
	t.Helper()
	db, _ := s.SQL()
	var n int
	if !wait.Until(10*time.Second, func() bool {
		if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", "patentsvc liveness "+se.ID()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	}) {
		t.Fatalf("the session %s still open 10 s after it was closed", se.ID())
	}
}

// TestDeadProcessUnitsSQLite: on SQLite (one process) a unit running on
// any process but this one's is dead: the process before this one left it.
func TestDeadProcessUnitsSQLite(t *testing.T) {
	r := newDeadRig(t, store.SQLite)
	own := openSession(t, r.st).ID()
	r.runOn(t, own, 1)
	if got := r.release(t); got[patent.KindScheduledRun]+got[patent.KindDelivery] != 0 {
		t.Fatalf("released %v of this process's own units", got)
	}
	r.runOn(t, "vm/1/0000abcd", 1)
	if got := r.release(t); got[patent.KindScheduledRun] != 1 || got[patent.KindDelivery] != 1 {
		t.Fatalf("released %v of the previous process's units, want the run and the delivery", got)
	}
	if lost, err := r.st.Jobs().LostJobs(ctx); err != nil || len(lost) != 1 || !lost[0].RunnerStopped {
		t.Fatalf("LostJobs = %+v, %v; want the held job, its runner stopped", lost, err)
	}
}

// TestSessionLostAndOpenAgain (PostgreSQL): when PostgreSQL ends a
// replica's session (a cut network, a lost node), the session's context
// ends with ErrSessionLost at once, and the session opens again under the
// same name and key: the replica is alive again, with a new context.
func TestSessionLostAndOpenAgain(t *testing.T) {
	s := storetest.OpenAt(t, store.Postgres, storetest.DSN(t, store.Postgres), time.Now)
	var logs syncbuf.Buffer // the session's log: it says when it is open again
	se, err := s.OpenSession(ctx, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("liveness session: %v", err)
	}
	t.Cleanup(se.Close)
	if err := se.Started(ctx); err != nil {
		t.Fatalf("liveness session: %v", err)
	}
	before := se.Context()
	db, _ := s.SQL()
	var ended bool
	if err := db.QueryRow("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", "patentsvc liveness "+se.ID()).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the session: %v, %v", ended, err)
	}
	select {
	case <-before.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session's context did not end when PostgreSQL ended the session")
	}
	if cause := context.Cause(before); !errors.Is(cause, store.ErrSessionLost) {
		t.Errorf("cause = %v, want ErrSessionLost", cause)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if out, err := logs.WaitFor(wctx, func(text string) bool { return strings.Contains(text, `"msg":"liveness session open again"`) }); err != nil {
		t.Fatalf("the session was not opened again within 20 s; its log:\n%s", out)
	}
	if err := se.Context().Err(); err != nil {
		t.Errorf("opened again, the session's context = %v, want a live one", err)
	}
	var held int
	if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", "patentsvc liveness "+se.ID()).Scan(&held); err != nil || held != 1 {
		t.Errorf("sessions named %s: %d, %v; want the one opened again", se.ID(), held, err)
	}
}
