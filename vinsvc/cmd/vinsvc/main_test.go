package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// start runs the service as main does, in the test's process, on a
// loopback listener the test opened and handed over (PORT unused: a port
// chosen, closed and bound again later can be taken by another process in
// between, issue 27), and returns its base URL, a function that stops it
// and returns serve's error, and its log.
func start(t *testing.T, env map[string]string) (string, func() error, *syncbuf.Buffer) {
	t.Helper()
	s := service.Start(t, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
		return serve(ctx, func(int) (net.Listener, error) { return ln, nil }, func(k string) string { return env[k] }, logs)
	}, service.Options{Name: "vinsvc"})
	return s.URL, s.Stop, s.Logs
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := up.WaitCalls(ctx, 3); err != nil { // probe, first decode, this one
		t.Fatalf("the decode never reached vPIC: %v\n%s", err, logs)
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
