package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/testkit/wait"
)

// The helpers of the tests that run several patentsvc processes on one
// database (the work queue's replicas, kill -9), with the upstreams'
// fakes and a webhook receiver in the test's own process.

const clusterSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// cluster is patentsvc processes sharing a database, their fakes and a
// webhook receiver.
type cluster struct {
	t     testing.TB
	bin   string
	env   map[string]string
	world *analysistest.World
	hooks *hookLog
	db    *sql.DB      // the database the replicas share, for the test's own reads
	st    *store.Store // the same, through a store of the test's own
	// started are the processes start ran, for the logs of a failure.
	started []*replica
}

// newCluster prepares processes on the database at dsn of dialect, with
// extra settings; start starts them.
func newCluster(t testing.TB, dialect, dsn string, extra map[string]string) *cluster {
	t.Helper()
	c := &cluster{t: t, bin: buildBinary(t), hooks: newHookLog(t)}
	c.world = analysistest.NewWorld(t, storetest.Open(t, store.SQLite, time.Now)) // only the fakes
	c.env = map[string]string{
		"APP_ENV": "production", "JWT_SECRET": strings.Repeat("cluster-secret-", 3), "DATABASE_URL": dsn,
		"BCRYPT_COST": "4", "STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": c.world.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": c.world.LLM.BaseURL(), "PDF_ALLOWED_HOSTS": "127.0.0.1",
		"WEBHOOK_URLS": c.hooks.URL + "/hooks", "WEBHOOK_SECRET": clusterSecret, "WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s",
		"SHUTDOWN_TIMEOUT": "5s", "LOG_LEVEL": "DEBUG",
		"PATH": os.Getenv("PATH"), // tesseract, for PDF_OCR=auto
	}
	if dialect == store.SQLite {
		c.env["APP_ENV"] = "development" // SQLite is for development only
	}
	for k, v := range extra {
		c.env[k] = v
	}
	if dialect == store.Postgres {
		// The test's own reads of the queue, on a store of its own (its
		// queue inserts nothing and runs nothing).
		st := storetest.OpenAt(t, dialect, dsn, time.Now)
		db, err := st.SQL()
		if err != nil {
			t.Fatal(err)
		}
		c.db, c.st = db, st
	}
	return c
}

// unitsEnded waits, at most 20 s, until the queue at st holds units of
// kind and every one has ended (completed, cancelled or discarded): none
// runs or is due, so whatever they would do (a delivery, a recorded run)
// has been done. It is how a test sees that nothing more will come
// without waiting for it to come.
func unitsEnded(t testing.TB, st *store.Store, kind string) {
	t.Helper()
	var units []storetest.Unit
	if !wait.Until(20*time.Second, func() bool {
		units = storetest.Units(t, st, kind)
		for _, u := range units {
			if u.State != "completed" && u.State != "cancelled" && u.State != "discarded" {
				return false
			}
		}
		return len(units) > 0
	}) {
		t.Fatalf("%s units not ended within 20 s: %+v", kind, units)
	}
}

// start runs one more process.
func (c *cluster) start(name string) *replica {
	c.t.Helper()
	r := startReplica(c.t, name, c.bin, c.env)
	c.started = append(c.started, r)
	return r
}

// waitFor is waitFor, failing with the logs of every process started
// (the last 200 lines of each, DEBUG and access lines left out).
func (c *cluster) waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if wait.Until(within, cond) {
		return
	}
	var b strings.Builder
	for _, r := range c.started {
		var lines []string
		for line := range strings.Lines(r.logs.String()) {
			if !strings.Contains(line, `"level":"DEBUG"`) && !strings.Contains(line, `"msg":"request"`) {
				lines = append(lines, line)
			}
		}
		fmt.Fprintf(&b, "== %s (pid %d)\n%s", r.name, r.pid(), strings.Join(lines[max(len(lines)-200, 0):], ""))
	}
	t.Fatalf("%s: not within %v\n%s", what, within, b.String())
}

// kill9 kills r with SIGKILL (no shutdown at all) and waits for it.
func kill9(t testing.TB, r *replica) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.svc.Ended()
}

