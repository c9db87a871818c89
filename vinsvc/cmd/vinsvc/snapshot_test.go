package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// snapshotPath is the real vPIC snapshot (TEST_VPIC_SNAPSHOT, set by
// .ci/run after make vpic-snapshot). Without it the test skips, unless
// REQUIRE_SNAPSHOT=1 makes that a failure.
func snapshotPath(t *testing.T) string {
	t.Helper()
	if raceEnabled {
		t.Skip("loading the real snapshot under the race detector takes minutes; make test runs this test again without -race")
	}
	p := os.Getenv("TEST_VPIC_SNAPSHOT")
	if p == "" {
		p = filepath.Join("..", "..", "..", "data", "vpic", "vpic.lite.db")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("REQUIRE_SNAPSHOT") == "1" {
			t.Fatalf("REQUIRE_SNAPSHOT=1 but no vPIC snapshot at %s (run make vpic-snapshot): %v", p, err)
		}
		t.Skipf("no vPIC snapshot at %s (make vpic-snapshot; TEST_VPIC_SNAPSHOT): %v", p, err)
	}
	return p
}

// closedURL is a vPIC base URL nothing listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/api/vehicles"
}

// waitLog waits, at most a minute, until the logs hold want.
func waitLog(t *testing.T, logs *syncbuf.Buffer, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := logs.WaitFor(ctx, func(s string) bool { return strings.Contains(s, want) }); err != nil {
		t.Fatalf("no log line with %s: %v\n%s", want, err, logs)
	}
}

type decodeBody struct {
	Make      *string `json:"make"`
	ModelYear *string `json:"model_year"`
	Source    string  `json:"source"`
	ErrorCode string  `json:"error_code"`
	Cached    bool    `json:"cached"`
}

// TestRunSnapshot runs the service offline: vPIC unreachable (fallback)
// or never called (only), a VIN decoded from the real snapshot.
func TestRunSnapshot(t *testing.T) {
	snap := snapshotPath(t)
	auth := map[string]string{"X-Gateway-Proxy-Secret": "dev-proxy-secret"}
	for _, tt := range []struct {
		mode, vpicURL string
	}{
		{"fallback", closedURL(t)},
		{"only", ""}, // set below to a live fake that must get no call
	} {
		t.Run(tt.mode, func(t *testing.T) {
			up := vpictest.New(t)
			url := tt.vpicURL
			if url == "" {
				url = up.BaseURL()
			}
			base, stop, logs := start(t, map[string]string{
				"VPIC_BASE_URL": url, "CACHE_PATH": filepath.Join(t.TempDir(), "c.db"), "UPSTREAM_RETRIES": "0",
				"VPIC_SNAPSHOT_PATH": snap, "VPIC_SNAPSHOT_MODE": tt.mode,
			})
			// Loaded (a decode sent before it is answered would wait for the
			// load: fallback and only mode both do).
			waitLog(t, logs, `"msg":"vPIC snapshot ready"`)
			resp, body := get(t, base+"/v1/decode?vin="+vpictest.VINHondaAccord, auth)
			var d decodeBody
			json.Unmarshal(body, &d)
			if resp.StatusCode != http.StatusOK || d.Source != "snapshot" || d.Make == nil || !strings.EqualFold(*d.Make, "HONDA") ||
				d.ModelYear == nil || *d.ModelYear != "2003" || d.ErrorCode != "0" {
				t.Fatalf("offline decode = %d %s, want HONDA 2003 from the snapshot\n%s", resp.StatusCode, body, logs)
			}
			if src := resp.Header.Get("X-Data-Source"); !strings.HasPrefix(src, "NHTSA vPIC snapshot 20") {
				t.Errorf("X-Data-Source = %q, want the snapshot with its date", src)
			}
			resp, body = get(t, base+"/v1/health", nil)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"available":true`) {
				t.Errorf("health = %d %s, want ok with the snapshot available", resp.StatusCode, body)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if tt.mode == "only" && up.CallCount() != 0 {
				t.Errorf("only mode called vPIC %d times", up.CallCount())
			}
			if !strings.Contains(logs.String(), `"msg":"vPIC snapshot ready"`) {
				t.Errorf("no snapshot start-up line:\n%s", logs)
			}
		})
	}
}

// TestRunBadSnapshot: a corrupt file is named in the log and the service
// runs without it.
func TestRunBadSnapshot(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "vpic.lite.db")
	if err := os.WriteFile(bad, []byte("SQLite format 3\x00 but cut short"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"corrupt": bad, "missing": filepath.Join(dir, "absent.db")} {
		t.Run(name, func(t *testing.T) {
			up := vpictest.New(t)
			base, stop, logs := start(t, map[string]string{
				"VPIC_BASE_URL": up.BaseURL(), "CACHE_PATH": filepath.Join(t.TempDir(), "c.db"),
				"VPIC_SNAPSHOT_PATH": path,
			})
			waitLog(t, logs, `"msg":"vPIC snapshot not available`)
			resp, body := get(t, base+"/v1/health", nil)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"snapshot":{"mode":"fallback","available":false`) {
				t.Errorf("health = %d %s, want ok with the snapshot unavailable", resp.StatusCode, body)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), `"msg":"vPIC snapshot not available`) {
				t.Errorf("the unusable snapshot is not logged:\n%s", logs)
			}
		})
	}
}

