package config_test

import (
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/config"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

var update = flag.Bool("update", false, "rewrite docs/config/vinsvc.md")

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"AppEnv", c.AppEnv, "development"},
		{"Port", c.Port, 8080},
		{"LogLevel", c.LogLevel, slog.LevelInfo},
		{"ProxySecret", c.ProxySecret.Reveal(), config.DevProxySecret},
		{"ProxySecretDefaulted", c.ProxySecretDefaulted, true},
		{"VPICBaseURL", c.VPICBaseURL, "https://vpic.nhtsa.dot.gov/api/vehicles"},
		{"CachePath", c.CachePath, "data/vincache.db"},
		{"CacheTTL", c.CacheTTL, 90 * 24 * time.Hour},
		{"CacheSweepInterval", c.CacheSweepInterval, time.Hour},
		{"UpstreamTimeout", c.UpstreamTimeout, 10 * time.Second},
		{"UpstreamRetries", c.UpstreamRetries, 2},
		{"UpstreamCheckInterval", c.UpstreamCheckInterval, 60 * time.Second},
		{"UpstreamMaxRPS", c.UpstreamMaxRPS, 10.0},
		{"ShutdownTimeout", c.ShutdownTimeout, 15 * time.Second},
		{"RedisURL", c.RedisURL.Reveal(), ""},
		{"RedisTimeout", c.RedisTimeout, 50 * time.Millisecond},
		{"RedisKeyPrefix", c.RedisKeyPrefix, "vinsvc:"},
		{"DocsEnabled", c.DocsEnabled, true},
		{"RateLimits", c.RateLimits.String(), "BASIC=60/1m0s,DEFAULT=60/1m0s,MEGA=12000/1m0s,PRO=600/1m0s,ULTRA=3000/1m0s"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("default %s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestLoadValues(t *testing.T) {
	c, err := config.Load(env(map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "s3cret-s3cret-s3cret", "PORT": "9090", "CACHE_TTL": "24h",
		"UPSTREAM_MAX_RPS": "2.5", "RATE_LIMITS": "off", "LOG_LEVEL": "debug", "VPIC_BASE_URL": "http://127.0.0.1:1234/api/vehicles/",
		"DOCS_ENABLED": "false",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 9090 || c.CacheTTL != 24*time.Hour || c.UpstreamMaxRPS != 2.5 || c.RateLimits != nil ||
		c.LogLevel != slog.LevelDebug || c.ProxySecret.Reveal() != "s3cret-s3cret-s3cret" || c.ProxySecretDefaulted ||
		c.VPICBaseURL != "http://127.0.0.1:1234/api/vehicles" || c.DocsEnabled {
		t.Errorf("Load = %+v", c)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string // every substring must appear
	}{
		{"production without secret", map[string]string{"APP_ENV": "production"}, []string{"PROXY_SECRET", "required"}},
		{"staging without secret", map[string]string{"APP_ENV": "staging"}, []string{"PROXY_SECRET"}},
		{"production with a one-byte secret", map[string]string{"APP_ENV": "production", "PROXY_SECRET": "x"}, []string{"PROXY_SECRET: 1 bytes is too short", "at least 16"}},
		{"production with a 15-byte secret", map[string]string{"APP_ENV": "production", "PROXY_SECRET": "fifteen-bytes!!"}, []string{"PROXY_SECRET: 15 bytes"}},
		{"production with a short previous secret", map[string]string{"APP_ENV": "production", "PROXY_SECRET": "sixteen-bytes-ok", "PROXY_SECRET_PREVIOUS": "old"}, []string{"PROXY_SECRET_PREVIOUS: 3 bytes"}},
		{"bad duration", map[string]string{"CACHE_TTL": "9x"}, []string{`CACHE_TTL: invalid value "9x"`}},
		{"negative duration", map[string]string{"UPSTREAM_TIMEOUT": "-1s"}, []string{"UPSTREAM_TIMEOUT", "positive"}},
		{"bad port", map[string]string{"PORT": "http"}, []string{"PORT"}},
		{"port out of range", map[string]string{"PORT": "70000"}, []string{"PORT", "between"}},
		{"retries out of range", map[string]string{"UPSTREAM_RETRIES": "11"}, []string{"UPSTREAM_RETRIES"}},
		{"zero rps", map[string]string{"UPSTREAM_MAX_RPS": "0"}, []string{"UPSTREAM_MAX_RPS"}},
		{"nan rps", map[string]string{"UPSTREAM_MAX_RPS": "NaN"}, []string{"UPSTREAM_MAX_RPS"}},
		{"bad url", map[string]string{"VPIC_BASE_URL": "vpic.nhtsa.dot.gov"}, []string{"VPIC_BASE_URL"}},
		{"bad level", map[string]string{"LOG_LEVEL": "loud"}, []string{"LOG_LEVEL"}},
		{"docs neither true nor false", map[string]string{"DOCS_ENABLED": "maybe"}, []string{`DOCS_ENABLED: invalid value "maybe"`, "true or false"}},
		{"redis url without scheme", map[string]string{"REDIS_URL": "redis-host:6379"}, []string{"REDIS_URL", "redis://"}},
		{"redis url http", map[string]string{"REDIS_URL": "http://redis:6379"}, []string{"REDIS_URL", "redis://"}},
		{"redis url without host", map[string]string{"REDIS_URL": "redis://"}, []string{"REDIS_URL", "host"}},
		{"redis timeout zero", map[string]string{"REDIS_TIMEOUT": "0"}, []string{"REDIS_TIMEOUT", "positive"}},
		{"bad limits", map[string]string{"RATE_LIMITS": "BASIC=sixty/1m"}, []string{"RATE_LIMITS", "BASIC=sixty/1m"}},
		{"all reported at once", map[string]string{"PORT": "x", "CACHE_TTL": "y", "UPSTREAM_RETRIES": "z"}, []string{"PORT", "CACHE_TTL", "UPSTREAM_RETRIES"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(env(tt.env))
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	c, err := config.Load(env(map[string]string{"PROXY_SECRET": "hunter2-very-secret", "PROXY_SECRET_PREVIOUS": "hunter3-old-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	if strings.Contains(b.String(), "hunter") || !strings.Contains(b.String(), "[redacted]") {
		t.Errorf("logged config = %s, want the secret redacted", b.String())
	}
	if got := c.ProxySecrets(); len(got) != 2 || got[0] != "hunter2-very-secret" || got[1] != "hunter3-old-secret" {
		t.Errorf("ProxySecrets() = %d secrets, want current then previous", len(got))
	}
	_, err = config.Load(env(map[string]string{"PROXY_SECRET": "hunter2", "PORT": "x"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Load error = %v, must not contain the secret", err)
	}
	// REDIS_URL carries a password: never in the log, nor in an error.
	c, err = config.Load(env(map[string]string{"REDIS_URL": "redis://:hunter4@redis:6379/0"}))
	if err != nil || c.RedisURL.Reveal() != "redis://:hunter4@redis:6379/0" {
		t.Fatalf("Load(REDIS_URL) = %q, %v", c.RedisURL.Reveal(), err)
	}
	b.Reset()
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	if strings.Contains(b.String(), "hunter4") || !strings.Contains(b.String(), `"redis_url_set":true`) {
		t.Errorf("logged config = %s, want REDIS_URL hidden and redis_url_set true", b.String())
	}
	_, err = config.Load(env(map[string]string{"REDIS_URL": "http://:hunter5@redis"}))
	if err == nil || strings.Contains(err.Error(), "hunter5") {
		t.Errorf("Load error = %v, must not contain the Redis password", err)
	}
}

func TestRateLimitsDefaultPlanAdded(t *testing.T) {
	c, err := config.Load(env(map[string]string{"RATE_LIMITS": "pro=5/1s"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RateLimits[ratelimit.DefaultPlan]; got != (ratelimit.Limit{N: 60, Per: time.Minute}) {
		t.Errorf("default plan = %v, want 60/1m", got)
	}
	if got := c.RateLimits["PRO"]; got != (ratelimit.Limit{N: 5, Per: time.Second}) {
		t.Errorf("PRO plan = %v, want 5/1s", got)
	}
}

// TestDocUpToDate keeps docs/config/vinsvc.md generated from the table.
func TestDocUpToDate(t *testing.T) {
	const path = "../../../docs/config/vinsvc.md"
	want := config.Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/config -update)", err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date; run go test ./internal/config -update", path)
	}
}

// TestProxySecretLength checks the length rule's edges: 16 bytes start in
// production, and development keeps any secret (a local gateway's).
func TestProxySecretLength(t *testing.T) {
	for _, tt := range []struct {
		env, secret string
	}{{"production", "sixteen-bytes-ok"}, {"development", "x"}} {
		if _, err := config.Load(env(map[string]string{"APP_ENV": tt.env, "PROXY_SECRET": tt.secret})); err != nil {
			t.Errorf("APP_ENV=%s, %d-byte secret: %v, want it accepted", tt.env, len(tt.secret), err)
		}
	}
}
