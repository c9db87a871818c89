package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/vinsvc/internal/cluster/redistest"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// The replica tests run vinsvc as production does: several processes
// (this test binary re-executed as the service), each with its own bbolt
// file, sharing one Redis, behind a round-robin client.

const childEnv = "VINSVC_TEST_CHILD"

// TestMain runs the service instead of the tests in a child process.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := run(context.Background(), []string{"vinsvc"}, os.Getenv, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// replicaSecret is the proxy secret of the replica tests.
const replicaSecret = "replica-proxy-secret"

// startReplicas starts n vinsvc processes with env (plus PORT=0 and a
// cache file each) and returns their base URLs, on the ports they log at
// start, and their output. When the test ends each is stopped with SIGTERM
// and must exit with status 0.
func startReplicas(t *testing.T, n int, env map[string]string) ([]string, []*syncbuf.Buffer) {
	t.Helper()
	var bases []string
	var logs []*syncbuf.Buffer
	for i := range n {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"=1",
			"CACHE_PATH="+filepath.Join(t.TempDir(), fmt.Sprintf("replica%d.db", i)),
			"PROXY_SECRET="+replicaSecret, "VPIC_SNAPSHOT_MODE=off", "UPSTREAM_CHECK_INTERVAL=1h", "LOG_LEVEL=info")
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		name := fmt.Sprintf("replica %d", i)
		r := service.Exec(t, cmd, service.Options{Name: name, StartWithin: time.Minute})
		t.Cleanup(func() {
			if err := r.Stop(); err != nil {
				t.Errorf("%s: %v after SIGTERM, want exit status 0\n%s", name, err, r.Logs)
			}
		})
		bases, logs = append(bases, r.URL), append(logs, r.Logs)
	}
	return bases, logs
}

