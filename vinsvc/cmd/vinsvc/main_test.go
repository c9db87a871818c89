package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// listenLocal opens a listener on 127.0.0.1 on a port the kernel picks,
// closed when the test ends if the service has not closed it. The service
// is handed the listener itself (handOver): a port chosen, closed and bound
// again later can be taken by another process in between (issue 27).
func listenLocal(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// handOver is serve's listen for a listener the test opened: PORT is not
// used.
func handOver(ln net.Listener) func(int) (net.Listener, error) {
	return func(int) (net.Listener, error) { return ln, nil }
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// start runs the service as main does, on a listener of the test's own,
// and returns its base URL and a function that stops it and returns
// serve's error.
func start(t *testing.T, env map[string]string) (string, func() error, *lockedBuffer) {
	t.Helper()
	ln := listenLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, handOver(ln), func(k string) string { return env[k] }, logs) }()
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/livez")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned before serving: %v\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not answer /livez within 10s\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = fmt.Errorf("serve did not return within 30s of cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return base, stop, logs
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestRunEndToEnd(t *testing.T) {
	up := vpictest.New(t)
	dbPath := filepath.Join(t.TempDir(), "data", "vincache.db")
	base, stop, logs := start(t, map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "e2e-proxy-secret-16", "VPIC_BASE_URL": up.BaseURL(),
		"CACHE_PATH": dbPath, "UPSTREAM_CHECK_INTERVAL": "1h",
	})
	auth := map[string]string{"X-Gateway-Proxy-Secret": "e2e-proxy-secret-16", "X-Gateway-Subscription": "PRO", "X-Gateway-User": "e2e"}

	resp, _ := get(t, base+"/v1/decode?vin="+vpictest.VINHondaAccord, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("decode without secret = %d, want 403", resp.StatusCode)
	}
	for i, want := range []string{"MISS", "HIT"} {
		resp, body := get(t, base+"/v1/decode?vin="+vpictest.VINHondaAccord, auth)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Cache") != want {
			t.Fatalf("decode %d = %d %s (X-Cache %q), want 200 %s", i, resp.StatusCode, body, resp.Header.Get("X-Cache"), want)
		}
		if resp.Header.Get("X-RateLimit-Limit") != "600" {
			t.Errorf("X-RateLimit-Limit = %q, want the PRO plan's 600", resp.Header.Get("X-RateLimit-Limit"))
		}
	}
	resp, body := get(t, base+"/v1/health", nil)
	var h struct {
		Status string
		Cache  struct{ Entries int }
	}
	json.Unmarshal(body, &h)
	if resp.StatusCode != http.StatusOK || h.Status != "ok" || h.Cache.Entries != 1 {
		t.Errorf("health = %d %s", resp.StatusCode, body)
	}

	// An in-flight request finishes during shutdown.
	up.SetLatency(300 * time.Millisecond)
	inflight := make(chan int, 1)
	go func() {
		resp, _ := get(t, base+"/v1/decode?vin="+vpictest.VINFordF150, auth)
		inflight <- resp.StatusCode
	}()
	for up.CallCount() < 3 { // probe, first decode, this one
		time.Sleep(5 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after shutdown, want nil\n%s", err, logs)
	}
	if code := <-inflight; code != http.StatusOK {
		t.Errorf("in-flight request during shutdown = %d, want 200", code)
	}
	if !strings.Contains(logs.String(), `"msg":"vinsvc stopped"`) {
		t.Errorf("no clean stop logged:\n%s", logs)
	}
	if strings.Contains(logs.String(), "e2e-proxy-secret-16") {
		t.Error("logs contain the proxy secret")
	}

	// The cache file was closed cleanly and kept both answers.
	c, err := cache.Open(dbPath, time.Hour, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		t.Fatalf("reopen cache after shutdown: %v", err)
	}
	defer c.Close()
	if got := c.Stats().Entries; got != 2 {
		t.Errorf("cache entries after restart = %d, want 2", got)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"production without secret":         {"APP_ENV": "production"},
		"production with a one-byte secret": {"APP_ENV": "production", "PROXY_SECRET": "x"},
		"bad ttl":                           {"CACHE_TTL": "forever"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), []string{"vinsvc"}, func(k string) string { return env[k] }, &out)
			if err == nil {
				t.Fatal("run started, want a configuration error")
			}
			if strings.HasPrefix(name, "production") && !strings.Contains(err.Error(), "PROXY_SECRET") {
				t.Errorf("error = %v, want it to name PROXY_SECRET", err)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"vinsvc", "version"}, func(string) string { return "" }, &out); err != nil || strings.TrimSpace(out.String()) != version {
		t.Errorf("vinsvc version = %q, %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"vinsvc", "serve-please"}, func(string) string { return "" }, &out); err == nil {
		t.Error("unknown command accepted")
	}
}
