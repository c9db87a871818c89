package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
)

// The liveness of replicas with real processes on one PostgreSQL database
// (decisions.md, "patentsvc: a dead replica's work resumes in seconds"):
// a replica killed with -9 is known dead as soon as PostgreSQL has ended
// its session, and its running units are resolved within seconds, not
// when their timeouts run out. The timeouts here are long (10 minutes),
// so that only liveness can resolve the units within the test's bounds.

// livenessEnv are the settings of the liveness tests' replicas: one job and
// one scheduled run at a time, timeouts of 10 minutes, and deliveries
// retried after a second.
var livenessEnv = map[string]string{
	"JOBS_MAX_CONCURRENT": "1", "SCHEDULE_MAX_CONCURRENT": "1", "SCHEDULE_INTERVAL_HOURS": "24",
	"JOBS_TIMEOUT": "10m", "SCHEDULE_RUN_TIMEOUT": "10m", "WEBHOOK_TIMEOUT": "10m",
}

// inFlight is a replica's work caught in the middle: a job.completed
// delivery whose attempt hangs at the receiver, a job running and one
// pending behind it, and a tracked company's first run.
type inFlight struct {
	delivery       string // the hanging delivery's webhook-id
	running, ended string // job ids: running, and the one whose end is being delivered
	pending        string
	company        string // tracked; its first run is running
}

// catchInFlight puts r in the middle of each kind of unit (inFlight): it
// returns once r runs them all at once, as River records it.
func catchInFlight(t *testing.T, c *cluster, r *replica, admin, user string) inFlight {
	t.Helper()
	var w inFlight
	// A job that ends at once; its delivery hangs at the receiver (the
	// next deliveries do not).
	c.hooks.hangNext.Store(true)
	w.ended = trackAndSubmit(t, c, []*replica{r}, admin, user, nil, []string{"Quick Co"})[0]
	c.waitFor(t, 30*time.Second, "the job.completed attempt hanging at the receiver", func() bool {
		for _, d := range c.hooks.attemptsNow() {
			if d.jobID == w.ended {
				w.delivery = d.id
				return true
			}
		}
		return false
	})
	// From now on every search hangs: the next job and the first run stay
	// in flight.
	c.world.Serp.SetLatency(time.Hour)
	searches := c.world.Serp.CallCount()
	w.company = "Slow Tracked Co"
	ids := trackAndSubmit(t, c, []*replica{r}, admin, user, []string{w.company}, []string{"Slow Job Co", "Waiting Co"})
	w.running, w.pending = ids[0], ids[1]
	c.waitFor(t, 30*time.Second, "a job, a scheduled run and a delivery running on "+r.name+", both searches hanging", func() bool {
		return c.runningOf(r.pid(), patent.KindJobStart) == 1 && c.runningOf(r.pid(), patent.KindScheduledRun) == 1 &&
			c.runningOf(r.pid(), patent.KindDelivery) == 1 && jobStatus(t, r, user, w.pending) == "pending" &&
			c.world.Serp.CallCount() == searches+2
	})
	return w
}

// resolution is when each of a dead replica's units was resolved, from
// its kill.
type resolution struct {
	job, pending, run, delivery time.Duration
}