// running counts the units of the queue running on each process, by pid,
// as River records who runs them (the liveness session's name:
// host/pid/key).
func (c *cluster) running() map[int]int {
	c.t.Helper()
	rows, err := c.db.Query("SELECT attempted_by FROM river_job WHERE state = 'running'")
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			c.t.Fatal(err)
		}
		// PostgreSQL keeps it as text[] ({a,b}), SQLite as a JSON array.
		var by []string
		if text := string(raw); strings.HasPrefix(text, "{") {
			by = strings.Split(strings.Trim(text, "{}"), ",")
		} else if json.Unmarshal(raw, &by) != nil {
			continue
		}
		if len(by) == 0 {
			continue
		}
		if f := strings.Split(by[len(by)-1], "/"); len(f) == 3 {
			if pid, err := strconv.Atoi(f[1]); err == nil {
				out[pid]++
			}
		}
	}
	return out
}

// waitFor waits, at most within, until cond holds (wait.Until: the
// processes' state is read over HTTP or from the database, which tell
// nothing when it changes), and fails the test with what when it does
// not.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !wait.Until(within, cond) {
		t.Fatalf("%s: not within %v", what, within)
	}
}

// users registers the admin (the first user) and more users on r and
// returns their access tokens, admin first.
func users(t testing.TB, r *replica, emails ...string) []string {
	t.Helper()
	var toks []string
	for _, e := range append([]string{"admin@example.com"}, emails...) {
		creds := map[string]string{"email": e, "password": "correct horse battery"}
		if code, body := call(t, "POST", r.base+"/auth/register", "", creds); code != http.StatusCreated {
			t.Fatalf("register %s = %d %v", e, code, body)
		}
		_, tok := call(t, "POST", r.base+"/auth/login", "", creds)
		toks = append(toks, tok["access_token"].(string))
	}
	return toks
}

// callList sends a GET with token and decodes a JSON array answer.
func callList(t testing.TB, url, token string) (int, []map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// pid is r's process id.
func (r *replica) pid() int { return r.cmd.Process.Pid }

// peakRSS is the most resident memory r has used, from /proc (VmHWM), in
// bytes; 0 where /proc does not tell.
func (r *replica) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.pid()))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// hookLog is a webhook endpoint that checks signatures and keeps every
// delivery it gets: webhook-id, event and the data's job_id and status.
// While hang is set, it answers nothing: a request hangs until its client
// gives up (or dies), and counts as an attempt only; hangNext hangs the
// next request only.
type hookLog struct {
	*httptest.Server
	hang     atomic.Bool
	hangNext atomic.Bool
	mu       sync.Mutex
	got      []hookDelivery // answered 200
	attempts []hookDelivery // every request, answered or not
}

type hookDelivery struct {
	id, event, jobID, status string
	at                       time.Time
}

func newHookLog(t testing.TB) *hookLog {
	h := &hookLog{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(clusterSecret, r.Header, body, time.Now()); err != nil {
			t.Errorf("webhook signature: %v", err)
		}
		var e struct {
			Event string `json:"event"`
			Data  struct {
				JobID  string `json:"job_id"`
				Status string `json:"status"`
			} `json:"data"`
		}
		json.Unmarshal(body, &e)
		d := hookDelivery{id: r.Header.Get("webhook-id"), event: e.Event, jobID: e.Data.JobID, status: e.Data.Status, at: time.Now()}
		h.mu.Lock()
		h.attempts = append(h.attempts, d)
		h.mu.Unlock()
		if h.hang.Load() || h.hangNext.CompareAndSwap(true, false) {
			<-r.Context().Done()
			return
		}
		h.mu.Lock()
		h.got = append(h.got, d)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// jobEnds returns, per job id, the webhook-ids and statuses of its
// job.completed deliveries answered 200.
func (h *hookLog) jobEnds() map[string][]hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]hookDelivery{}
	for _, d := range h.got {
		if d.event == webhook.EventJobCompleted {
			out[d.jobID] = append(out[d.jobID], d)
		}
	}
	return out
}
