package main

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// The work queue with real processes (decisions.md, "patentsvc: work
// every replica shares, bounded and fair"): several patentsvc processes on
// one PostgreSQL database, killed with -9 or stopped as a rolling update
// stops them, in the middle of scheduled runs and jobs.

// trackAndSubmit tracks companies (their first runs queued) and submits a
// one-company job for each of jobCompanies, spread over the replicas, and
// returns the job ids.
func trackAndSubmit(t *testing.T, c *cluster, rs []*replica, admin, user string, companies, jobCompanies []string) []string {
	t.Helper()
	for i, name := range companies {
		c.world.Company(name, 1)
		if code, body := call(t, "POST", rs[i%len(rs)].base+"/admin/tracked", admin, map[string]string{"company_name": name}); code != http.StatusCreated {
			t.Fatalf("track %s = %d %v", name, code, body)
		}
	}
	var ids []string
	for i, name := range jobCompanies {
		c.world.Company(name, 1)
		code, job := call(t, "POST", rs[i%len(rs)].base+"/analyze/batch/async", user, map[string]any{"companies": []string{name}})
		if code != http.StatusAccepted {
			t.Fatalf("submit %s = %d %v", name, code, job)
		}
		ids = append(ids, job["job_id"].(string))
	}
	return ids
}

// runsOf is the number of scheduled runs recorded for company (its
// history's points).
func runsOf(t *testing.T, r *replica, admin, company string) int {
	t.Helper()
	code, h := call(t, "GET", r.base+"/admin/tracked/"+url.PathEscape(company)+"/history?days=1", admin, nil)
	if code != http.StatusOK {
		t.Fatalf("history of %s = %d %v", company, code, h)
	}
	points, _ := h["points"].([]any)
	return len(points)
}

// jobStatus is job id's status as its owner sees it.
func jobStatus(t *testing.T, r *replica, tok, id string) string {
	t.Helper()
	code, j := call(t, "GET", r.base+"/jobs/"+id, tok, nil)
	if code != http.StatusOK {
		t.Fatalf("GET /jobs/%s = %d %v", id, code, j)
	}
	s, _ := j["status"].(string)
	return s
}

// checkEveryJobHeard waits until every job has ended and its job.completed
// delivery arrived, always under one webhook-id per job, and returns the
// jobs' final statuses.
func checkEveryJobHeard(t *testing.T, c *cluster, r *replica, tok string, ids []string, within time.Duration) map[string]string {
	t.Helper()
	statuses := map[string]string{}
	waitFor(t, within, "every job ended and heard", func() bool {
		ends := c.hooks.jobEnds()
		for _, id := range ids {
			s := jobStatus(t, r, tok, id)
			if (s != "completed" && s != "failed") || len(ends[id]) == 0 {
				return false
			}
			statuses[id] = s
		}
		return true
	})
	for id, ds := range c.hooks.jobEnds() {
		for _, d := range ds {
			if d.id != ds[0].id || d.status != statuses[id] {
				t.Errorf("job %s: deliveries %+v, want one webhook-id and the job's status %s", id, ds, statuses[id])
			}
		}
	}
	return statuses
}

// TestQueueReplicasKill9 runs three replicas; the one running the most
// work is killed with -9 in the middle of scheduled runs and jobs. Within
// 45 s (its units' timeouts are minutes), every due company has run
// exactly once for its due time (one history point each, whatever ran
// twice), every job has ended, failed if the dead replica was running it
// and completed otherwise, and every job end is delivered, under one
// webhook-id a job.
func TestQueueReplicasKill9(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres)
	c := newCluster(t, store.Postgres, dsn, map[string]string{
		"SCHEDULE_INTERVAL_HOURS": "24", "SCHEDULE_RUN_TIMEOUT": "5m", "JOBS_TIMEOUT": "5m",
	})
	c.world.Serp.SetLatency(1500 * time.Millisecond) // runs are in flight when the replica dies
	rs := []*replica{c.start("replica A"), c.start("replica B"), c.start("replica C")}
	toks := users(t, rs[0], "ada@example.com")
	admin, ada := toks[0], toks[1]
	var companies, jobCompanies []string
	for i := range 12 {
		companies = append(companies, fmt.Sprintf("Tracked Co %d", i))
	}
	for i := range 6 {
		jobCompanies = append(jobCompanies, fmt.Sprintf("Job Co %d", i))
	}
	ids := trackAndSubmit(t, c, rs, admin, ada, companies, jobCompanies)

	// Kill the replica that runs the most.
	var victim *replica
	waitFor(t, 20*time.Second, "work running on a replica", func() bool {
		counts := c.running()
		for _, r := range rs {
			if counts[r.pid()] > 0 && (victim == nil || counts[r.pid()] > counts[victim.pid()]) {
				victim = r
			}
		}
		return victim != nil
	})
	t.Logf("killing %s (pid %d), which runs %d units", victim.name, victim.pid(), c.running()[victim.pid()])
	onVictim := map[string]bool{}
	for _, id := range ids {
		if unit := c.jobUnit(id); unit != 0 && c.unitRunner(unit) == victim.pid() {
			onVictim[id] = true
		}
	}
	kill9(t, victim)
	var alive *replica
	for _, r := range rs {
		if r != victim {
			alive = r
			break
		}
	}

	// The live replicas' sweeps resolve the dead one's units as soon as
	// its session has ended.
	waitFor(t, 45*time.Second, "every tracked company's first run recorded", func() bool {
		for _, name := range companies {
			if runsOf(t, alive, admin, name) == 0 {
				return false
			}
		}
		return true
	})
	statuses := checkEveryJobHeard(t, c, alive, ada, ids, 45*time.Second)
	unitsEnded(t, c.st, patent.KindScheduledRun) // a second recording, were there one, has been made
	for _, name := range companies {
		if n := runsOf(t, alive, admin, name); n != 1 {
			t.Errorf("%s: %d runs recorded for its one due time, want 1", name, n)
		}
	}
	for id, s := range statuses {
		if want := map[bool]string{true: "failed", false: "completed"}[onVictim[id]]; s != want {
			t.Errorf("job %s %s, want %s (the dead replica ran it: %v)", id, s, want, onVictim[id])
		}
	}
	t.Logf("searches: %d for %d companies and %d jobs (a killed run is searched again)", c.world.Serp.CallCount(), len(companies), len(ids))
	for _, r := range rs {
		if r != victim {
			r.stop(t)
		}
	}
}