// waitResolved waits, for at most within, until r (a live replica) shows
// every unit of w resolved: the running job failed and heard (its
// job.completed, failed), the pending one ended and heard (wantPending:
// failed or completed), the company's run recorded, the hanging delivery
// sent again with its webhook-id; and returns when each was, from killed.
func waitResolved(t *testing.T, c *cluster, r *replica, admin, user string, w inFlight, wantPending string, killed time.Time, within time.Duration) resolution {
	t.Helper()
	var res resolution
	since := func(d *time.Duration) bool {
		if *d == 0 {
			*d = time.Since(killed)
		}
		return true
	}
	if !wait.Until(within, func() bool {
		done := true
		if ends := c.hooks.jobEnds()[w.running]; len(ends) > 0 && jobStatus(t, r, user, w.running) == "failed" {
			since(&res.job)
		} else {
			done = false
		}
		if ends := c.hooks.jobEnds()[w.pending]; len(ends) > 0 && jobStatus(t, r, user, w.pending) == wantPending {
			since(&res.pending)
		} else {
			done = false
		}
		if runsOf(t, r, admin, w.company) == 1 {
			since(&res.run)
		} else {
			done = false
		}
		if len(c.hooks.delivered(w.delivery)) == 1 {
			since(&res.delivery)
		} else {
			done = false
		}
		return done
	}) {
		t.Fatalf("the dead replica's units not resolved within %v: resolved after %+v (0: not yet)\n%s", within, res, r.logs)
	}
	// Each was resolved once: one job.completed a job, one recorded run,
	// the delivery accepted once, with its first attempt's webhook-id.
	for _, id := range []string{w.running, w.pending, w.ended} {
		if ends := c.hooks.jobEnds()[id]; len(ends) != 1 {
			t.Errorf("job %s: %d job.completed deliveries accepted, want 1: %+v", id, len(ends), ends)
		}
	}
	if n := runsOf(t, r, admin, w.company); n != 1 {
		t.Errorf("%s: %d runs recorded for its one due time, want 1", w.company, n)
	}
	code, j := call(t, "GET", r.base+"/jobs/"+w.running, user, nil)
	if msg, _ := j["error"].(string); code != 200 || msg == "" {
		t.Errorf("the running job = %d %v, want failed with the reason", code, j)
	}
	return res
}

// TestKill9Restart: the only replica is killed with -9 in the middle of a
// job, a pending job, a scheduled run and a webhook attempt, and started
// again at once. The restarted replica is alone (the dead one's session
// ended with its process): both jobs fail at its start (the spec's
// start-up rule), each heard once; the run is run again and recorded
// once; the delivery is sent again with its webhook-id; all within 30 s of
// the restart, with every timeout at 10 minutes.
func TestKill9Restart(t *testing.T) {
	c := newCluster(t, store.Postgres, storetest.DSN(t, store.Postgres), livenessEnv)
	a := c.start("replica A")
	toks := users(t, a, "ada@example.com")
	admin, ada := toks[0], toks[1]
	w := catchInFlight(t, c, a, admin, ada)

	kill9(t, a)
	killed := time.Now()
	c.world.Serp.SetLatency(0)
	restarted := c.start("replica A restarted")
	started := time.Now()
	res := waitResolved(t, c, restarted, admin, ada, w, "failed", killed, 30*time.Second+started.Sub(killed))
	for name, d := range map[string]time.Duration{"running job": res.job, "pending job": res.pending, "scheduled run": res.run, "delivery": res.delivery} {
		t.Logf("kill -9 and restart (%.1fs to start): %s resolved %.1fs after the kill", started.Sub(killed).Seconds(), name, d.Seconds())
	}
	code, j := call(t, "GET", restarted.base+"/jobs/"+w.pending, ada, nil)
	if msg, _ := j["error"].(string); code != 200 || msg != "the service restarted before the job ended" {
		t.Errorf("the pending job = %d %v, want failed by the start-up rule", code, j)
	}
	if !strings.Contains(restarted.logs.String(), `"msg":"failed jobs left unfinished by the previous process","count":2`) {
		t.Errorf("the start-up rule's count not logged:\n%s", restarted.logs)
	}
	restarted.stop(t)
}

