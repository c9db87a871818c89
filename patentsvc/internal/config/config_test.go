package config_test

import (
	"flag"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/config"
)

var update = flag.Bool("update", false, "rewrite docs/config/patentsvc.md")

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range []struct {
		name      string
		got, want any
	}{
		{"AppEnv", c.AppEnv, "development"},
		{"Port", c.Port, 8081},
		{"LogLevel", c.LogLevel, slog.LevelInfo},
		{"RootPath", c.RootPath, ""},
		{"CORSOrigins", strings.Join(c.CORSOrigins, ","), "http://localhost:3000,http://localhost:5173"},
		{"TrustedProxies", len(c.TrustedProxies), 0},
		{"DatabaseDSN", c.DatabaseDSN(), "data/patentsvc.db"},
		{"JWTSecret", c.JWTSecret.Reveal(), config.DefaultJWTSecret},
		{"AccessTokenTTL", c.AccessTokenTTL, 30 * time.Minute},
		{"RefreshTokenTTL", c.RefreshTokenTTL, 168 * time.Hour},
		{"BcryptCost", c.BcryptCost, 12},
		{"Model", c.Model, "openai/gpt-4o-mini"},
		{"SerpAPIBaseURL", c.SerpAPIBaseURL, "https://serpapi.com"},
		{"LLMBaseURL", c.LLMBaseURL, "https://openrouter.ai/api/v1"},
		{"UseCache", c.UseCache, true},
		{"SerpCacheTTL", c.SerpCacheTTL, 24 * time.Hour},
		{"PatentLookbackDays", c.PatentLookbackDays, 365},
		{"MaxPatentsPerCompany", c.MaxPatentsPerCompany, 10},
		{"StorageBackend", c.StorageBackend, "local"},
		{"StorageDir", c.StorageDir, "data/patents"},
		{"PDFAllowedHosts", strings.Join(c.PDFAllowedHosts, ","), "patentimages.storage.googleapis.com"},
		{"SchedulerEnabled", c.SchedulerEnabled, true},
		{"ScheduleInterval", c.ScheduleInterval, 24 * time.Hour},
		{"ChangeThresholdPercent", c.ChangeThresholdPercent, 20.0},
		{"ShutdownTimeout", c.ShutdownTimeout, 15 * time.Second},
		{"AnalyzerMissing", strings.Join(c.AnalyzerMissing(), ","), "SERPAPI_API_KEY,LLM_API_KEY"},
	} {
		if ck.got != ck.want {
			t.Errorf("default %s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestLoadValues(t *testing.T) {
	c, err := config.Load(env(map[string]string{
		"APP_ENV": "production", "JWT_SECRET": strings.Repeat("k", 32), "ROOT_PATH": "/patents/",
		"TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7", "LOG_LEVEL": "warning", "SCHEDULE_INTERVAL_HOURS": "0.01",
		"CHANGE_THRESHOLD_PERCENT": "12.5", "USE_CACHE": "false", "DATABASE_URL": "postgres://u:pw@db:5432/p",
		"MODEL": "mistralai/mistral-nemo", "STORAGE_BACKEND": "s3", "S3_BUCKET": "pdfs",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RootPath != "/patents" || c.LogLevel != slog.LevelWarn || c.ScheduleInterval != 36*time.Second ||
		c.ChangeThresholdPercent != 12.5 || c.UseCache || c.DatabaseDSN() != "postgres://u:pw@db:5432/p" ||
		c.Model != "mistralai/mistral-nemo" || len(c.TrustedProxies) != 2 ||
		c.TrustedProxies[1] != netip.MustParsePrefix("192.168.1.7/32") {
		t.Errorf("Load = %+v", c)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	if strings.Contains(b.String(), "pw@") || strings.Contains(b.String(), "kkkk") {
		t.Errorf("logged config leaks a secret: %s", b.String())
	}
}

func TestLoadErrors(t *testing.T) {
	long := strings.Repeat("s", 32)
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"default secret in production", map[string]string{"APP_ENV": "production"}, []string{"JWT_SECRET", "default"}},
		{"short secret in production", map[string]string{"APP_ENV": "staging", "JWT_SECRET": "short"}, []string{"JWT_SECRET", "too short"}},
		{"bad model", map[string]string{"MODEL": "openai/gpt-5"}, []string{"MODEL", "openai/gpt-4o-mini"}},
		{"bad level", map[string]string{"LOG_LEVEL": "LOUD"}, []string{"LOG_LEVEL"}},
		{"bad root path", map[string]string{"ROOT_PATH": "patents"}, []string{"ROOT_PATH"}},
		{"bad proxy", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, []string{"TRUSTED_PROXIES"}},
		{"bad bool", map[string]string{"USE_CACHE": "sometimes"}, []string{"USE_CACHE"}},
		{"bad hours", map[string]string{"SCHEDULE_INTERVAL_HOURS": "-1"}, []string{"SCHEDULE_INTERVAL_HOURS"}},
		{"bad percent", map[string]string{"CHANGE_THRESHOLD_PERCENT": "lots"}, []string{"CHANGE_THRESHOLD_PERCENT"}},
		{"bad backend", map[string]string{"STORAGE_BACKEND": "ftp"}, []string{"STORAGE_BACKEND"}},
		{"s3 without bucket", map[string]string{"STORAGE_BACKEND": "s3"}, []string{"S3_BUCKET"}},
		{"bad cost", map[string]string{"BCRYPT_COST": "3"}, []string{"BCRYPT_COST"}},
		{"bad url", map[string]string{"LLM_BASE_URL": "openrouter.ai"}, []string{"LLM_BASE_URL"}},
		{"empty cors list", map[string]string{"CORS_ORIGINS": " , "}, []string{"CORS_ORIGINS", "at least one origin"}},
		{"cors with a path", map[string]string{"CORS_ORIGINS": "https://app.example.com/x"}, []string{"CORS_ORIGINS", "not an origin"}},
		{"bad webhook", map[string]string{"WEBHOOK_URLS": "https://ok.example/x, ftp://bad"}, []string{"WEBHOOK_URLS", "entry 2"}},
		{"several", map[string]string{"PORT": "x", "DB_MAX_OPEN_CONNS": "0", "JWT_SECRET": long}, []string{"PORT", "DB_MAX_OPEN_CONNS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(env(tt.env))
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	_, err := config.Load(env(map[string]string{"WEBHOOK_URLS": "https://hooks.slack.com/services/T0/B0/SECRETTOKEN, bad", "JWT_SECRET": "x", "PORT": "x"}))
	if err == nil || strings.Contains(err.Error(), "SECRETTOKEN") {
		t.Errorf("error %v must not reveal webhook URLs", err)
	}
}

func TestDocUpToDate(t *testing.T) {
	const path = "../../../docs/config/patentsvc.md"
	want := config.Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s is out of date (%v); run go test ./internal/config -update", path, err)
	}
}

func TestJWTSecretPrevious(t *testing.T) {
	long := strings.Repeat("k", 32)
	if _, err := config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": long, "JWT_SECRET_PREVIOUS": "short"})); err == nil || !strings.Contains(err.Error(), "JWT_SECRET_PREVIOUS") {
		t.Errorf("short previous secret in production: %v", err)
	}
	c, err := config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": long, "JWT_SECRET_PREVIOUS": strings.Repeat("p", 40)}))
	if err != nil || c.JWTSecretPrev.Reveal() != strings.Repeat("p", 40) {
		t.Errorf("Load = %v", err)
	}
}