// TestRunSnapshotReadiness starts the service in only mode on the real
// snapshot, which takes seconds to load (BenchmarkOpen: 2.5-3.5 s), and
// reads it while it loads: /readyz answers 503 loading, health stays 200
// (no flap), and a decode sent meanwhile waits for the load and is
// answered from the snapshot, never 500 (decisions.md, "vinsvc: snapshot
// answers as vPIC gives them"). Then the pod is ready.
func TestRunSnapshotReadiness(t *testing.T) {
	snap := snapshotPath(t)
	up := vpictest.New(t)
	base, _, logs := start(t, map[string]string{
		"VPIC_BASE_URL": up.BaseURL(), "CACHE_PATH": filepath.Join(t.TempDir(), "c.db"),
		"VPIC_SNAPSHOT_PATH": snap, "VPIC_SNAPSHOT_MODE": "only", "UPSTREAM_TIMEOUT": "60s",
	})
	resp, body := get(t, base+"/readyz", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || strings.TrimSpace(string(body)) != `{"status":"loading","reason":"vPIC snapshot loading"}` {
		t.Fatalf("readyz right after start = %d %s, want 503 loading (did the snapshot load in under a poll?)\n%s", resp.StatusCode, body, logs)
	}
	decoded := make(chan string, 1)
	go func() {
		resp, body := get(t, base+"/v1/decode?vin="+vpictest.VINHondaAccord, map[string]string{"X-Gateway-Proxy-Secret": "dev-proxy-secret"})
		decoded <- resp.Status + " " + resp.Header.Get("X-Data-Source") + " " + string(body)
	}()
	// Health is sampled every 50 ms through the load: every answer 200.
	loading := 0
	sample := time.NewTicker(50 * time.Millisecond)
	defer sample.Stop()
	deadline := time.After(time.Minute)
	for {
		resp, body := get(t, base+"/v1/health", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health during the load = %d %s, want 200\n%s", resp.StatusCode, body, logs)
		}
		if !strings.Contains(string(body), `"loading":true`) {
			break
		}
		loading++
		select {
		case <-sample.C:
		case <-deadline:
			t.Fatalf("the snapshot still loads a minute after start\n%s", logs)
		}
	}
	got := <-decoded
	if !strings.HasPrefix(got, "200 OK NHTSA vPIC snapshot 20") {
		t.Errorf("decode sent during the load = %s, want 200 from the snapshot", got)
	}
	if resp, body := get(t, base+"/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("readyz after the load = %d %s, want 200", resp.StatusCode, body)
	}
	t.Logf("health answered 200 with loading true %d times during the load", loading)
	if up.CallCount() != 0 {
		t.Errorf("only mode called vPIC %d times", up.CallCount())
	}
}