// TestQueueRollingUpdate stops a replica with SIGTERM while it runs work,
// as a rolling update does, with a shutdown deadline shorter than the
// work: the replica exits cleanly at the deadline, and the other takes the
// cut work up at once (not after its timeout), each due time recorded once.
func TestQueueRollingUpdate(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres)
	c := newCluster(t, store.Postgres, dsn, map[string]string{
		"SCHEDULE_INTERVAL_HOURS": "24", "SCHEDULE_RUN_TIMEOUT": "10m", "JOBS_TIMEOUT": "10m", "SHUTDOWN_TIMEOUT": "1s",
	})
	c.world.Serp.SetLatency(3 * time.Second)
	a := c.start("replica A")
	toks := users(t, a, "ada@example.com")
	admin, ada := toks[0], toks[1]
	companies := []string{"Roll Co 1", "Roll Co 2", "Roll Co 3"}
	ids := trackAndSubmit(t, c, []*replica{a}, admin, ada, companies, []string{"Roll Job Co"})
	waitFor(t, 20*time.Second, "work running on A", func() bool { return c.running()[a.pid()] >= 4 })
	b := c.start("replica B")
	stopped := time.Now()
	a.stop(t) // SIGTERM; exits 0 within its 1 s deadline and the queue's hard stop
	if took := time.Since(stopped); took > 10*time.Second {
		t.Errorf("A took %v to stop with SHUTDOWN_TIMEOUT=1s", took)
	}
	// With run and job timeouts of 10 minutes, only an immediate hand-over
	// finishes within the minute.
	waitFor(t, time.Minute, "B ran A's cut work", func() bool {
		for _, name := range companies {
			if runsOf(t, b, admin, name) == 0 {
				return false
			}
		}
		return true
	})
	checkEveryJobHeard(t, c, b, ada, ids, time.Minute)
	for _, name := range companies {
		if n := runsOf(t, b, admin, name); n != 1 {
			t.Errorf("%s: %d runs recorded, want 1", name, n)
		}
	}
	b.stop(t)
}

// TestJobFailedAtStartupIsHeard: on SQLite (one process), the jobs a
// process killed with -9 left running or pending fail when the service
// starts again (the spec's start-up rule), and their job.completed
// deliveries, status failed, are sent by the new process.
func TestJobFailedAtStartupIsHeard(t *testing.T) {
	dsn := "sqlite:" + storetest.DSN(t, store.SQLite)
	c := newCluster(t, store.SQLite, dsn, map[string]string{"SCHEDULER_ENABLED": "false", "JOBS_MAX_CONCURRENT": "1"})
	c.world.Serp.SetLatency(30 * time.Second)
	first := c.start("first process")
	toks := users(t, first, "ada@example.com")
	ids := trackAndSubmit(t, c, []*replica{first}, toks[0], toks[1], nil, []string{"Interrupted Co", "Waiting Co"})
	waitFor(t, 20*time.Second, "one job running, one pending", func() bool {
		return jobStatus(t, first, toks[1], ids[0]) == "running" && jobStatus(t, first, toks[1], ids[1]) == "pending"
	})
	kill9(t, first)
	second := c.start("restarted process")
	statuses := checkEveryJobHeard(t, c, second, toks[1], ids, time.Minute)
	for _, id := range ids {
		code, j := call(t, "GET", second.base+"/jobs/"+id, toks[1], nil)
		if errText, _ := j["error"].(string); statuses[id] != "failed" || code != 200 || errText != "the service restarted before the job ended" {
			t.Errorf("job after the restart = %d %v, want failed with the reason", code, j)
		}
	}
	second.stop(t)
}