// replicaRequest sends one request with the gateway's headers and returns
// the status and body; a transport error is a test failure.
func replicaRequest(t *testing.T, method, url, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("X-Gateway-Proxy-Secret", replicaSecret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// sharedRedis is the environment of replicas sharing the test Redis. The
// tests of sharing give Redis a second per command: three race-detector
// processes on two busy cores can take longer than the 50 ms default, and
// a replica that falls back to working alone (the fault tests' subject)
// would make the count of vPIC calls wrong for the wrong reason.
func sharedRedis(t *testing.T) map[string]string {
	url := redistest.URL(t)
	return map[string]string{"REDIS_URL": url, "REDIS_KEY_PREFIX": redistest.Prefix(t, url), "REDIS_TIMEOUT": "1s"}
}

// TestReplicasShareTheLimit: a plan of 30/1m is the subscriber's total
// over three replicas: 30 of 60 requests sent round-robin pass, the rest
// are 429 with Retry-After.
func TestReplicasShareTheLimit(t *testing.T) {
	up := vpictest.New(t)
	env := sharedRedis(t)
	env["VPIC_BASE_URL"], env["RATE_LIMITS"] = up.BaseURL(), "MEGA=30/1m,default=60/1m"
	bases, _ := startReplicas(t, 3, env)
	hdr := map[string]string{"X-Gateway-Subscription": "MEGA", "X-Gateway-User": "alice"}
	counts := map[int]int{}
	for i := range 60 {
		code, body := replicaRequest(t, http.MethodGet, bases[i%3]+"/v1/decode?vin="+vpictest.VINHondaAccord, "", hdr)
		counts[code]++
		if code != http.StatusOK && code != http.StatusTooManyRequests {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	if counts[http.StatusOK] != 30 || counts[http.StatusTooManyRequests] != 30 {
		t.Errorf("60 requests over 3 replicas with 30/1m: %v, want 30 allowed and 30 refused", counts)
	}
}

// TestReplicasShareDecodes: a 50-VIN batch sent to each replica in turn
// makes one vPIC call in all; the second and third replicas answer from
// the shared tier (cached).
func TestReplicasShareDecodes(t *testing.T) {
	up := vpictest.New(t)
	env := sharedRedis(t)
	env["VPIC_BASE_URL"], env["RATE_LIMITS"] = up.BaseURL(), "off"
	bases, _ := startReplicas(t, 3, env)
	var vins []string
	for i := range 50 {
		vins = append(vins, fmt.Sprintf("1FTEW1EP%dMFA%05d", i%10, i))
	}
	body, _ := json.Marshal(map[string][]string{"vins": vins})
	for i, base := range bases {
		code, resp := replicaRequest(t, http.MethodPost, base+"/v1/batch", string(body), nil)
		if code != http.StatusOK {
			t.Fatalf("batch on replica %d: %d %s", i, code, resp)
		}
		var got struct {
			Results []struct {
				VIN    string `json:"vin"`
				Cached bool   `json:"cached"`
			} `json:"results"`
		}
		if err := json.Unmarshal(resp, &got); err != nil || len(got.Results) != 50 {
			t.Fatalf("batch on replica %d: %v, %s", i, err, resp)
		}
		if want := i > 0; got.Results[0].Cached != want || got.Results[49].Cached != want {
			t.Errorf("replica %d: cached %v, want %v", i, got.Results[0].Cached, want)
		}
	}
	if n := decodeCalls(up); n != 1 {
		t.Errorf("%d vPIC calls for one batch sent to 3 replicas, want 1", n)
	}
}

// TestReplicasOneCallPerMiss: 20 concurrent decodes of one new VIN spread
// over three replicas make one vPIC call.
func TestReplicasOneCallPerMiss(t *testing.T) {
	up := vpictest.New(t)
	up.SetLatency(300 * time.Millisecond)
	env := sharedRedis(t)
	env["VPIC_BASE_URL"], env["RATE_LIMITS"] = up.BaseURL(), "off"
	bases, _ := startReplicas(t, 3, env)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			code, body := replicaRequest(t, http.MethodGet, bases[i%3]+"/v1/decode?vin="+vpictest.VINVWTiguan, "", nil)
			if code != http.StatusOK || !bytes.Contains(body, []byte(`"vin":"`+vpictest.VINVWTiguan+`"`)) {
				t.Errorf("decode %d: %d %s", i, code, body)
			}
		})
	}
	wg.Wait()
	if n := decodeCalls(up); n != 1 {
		t.Errorf("%d vPIC calls for 20 concurrent decodes of one VIN on 3 replicas, want 1", n)
	}
}

// TestReplicasSharePacing: UPSTREAM_MAX_RPS is the cluster's total. Three
// replicas at 2 per second, asked for 6 new VINs at once, space their vPIC
// calls over at least 2.5 s; each pacing alone would need 0.5 s. (A lower
// bound: a slow machine only spreads the calls further.)
func TestReplicasSharePacing(t *testing.T) {
	up := vpictest.New(t)
	env := sharedRedis(t)
	env["VPIC_BASE_URL"], env["RATE_LIMITS"], env["UPSTREAM_MAX_RPS"] = up.BaseURL(), "off", "2"
	env["UPSTREAM_TIMEOUT"], env["VPIC_SNAPSHOT_AFTER"] = "20s", "0"
	bases, _ := startReplicas(t, 3, env)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			v := fmt.Sprintf("1HGCM8263%dA00435%d", i, i)
			if code, body := replicaRequest(t, http.MethodGet, bases[i%3]+"/v1/decode?vin="+v, "", nil); code != http.StatusOK {
				t.Errorf("decode %s: %d %s", v, code, body)
			}
		})
	}
	wg.Wait()
	var first, last time.Time
	n := 0
	for _, c := range up.Calls() {
		if len(c.VINs) == 1 && c.VINs[0] == vpic.ProbeVIN {
			continue
		}
		if n == 0 || c.At.Before(first) {
			first = c.At
		}
		if c.At.After(last) {
			last = c.At
		}
		n++
	}
	if n != 6 || last.Sub(first) < 2500*time.Millisecond {
		t.Errorf("%d vPIC calls spread over %v; want 6 over at least 2.5 s (2 per second for the cluster)", n, last.Sub(first))
	}
}

