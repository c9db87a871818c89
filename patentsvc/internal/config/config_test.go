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
		{"DocsEnabled", c.DocsEnabled, true},
		{"Database", c.Database.Dialect + " " + c.Database.DSN.Reveal(), "sqlite data/patentsvc.db"},
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
		{"PDFOCR", c.PDFOCR, "auto"},
		{"SchedulerEnabled", c.SchedulerEnabled, true},
		{"ScheduleInterval", c.ScheduleInterval, 24 * time.Hour},
		{"ScheduleRetryBase", c.ScheduleRetryBase, time.Minute},
		{"ChangeThresholdPercent", c.ChangeThresholdPercent, 20.0},
		{"TrackingHistory", c.TrackingHistory, 3650 * 24 * time.Hour},
		{"ShutdownTimeout", c.ShutdownTimeout, 15 * time.Second},
		// decisions.md, "patentsvc: work every replica shares, bounded and fair".
		{"ScheduleMaxConcurrent", c.ScheduleMaxConcurrent, 4},
		{"ScheduleRunTimeout", c.ScheduleRunTimeout, 15 * time.Minute},
		{"JobsMaxConcurrent", c.JobsMaxConcurrent, 2},
		{"JobsMaxPerUser", c.JobsMaxPerUser, 10},
		{"JobsTimeout", c.JobsTimeout, 30 * time.Minute},
		{"JobsMaxAttempts", c.JobsMaxAttempts, 3},
		{"PDFExtractTimeout", c.PDFExtractTimeout, 30 * time.Second},
		{"PDFMaxPages", c.PDFMaxPages, 500},
		{"PDFMaxDecodedBytes", c.PDFMaxDecodedBytes, int64(200 << 20)},
		{"PDFMaxBytes", c.PDFMaxBytes, int64(30 << 20)},
		// decisions.md, "Both services: hostile input answered, never a 5xx".
		{"LLMMaxAnswerBytes", c.LLMMaxAnswerBytes, 256 << 10},
		// decisions.md, "patentsvc: what changed, and what the portfolio covers".
		{"NewPatentAlerts", c.NewPatentAlerts, true},
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
		"MODEL": "mistralai/mistral-nemo", "STORAGE_BACKEND": "s3", "S3_BUCKET": "pdfs", "PDF_OCR": "off",
		"LLM_MAX_ANSWER_KB": "4096", "DOCS_ENABLED": "false", "NEW_PATENT_ALERTS": "false",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RootPath != "/patents" || c.LogLevel != slog.LevelWarn || c.ScheduleInterval != 36*time.Second ||
		c.ChangeThresholdPercent != 12.5 || c.UseCache || c.Database.DSN.Reveal() != "postgres://u:pw@db:5432/p" || c.Database.Dialect != config.Postgres ||
		c.Model != "mistralai/mistral-nemo" || len(c.TrustedProxies) != 2 || c.PDFOCR != "off" ||
		c.TrustedProxies[1] != netip.MustParsePrefix("192.168.1.7/32") || c.LLMMaxAnswerBytes != 4<<20 || c.DocsEnabled || c.NewPatentAlerts {
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
		{"docs neither true nor false", map[string]string{"DOCS_ENABLED": "maybe"}, []string{`DOCS_ENABLED: invalid value "maybe"`}},
		{"bad root path", map[string]string{"ROOT_PATH": "patents"}, []string{"ROOT_PATH"}},
		{"bad proxy", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, []string{"TRUSTED_PROXIES"}},
		{"bad bool", map[string]string{"USE_CACHE": "sometimes"}, []string{"USE_CACHE"}},
		{"bad hours", map[string]string{"SCHEDULE_INTERVAL_HOURS": "-1"}, []string{"SCHEDULE_INTERVAL_HOURS"}},
		{"bad retry base", map[string]string{"SCHEDULE_RETRY_BASE": "0s"}, []string{"SCHEDULE_RETRY_BASE"}},
		{"history too long", map[string]string{"TRACKING_HISTORY_DAYS": "3651"}, []string{"TRACKING_HISTORY_DAYS", "between 1 and 3650"}},
		{"history not days", map[string]string{"TRACKING_HISTORY_DAYS": "2y"}, []string{"TRACKING_HISTORY_DAYS", "whole number"}},
		{"bad percent", map[string]string{"CHANGE_THRESHOLD_PERCENT": "lots"}, []string{"CHANGE_THRESHOLD_PERCENT"}},
		{"new patent alerts neither true nor false", map[string]string{"NEW_PATENT_ALERTS": "yes please"}, []string{"NEW_PATENT_ALERTS"}},
		{"bad backend", map[string]string{"STORAGE_BACKEND": "ftp"}, []string{"STORAGE_BACKEND"}},
		{"bad pdf ocr", map[string]string{"PDF_OCR": "on"}, []string{"PDF_OCR", "auto, off"}},
		{"s3 without bucket", map[string]string{"STORAGE_BACKEND": "s3"}, []string{"S3_BUCKET"}},
		{"pdf bold font alone", map[string]string{"PDF_FONT_BOLD_PATH": "/fonts/bold.ttf"}, []string{"PDF_FONT_BOLD_PATH", "requires PDF_FONT_PATH"}},
		{"bad cost", map[string]string{"BCRYPT_COST": "3"}, []string{"BCRYPT_COST"}},
		{"bad url", map[string]string{"LLM_BASE_URL": "openrouter.ai"}, []string{"LLM_BASE_URL"}},
		{"empty cors list", map[string]string{"CORS_ORIGINS": " , "}, []string{"CORS_ORIGINS", "at least one origin"}},
		{"cors with a path", map[string]string{"CORS_ORIGINS": "https://app.example.com/x"}, []string{"CORS_ORIGINS", "not an origin"}},
		{"bad webhook", map[string]string{"WEBHOOK_URLS": "https://ok.example/x, ftp://bad"}, []string{"WEBHOOK_URLS", "entry 2"}},
		{"jobs per user zero", map[string]string{"JOBS_MAX_PER_USER": "0"}, []string{"JOBS_MAX_PER_USER"}},
		{"extract timeout not a duration", map[string]string{"PDF_EXTRACT_TIMEOUT": "30"}, []string{"PDF_EXTRACT_TIMEOUT"}},
		{"extract timeout too long", map[string]string{"PDF_EXTRACT_TIMEOUT": "48h"}, []string{"PDF_EXTRACT_TIMEOUT"}},
		{"decoded budget zero", map[string]string{"PDF_MAX_DECODED_MB": "0"}, []string{"PDF_MAX_DECODED_MB"}},
		{"pages not a number", map[string]string{"PDF_MAX_PAGES": "many"}, []string{"PDF_MAX_PAGES"}},
		{"answer cap zero", map[string]string{"LLM_MAX_ANSWER_KB": "0"}, []string{"LLM_MAX_ANSWER_KB", "between 1 and 4096"}},
		{"answer cap past the body limit", map[string]string{"LLM_MAX_ANSWER_KB": "4097"}, []string{"LLM_MAX_ANSWER_KB", "between 1 and 4096"}},
		{"answer cap not kilobytes", map[string]string{"LLM_MAX_ANSWER_KB": "1MB"}, []string{"LLM_MAX_ANSWER_KB", "whole number"}},
		{"schedule slots zero", map[string]string{"SCHEDULE_MAX_CONCURRENT": "0"}, []string{"SCHEDULE_MAX_CONCURRENT"}},
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
	const db = "postgres://db/p"
	if _, err := config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": long, "JWT_SECRET_PREVIOUS": "short", "DATABASE_URL": db})); err == nil || !strings.Contains(err.Error(), "JWT_SECRET_PREVIOUS") {
		t.Errorf("short previous secret in production: %v", err)
	}
	c, err := config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": long, "JWT_SECRET_PREVIOUS": strings.Repeat("p", 40), "DATABASE_URL": db}))
	if err != nil || c.JWTSecretPrev.Reveal() != strings.Repeat("p", 40) {
		t.Errorf("Load = %v", err)
	}
}