// TestKill9ReplicaTakesOver: of two replicas, the one in the middle of a
// job, a scheduled run and a webhook attempt is killed with -9. The other,
// which started beside it and left its work alone (it took the pending
// job up, a job slot being free), fails the job (its replica stopped),
// heard once; runs the run, recorded once; sends the delivery again with
// its webhook-id; all within 45 s, with every timeout at 10 minutes.
func TestKill9ReplicaTakesOver(t *testing.T) {
	c := newCluster(t, store.Postgres, storetest.DSN(t, store.Postgres), livenessEnv)
	a := c.start("replica A")
	toks := users(t, a, "ada@example.com")
	admin, ada := toks[0], toks[1]
	w := catchInFlight(t, c, a, admin, ada)
	// B starts beside a live A: it leaves A's work alone, and runs the
	// pending job (A's searches still hang, B's answer at once).
	c.world.Serp.SetLatency(0)
	b := c.start("replica B")
	c.waitFor(t, 30*time.Second, "B running the pending job", func() bool { return jobStatus(t, b, ada, w.pending) == "completed" })
	if s := jobStatus(t, b, ada, w.running); strings.Contains(b.logs.String(), "failed jobs left unfinished") || s != "running" {
		t.Fatalf("B failed A's jobs at its start: the running job is %s\n%s", s, b.logs)
	}
	// The pending job's job.completed may be attempted by A: accepted and
	// recorded before the kill, or a kill between the two would rightly
	// send it again (at least once, with its webhook-id) and the count of
	// one below would not hold.
	c.waitFor(t, 30*time.Second, "the pending job's job.completed accepted and recorded", func() bool {
		ends := c.hooks.jobEnds()[w.pending]
		return len(ends) == 1 && c.deliveryStatus(ends[0].id) == patent.DeliveryDelivered
	})

	kill9(t, a)
	killed := time.Now()
	res := waitResolved(t, c, b, admin, ada, w, "completed", killed, 45*time.Second)
	for name, d := range map[string]time.Duration{"running job": res.job, "scheduled run": res.run, "delivery": res.delivery} {
		t.Logf("kill -9 of one of two replicas: %s resolved %.1fs after the kill", name, d.Seconds())
	}
	code, j := call(t, "GET", b.base+"/jobs/"+w.running, ada, nil)
	if msg, _ := j["error"].(string); code != 200 || !strings.Contains(msg, "replica running the job stopped") {
		t.Errorf("the running job = %d %v, want failed: its replica stopped", code, j)
	}
	b.stop(t)
}

// TestSessionLostStopsWork: a replica cut from PostgreSQL loses its
// session (here PostgreSQL ends it, as it does when a node's keepalives go
// unanswered): its running job is resolved (failed, heard once) and the
// replica stops working on it at once: the job is never completed by it,
// and it says so. It opens its session again and goes on working.
func TestSessionLostStopsWork(t *testing.T) {
	c := newCluster(t, store.Postgres, storetest.DSN(t, store.Postgres), livenessEnv)
	a := c.start("replica A")
	b := c.start("replica B")
	toks := users(t, a, "ada@example.com")
	admin, ada := toks[0], toks[1]
	c.world.Serp.SetLatency(time.Hour)
	searches := c.world.Serp.CallCount()
	job := trackAndSubmit(t, c, []*replica{a}, admin, ada, nil, []string{"Cut Off Co"})[0]
	var runner *replica
	c.waitFor(t, 30*time.Second, "the job running, its search hanging", func() bool {
		for _, r := range []*replica{a, b} {
			if c.runningOf(r.pid(), patent.KindJobStart) == 1 {
				runner = r
			}
		}
		return runner != nil && c.world.Serp.CallCount() == searches+1
	})
	cut := time.Now()
	c.endSession(t, runner)
	c.waitFor(t, 30*time.Second, "the job failed and heard", func() bool {
		return jobStatus(t, a, ada, job) == "failed" && len(c.hooks.jobEnds()[job]) == 1
	})
	t.Logf("session of %s ended by PostgreSQL: its job failed %.1fs later", runner.name, time.Since(cut).Seconds())
	c.waitFor(t, 10*time.Second, runner.name+" saying it lost its session and stopped the job", func() bool {
		return logged(runner, "liveness session lost; this replica's running work is stopped, and the sweeps resolve it", nil) &&
			logged(runner, "job cut short", map[string]string{"job_id": job, "cause": "queue: this replica's database session ended"})
	})
	c.waitFor(t, 30*time.Second, runner.name+" opening its session again", func() bool {
		return strings.Contains(runner.logs.String(), `"msg":"liveness session open again"`)
	})
	// The replica works on: a new job completes, and the failed one stays
	// failed, heard once.
	c.world.Serp.SetLatency(0)
	next := trackAndSubmit(t, c, []*replica{runner}, admin, ada, nil, []string{"Next Co"})[0]
	c.waitFor(t, 30*time.Second, "the next job completed", func() bool { return jobStatus(t, a, ada, next) == "completed" })
	if s := jobStatus(t, a, ada, job); s != "failed" || len(c.hooks.jobEnds()[job]) != 1 {
		t.Errorf("the cut job %s with %d deliveries, want failed, heard once", s, len(c.hooks.jobEnds()[job]))
	}
	a.stop(t)
	b.stop(t)
}