// TestReplicasSurviveRedisOutage: Redis killed in the middle of a steady
// load and started again: every request is answered (200), none is lost or
// a 5xx; health shows the outage and its end.
func TestReplicasSurviveRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	up := vpictest.New(t)
	bases, logs := startReplicas(t, 3, map[string]string{
		"REDIS_URL": srv.URL(), "VPIC_BASE_URL": up.BaseURL(), "RATE_LIMITS": "default=100000/1m",
		"REDIS_TIMEOUT": "1s", // the outage here is a killed Redis: refused at once
	})
	vins := []string{vpictest.VINHondaAccord, vpictest.VINFordF150, vpictest.VINVWTiguan, vpictest.VINHyundaiIoniq, vpictest.VINBMWCheckDigit}
	var sent, failed atomic.Int64
	answered := make(chan struct{}, 1) // a request was answered (sent grew)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, body := replicaRequest(t, http.MethodGet, bases[(w+i)%3]+"/v1/decode?vin="+vins[i%len(vins)], "", nil)
				sent.Add(1)
				select {
				case answered <- struct{}{}:
				default:
				}
				if code != http.StatusOK {
					failed.Add(1)
					t.Errorf("request during the outage test: %d %s", code, body)
				}
			}
		})
	}
	// waitSent waits, woken by each answer, until n requests have been
	// answered.
	waitSent := func(n int64) {
		t.Helper()
		deadline := time.After(time.Minute)
		for sent.Load() < n {
			select {
			case <-answered:
			case <-deadline:
				t.Fatalf("%d requests answered in a minute, want %d", sent.Load(), n)
			}
		}
	}
	waitSent(100)
	srv.Stop()
	waitSent(sent.Load() + 200)
	if h := healthRedis(t, bases[0]); h != "unreachable" {
		t.Errorf("health redis during the outage = %q", h)
	}
	srv.Restart()
	// Each replica finds Redis again at its first command past
	// cluster.RetryInterval, and says so.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, l := range logs {
		if _, err := l.WaitFor(ctx, func(s string) bool { return strings.Contains(s, "redis reachable again") }); err != nil {
			t.Fatalf("replica %d never found Redis again: %v\n%s", i, err, l)
		}
	}
	waitSent(sent.Load() + 200)
	close(stop)
	wg.Wait()
	for i, base := range bases {
		if h := healthRedis(t, base); h != "ok" {
			t.Errorf("replica %d: health redis after the outage = %q", i, h)
		}
	}
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed around the Redis outage", failed.Load(), sent.Load())
	}
	for i, l := range logs {
		if n := strings.Count(l.String(), "redis unreachable"); n != 1 {
			t.Errorf("replica %d logged the outage %d times, want once", i, n)
		}
		if n := strings.Count(l.String(), "redis reachable again"); n != 1 {
			t.Errorf("replica %d logged the outage's end %d times, want once", i, n)
		}
	}
}

// decodeCalls counts the calls vPIC received for decodes, leaving out
// the replicas' start-up health probes.
func decodeCalls(up *vpictest.Server) int {
	n := 0
	for _, c := range up.Calls() {
		if len(c.VINs) != 1 || c.VINs[0] != vpic.ProbeVIN {
			n++
		}
	}
	return n
}

func healthRedis(t *testing.T, base string) string {
	t.Helper()
	code, body := replicaRequest(t, http.MethodGet, base+"/v1/health", "", nil)
	var h struct {
		Status string `json:"status"`
		Redis  string `json:"redis"`
	}
	if err := json.Unmarshal(body, &h); err != nil || code != http.StatusOK {
		t.Errorf("health: %d %s", code, body)
	}
	return h.Redis
}