// TestParseDatabase: DATABASE_URL is never misread. Schemes in any letter
// case and libpq key=value DSNs are PostgreSQL; SQLite is sqlite:/file:, or
// in development a bare path or nothing; outside development an empty,
// bare-path or unrecognised value is refused, and no error quotes it.
func TestParseDatabase(t *testing.T) {
	for _, tt := range []struct {
		in          string
		dev         bool
		dialect     string
		dsn         string
		errContains string
	}{
		{"postgres://u:pw@db/p", false, config.Postgres, "postgres://u:pw@db/p", ""},
		{"POSTGRES://u:pw@db/p", false, config.Postgres, "postgres://u:pw@db/p", ""},
		{"PostgreSQL://u:pw@db:5433/p?sslmode=require", false, config.Postgres, "postgresql://u:pw@db:5433/p?sslmode=require", ""},
		{"host=db user=app password=pw dbname=patents sslmode=require", false, config.Postgres, "host=db user=app password=pw dbname=patents sslmode=require", ""},
		{"dbname=patents", false, config.Postgres, "dbname=patents", ""},
		{"HOST=db", false, config.Postgres, "HOST=db", ""},
		{"sqlite:/var/lib/patentsvc/p.db", false, config.SQLite, "/var/lib/patentsvc/p.db", ""},
		{"SQLite:data/p.db", false, config.SQLite, "data/p.db", ""},
		{"file:data/p.db", true, config.SQLite, "data/p.db", ""},
		{"data/p.db", true, config.SQLite, "data/p.db", ""},
		{"", true, config.SQLite, config.DefaultSQLitePath, ""},
		{"", false, "", "", "required outside APP_ENV=development"},
		{"data/p.db", false, "", "", "only with APP_ENV=development"},
		{"mysql://u:pw@db/p", true, "", "", "not recognised"},
		{"postgress://u:pw@db/p", false, "", "", "not recognised"},
		{"hots=db password=pw", true, "", "", "not recognised"},
		{"sqlite:", true, "", "", "names no file"},
	} {
		got, err := config.ParseDatabase(tt.in, tt.dev)
		if tt.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errContains) || strings.Contains(err.Error(), "pw") {
				t.Errorf("ParseDatabase(%q, dev %v) error = %v, want one saying %q without the value", tt.in, tt.dev, err, tt.errContains)
			}
			continue
		}
		if err != nil || got.Dialect != tt.dialect || got.DSN.Reveal() != tt.dsn {
			t.Errorf("ParseDatabase(%q, dev %v) = %s %q, %v; want %s %q", tt.in, tt.dev, got.Dialect, got.DSN.Reveal(), err, tt.dialect, tt.dsn)
		}
	}
}