// runningOf counts the units of kind running on the process of pid, as
// River records who runs them (the liveness session's name: host/pid/key).
func (c *cluster) runningOf(pid int, kind string) int {
	c.t.Helper()
	var n int
	err := c.db.QueryRow("SELECT count(*) FROM river_job WHERE state = 'running' AND kind = $1 AND attempted_by[array_length(attempted_by, 1)] LIKE $2",
		kind, fmt.Sprintf("%%/%d/%%", pid)).Scan(&n)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// deliveryStatus is the stored status of the webhook delivery id.
func (c *cluster) deliveryStatus(id string) string {
	c.t.Helper()
	var status string
	if err := c.db.QueryRow("SELECT status FROM webhook_deliveries WHERE id = $1", id).Scan(&status); err != nil {
		c.t.Fatal(err)
	}
	return status
}

// jobUnit is the unit job id runs under (0 while pending).
func (c *cluster) jobUnit(id string) int64 {
	c.t.Helper()
	var unit *int64
	if err := c.db.QueryRow("SELECT unit_id FROM jobs WHERE id = $1", id).Scan(&unit); err != nil {
		c.t.Fatal(err)
	}
	if unit == nil {
		return 0
	}
	return *unit
}

// unitRunner is the pid of the process that took unit id up last.
func (c *cluster) unitRunner(id int64) int {
	c.t.Helper()
	var runner string
	if err := c.db.QueryRow("SELECT attempted_by[array_length(attempted_by, 1)] FROM river_job WHERE id = $1", id).Scan(&runner); err != nil {
		c.t.Fatal(err)
	}
	var host string
	var pid, key int
	fmt.Sscanf(strings.ReplaceAll(runner, "/", " "), "%s %d %x", &host, &pid, &key)
	return pid
}

// endSession has PostgreSQL end r's liveness session (its connection is
// named after the replica in pg_stat_activity), as it does when the
// replica's node stops answering.
func (c *cluster) endSession(t *testing.T, r *replica) {
	t.Helper()
	id := sessionOf(t, r)
	var ended bool
	err := c.db.QueryRow("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", "patentsvc liveness "+id).Scan(&ended)
	if err != nil || !ended {
		t.Fatalf("end the session %s: %v, %v", id, ended, err)
	}
}

// sessionOf is the name of r's liveness session, from its start-up line.
func sessionOf(t *testing.T, r *replica) string {
	t.Helper()
	for line := range strings.Lines(r.logs.String()) {
		var l struct{ Msg, Replica string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "liveness session open" {
			return l.Replica
		}
	}
	t.Fatalf("%s: no \"liveness session open\" line\n%s", r.name, r.logs)
	return ""
}

// logged tells whether r logged a line with msg whose attributes start
// with the values in attrs.
func logged(r *replica, msg string, attrs map[string]string) bool {
	for line := range strings.Lines(r.logs.String()) {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != msg {
			continue
		}
		ok := true
		for k, v := range attrs {
			got, _ := l[k].(string)
			ok = ok && strings.HasPrefix(got, v)
		}
		if ok {
			return true
		}
	}
	return false
}

// attemptsNow returns every request the receiver got so far.
func (h *hookLog) attemptsNow() []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookDelivery(nil), h.attempts...)
}

// delivered returns the requests with webhook-id id answered 200.
func (h *hookLog) delivered(id string) []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookDelivery
	for _, d := range h.got {
		if d.id == id {
			out = append(out, d)
		}
	}
	return out
}
