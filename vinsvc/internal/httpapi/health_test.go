package httpapi_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

type healthBody struct {
	Status        string `json:"status"`
	Version       string `json:"version"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	Cache         struct {
		Entries    int64   `json:"entries"`
		HitRate24h float64 `json:"hit_rate_24h"`
		SizeMB     float64 `json:"size_mb"`
	} `json:"cache"`
	Upstream map[string]string `json:"upstream"`
	Redis    string            `json:"redis"`
}

// TestHealthRedis: health shows the shared Redis's state, and an
// unreachable Redis leaves the service healthy (each replica then answers
// alone).
func TestHealthRedis(t *testing.T) {
	for _, state := range []string{"ok", "unreachable", "disabled"} {
		en := newEnv(t, withShared(fixedShared(state)))
		en.mon.Check(context.Background())
		rec := en.do(t, request{target: "/v1/health", noAuth: true})
		var h healthBody
		decode(t, rec, &h)
		if rec.Code != http.StatusOK || h.Status != "ok" || h.Redis != state {
			t.Errorf("redis %s: status %d, body %s", state, rec.Code, rec.Body)
		}
	}
}

func TestHealthOK(t *testing.T) {
	en := newEnv(t, withLimits("default=1/1h"))
	if !en.mon.Check(context.Background()) {
		t.Fatal("probe against the fake failed")
	}
	en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: map[string]string{"X-Gateway-User": "h"}})
	en.clk.Advance(time.Minute)
	// Health needs no secret and is never rate limited.
	for range 3 {
		rec := en.do(t, request{target: "/v1/health", noAuth: true, headers: map[string]string{"X-Gateway-User": "h"}})
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
		}
		if rec.Header().Get("X-RateLimit-Limit") != "" {
			t.Error("health carries rate-limit headers")
		}
	}
	rec := en.do(t, request{target: "/v1/health", noAuth: true})
	var h healthBody
	decode(t, rec, &h)
	if h.Status != "ok" || h.Version != "1.0.0" || h.UptimeSeconds != 3660 || h.Cache.Entries != 1 ||
		h.Cache.HitRate24h != 0 || h.Cache.SizeMB <= 0 ||
		h.Upstream["upstream_catalog"] != "reachable" || h.Upstream["last_check"] != "2026-11-25T12:00:00Z" {
		t.Errorf("health = %+v", h)
	}
	// A hit moves the 24h hit rate.
	en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord, headers: map[string]string{"X-Gateway-User": "h2"}})
	decode(t, en.do(t, request{target: "/v1/health", noAuth: true}), &h)
	if h.Cache.HitRate24h != 0.5 {
		t.Errorf("hit_rate_24h = %v after one miss and one hit, want 0.5", h.Cache.HitRate24h)
	}
}

func TestHealthGolden(t *testing.T) {
	en := newEnv(t)
	en.mon.Check(context.Background())
	rec := en.do(t, request{target: "/v1/health", noAuth: true})
	// size_mb depends on bbolt's page allocation; pin the rest.
	body := regexp.MustCompile(`"size_mb":[0-9.e+-]+`).ReplaceAll(rec.Body.Bytes(), []byte(`"size_mb":0`))
	golden(t, "health-200", body)
}

func TestHealthDegradedUpstream(t *testing.T) {
	en := newEnv(t)
	en.up.Script(vpictest.Reply{Status: 503})
	if en.mon.Check(context.Background()) {
		t.Fatal("probe succeeded against a failing upstream")
	}
	rec := en.do(t, request{target: "/v1/health", noAuth: true})
	var h healthBody
	decode(t, rec, &h)
	if rec.Code != http.StatusServiceUnavailable || h.Status != "degraded" || h.Upstream["upstream_catalog"] != "unreachable" {
		t.Errorf("health = %d %+v, want 503 degraded with the upstream unreachable", rec.Code, h)
	}
	// Readiness does not depend on the upstream.
	if rec := en.do(t, request{target: "/readyz", noAuth: true}); rec.Code != http.StatusOK {
		t.Errorf("/readyz = %d while only the upstream is down, want 200", rec.Code)
	}
	// Recovery.
	en.mon.Check(context.Background())
	if rec := en.do(t, request{target: "/v1/health", noAuth: true}); rec.Code != http.StatusOK {
		t.Errorf("health after recovery = %d, want 200", rec.Code)
	}
}

func TestHealthDegradedCache(t *testing.T) {
	en := newEnv(t)
	en.mon.Check(context.Background())
	if err := en.cache.Close(); err != nil {
		t.Fatal(err)
	}
	rec := en.do(t, request{target: "/v1/health", noAuth: true})
	var h healthBody
	decode(t, rec, &h)
	if rec.Code != http.StatusServiceUnavailable || h.Status != "degraded" || h.Upstream["upstream_catalog"] != "reachable" {
		t.Errorf("health with a closed cache = %d %+v, want 503 degraded", rec.Code, h)
	}
	if rec := en.do(t, request{target: "/readyz", noAuth: true}); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with a closed cache = %d, want 503", rec.Code)
	}
	if rec := en.do(t, request{target: "/livez", noAuth: true}); rec.Code != http.StatusOK {
		t.Errorf("/livez = %d, want 200 (no dependency checks)", rec.Code)
	}
	// Decoding still works from the upstream while the cache is broken.
	if rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord}); rec.Code != http.StatusOK {
		t.Errorf("decode with a broken cache = %d, want 200 from the upstream", rec.Code)
	}
}

func TestProbes(t *testing.T) {
	en := newEnv(t)
	for _, p := range []string{"/livez", "/readyz"} {
		rec := en.do(t, request{target: p, noAuth: true})
		if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s = %d (Cache-Control %q), want 200 no-store", p, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
}

// TestHealthDemo: under make demo health says so; otherwise the field is
// absent.
func TestHealthDemo(t *testing.T) {
	for _, on := range []bool{false, true} {
		opts := []option{}
		if on {
			opts = append(opts, demo())
		}
		rec := newEnv(t, opts...).do(t, request{target: "/v1/health", noAuth: true})
		var h map[string]any
		decode(t, rec, &h)
		if got, present := h["demo"]; on && got != true || !on && present {
			t.Errorf("demo %v: health %s", on, rec.Body)
		}
	}
}