// TestDatabaseNeverLogsPassword: whatever the form, the logged description
// names the database without its password.
func TestDatabaseNeverLogsPassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cr3t@db:5432/patents?sslmode=require": "postgres://app@db:5432/patents?sslmode=require",
		"host=db user=app password=s3cr3t dbname=patents":       "postgres (host=db user=app dbname=patents)",
		"host=db password='s3 cr3t' dbname=patents":             "postgres (host=db dbname=patents)",
		"postgres://db/p?password=s3cr3t":                       "postgres://db/p?password=redacted",
		"sqlite:/data/p.db":                                     "sqlite:/data/p.db",
	} {
		d, err := config.ParseDatabase(in, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.String(); got != want || strings.Contains(got, "s3") {
			t.Errorf("Database(%q).String() = %q, want %q", in, got, want)
		}
	}
	// Through Load and the logged config too.
	c, err := config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": strings.Repeat("k", 32),
		"DATABASE_URL": "POSTGRES://app:s3cr3t@db/p"}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "config", c)
	if strings.Contains(b.String(), "s3cr3t") || !strings.Contains(b.String(), "postgres://app@db/p") {
		t.Errorf("logged config = %s", b.String())
	}
	_, err = config.Load(env(map[string]string{"APP_ENV": "production", "JWT_SECRET": strings.Repeat("k", 32),
		"DATABASE_URL": "mysql://app:s3cr3t@db/p"}))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("Load error = %v, want DATABASE_URL named and the password absent", err)
	}
}
