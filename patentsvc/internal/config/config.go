// Package config reads the patent service's settings from the environment.
//
// Every setting, its default and its meaning live in one table (settings),
// which Load walks and which also generates docs/config/patentsvc.md.
// Nothing but this package reads the environment.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Development is the APP_ENV value that relaxes the secret rules.
const Development = "development"

// DefaultJWTSecret is the built-in JWT_SECRET, refused outside development.
const DefaultJWTSecret = "change-me-in-production"

// MinJWTSecret is the shortest JWT_SECRET accepted outside development.
const MinJWTSecret = 32

// DefaultSQLitePath is where the embedded database lives when DATABASE_URL
// is empty.
const DefaultSQLitePath = "data/patentsvc.db"

// Config is the service's typed configuration.
type Config struct {
	AppEnv          string
	Demo            bool // DEMO: a make demo run; logs and health say demo: true
	Port            int
	LogLevel        slog.Level
	RootPath        string
	CORSOrigins     []string
	TrustedProxies  []netip.Prefix
	ShutdownTimeout time.Duration
	// DocsEnabled serves the API reference, GET ROOT_PATH/docs and GET
	// ROOT_PATH/openapi.yaml.
	DocsEnabled bool

	DatabaseURL Secret // may hold a password
	// Database is DATABASE_URL read: the dialect and the DSN to open.
	Database        Database
	DBMaxOpenConns  int
	DBMaxIdleConns  int
	DBConnMaxLife   time.Duration
	JWTSecret       Secret
	JWTSecretPrev   Secret
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	BcryptCost      int

	Model                string
	SerpAPIKey           Secret
	SerpAPIBaseURL       string
	LLMAPIKey            Secret
	LLMBaseURL           string
	UseCache             bool
	SerpCacheTTL         time.Duration
	PatentLookbackDays   int
	MaxPatentsPerCompany int
	StorageBackend       string
	StorageDir           string
	S3Bucket             string
	S3EndpointURL        string
	PDFAllowedHosts      []string
	PDFMaxBytes          int64
	PDFWorkers           int
	PDFOCR               string // PDF_OCR: "auto" (OCR image-only PDFs when tesseract is installed) or "off"
	UpstreamTimeout      time.Duration
	UpstreamRetries      int
	LLMTimeout           time.Duration
	LLMMaxTokens         int
	LLMMaxAnswerBytes    int // LLM_MAX_ANSWER_KB: the longest model answer stored, in bytes
	PromptMaxChars       int
	JobsMaxConcurrent    int
	JobsMaxPerUser       int           // JOBS_MAX_PER_USER: a user's unfinished jobs
	JobsTimeout          time.Duration // JOBS_TIMEOUT: the longest a job runs
	JobsMaxAttempts      int           // JOBS_MAX_ATTEMPTS: runs of a job whose end could not be recorded before it fails
	PDFExtractTimeout    time.Duration // PDF_EXTRACT_TIMEOUT: the longest one document is read (OCR included)
	PDFMaxPages          int           // PDF_MAX_PAGES: pages of a document read at most
	PDFMaxDecodedBytes   int64         // PDF_MAX_DECODED_MB: memory the PDF engine may use for one document
	PDFFontPath          string        // PDF_FONT_PATH: the PDF report's fallback font (CJK); empty for none
	PDFFontBoldPath      string        // PDF_FONT_BOLD_PATH: its bold; empty uses PDFFontPath

	SchedulerEnabled       bool
	ScheduleMaxConcurrent  int           // SCHEDULE_MAX_CONCURRENT: scheduled runs at once per replica
	ScheduleRunTimeout     time.Duration // SCHEDULE_RUN_TIMEOUT: the longest one scheduled run takes
	ScheduleInterval       time.Duration
	ScheduleRetryBase      time.Duration
	ChangeThresholdPercent float64
	NewPatentAlerts        bool          // NEW_PATENT_ALERTS: raises new_patents alerts
	TrackingHistory        time.Duration // TRACKING_HISTORY_DAYS: how long tracking_runs rows are kept
	WebhookURLs            []string
	WebhookSecret          Secret
	WebhookRetrySchedule   []time.Duration
	WebhookTimeout         time.Duration
}

// Secret is a value that never prints.
type Secret string

// String implements fmt.Stringer without revealing the value.
func (Secret) String() string { return "[redacted]" }

// LogValue implements slog.LogValuer without revealing the value.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

type setting struct {
	name   string
	def    string
	doc    string
	secret bool // never printed; deployments take it from a secret store
	set    func(c *Config, v string) error
}

var settings = []setting{
	{"APP_ENV", Development, "`development` relaxes the secret rules; any other value is production-like.", false,
		func(c *Config, v string) error { c.AppEnv = v; return nil }},
	{"DEMO", "false", "`true` marks a `make demo` run against the project's recorded stand-ins for the upstreams: every log line and the health answer carry `demo: true`. Accepted only with `APP_ENV=development`. It starts nothing itself: the stand-ins run in `make demo`'s own process (devstack), which no setting of the service can start.", false,
		func(c *Config, v string) error { return boolean(&c.Demo, v) }},
	{"PORT", "8081", "TCP port the HTTP server listens on; `0` takes a free port the kernel picks, which the start-up line `http server listening` names (tests that start the service as a process use it: no port can be lost between choosing and binding it).", false,
		func(c *Config, v string) error { return intIn(&c.Port, v, 0, 65535) }},
	{"LOG_LEVEL", "INFO", "`DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL` (case-insensitive).", false,
		func(c *Config, v string) error { return logLevel(&c.LogLevel, v) }},
	{"ROOT_PATH", "", "Path prefix of every route, e.g. `/patents` behind a gateway that does not strip it.", false,
		func(c *Config, v string) error { return rootPath(&c.RootPath, v) }},
	{"CORS_ORIGINS", "http://localhost:3000,http://localhost:5173", "Comma-separated origins allowed by CORS.", false,
		func(c *Config, v string) error { return origins(&c.CORSOrigins, v) }},
	{"TRUSTED_PROXIES", "", "Comma-separated CIDRs (or addresses) whose `X-Forwarded-For` is believed; the client is then the right-most address not inside them. Empty: the socket peer is the client.", false,
		func(c *Config, v string) error { return prefixes(&c.TrustedProxies, v) }},
	{"SHUTDOWN_TIMEOUT", "15s", "One deadline after SIGTERM for draining requests, running jobs, the scheduler and webhook deliveries; the database closes after it.", false,
		func(c *Config, v string) error { return positiveDuration(&c.ShutdownTimeout, v) }},
	{"DOCS_ENABLED", "true", "`true` serves the API reference under `ROOT_PATH`: `GET ROOT_PATH/docs`, an interactive page (Swagger UI, every asset embedded, nothing loaded from another origin) whose \"try it\" calls this service, under its `ROOT_PATH`, with the bearer token typed into its Authorize dialog, and `GET ROOT_PATH/openapi.yaml`, the OpenAPI document. Neither needs a token. `false`: both answer 404. The gateway examples in deploy/ route them to subscribers (docs/patentsvc.md, \"The API reference\").", false,
		func(c *Config, v string) error { return boolean(&c.DocsEnabled, v) }},

	{"DATABASE_URL", "", "PostgreSQL as a `postgres://` or `postgresql://` URL (scheme in any letter case) or a libpq key=value DSN (`host=db user=app dbname=patents ...`); SQLite as `sqlite:<path>` or `file:<path>`. Empty, or a bare file path, is the embedded SQLite file (`" + DefaultSQLitePath + "` when empty) and is accepted only with `APP_ENV=development`; outside it an empty or unrecognised value stops start-up.", true,
		func(c *Config, v string) (err error) {
			c.DatabaseURL = Secret(v)
			c.Database, err = ParseDatabase(v, c.AppEnv == Development)
			return err
		}},
	{"DB_MAX_OPEN_CONNS", "10", "Most open database connections.", false,
		func(c *Config, v string) error { return intIn(&c.DBMaxOpenConns, v, 1, 1000) }},
	{"DB_MAX_IDLE_CONNS", "5", "Most idle database connections kept.", false,
		func(c *Config, v string) error { return intIn(&c.DBMaxIdleConns, v, 0, 1000) }},
	{"DB_CONN_MAX_LIFETIME", "30m", "Longest a database connection is reused.", false,
		func(c *Config, v string) error { return positiveDuration(&c.DBConnMaxLife, v) }},
	{"JWT_SECRET", DefaultJWTSecret, "HS256 signing secret. Outside `APP_ENV=development` the built-in default or a secret shorter than 32 bytes stops start-up.", true,
		func(c *Config, v string) error { c.JWTSecret = Secret(v); return nil }},
	{"JWT_SECRET_PREVIOUS", "", "A second secret whose tokens are still accepted (never used to sign), for rotating `JWT_SECRET` without logging everyone out (docs/operations.md); empty when not rotating. Same length rule as `JWT_SECRET` outside development.", true,
		func(c *Config, v string) error { c.JWTSecretPrev = Secret(v); return nil }},
	{"ACCESS_TOKEN_TTL", "30m", "Lifetime of access tokens.", false,
		func(c *Config, v string) error { return positiveDuration(&c.AccessTokenTTL, v) }},
	{"REFRESH_TOKEN_TTL", "168h", "Lifetime of refresh tokens.", false,
		func(c *Config, v string) error { return positiveDuration(&c.RefreshTokenTTL, v) }},
	{"BCRYPT_COST", "12", "bcrypt cost of stored password hashes (4 to 31).", false,
		func(c *Config, v string) error { return intIn(&c.BcryptCost, v, bcrypt.MinCost, bcrypt.MaxCost) }},

	{"MODEL", patent.DefaultModel, "Default model, one of `GET /models`.", false,
		func(c *Config, v string) error { return model(&c.Model, v) }},
	{"SERPAPI_API_KEY", "", "Patent search key; without it the analysis endpoints answer 503.", true,
		func(c *Config, v string) error { c.SerpAPIKey = Secret(v); return nil }},
	{"SERPAPI_BASE_URL", "https://serpapi.com", "Patent search API base URL (tests point it at a local fake).", false,
		func(c *Config, v string) error { return httpURL(&c.SerpAPIBaseURL, v) }},
	{"LLM_API_KEY", "", "LLM gateway key; without it the analysis endpoints answer 503.", true,
		func(c *Config, v string) error { c.LLMAPIKey = Secret(v); return nil }},
	{"LLM_BASE_URL", "https://openrouter.ai/api/v1", "OpenAI-compatible chat completions base URL (tests point it at a local fake).", false,
		func(c *Config, v string) error { return httpURL(&c.LLMBaseURL, v) }},
	{"USE_CACHE", "true", "`true`: use cached search results and LLM answers before calling out; `false`: always call out (and still store).", false,
		func(c *Config, v string) error { return boolean(&c.UseCache, v) }},
	{"SERP_CACHE_TTL_HOURS", "24", "Lifetime of cached search results, in hours (decimals allowed).", false,
		func(c *Config, v string) error { return hours(&c.SerpCacheTTL, v) }},
	{"PATENT_LOOKBACK_DAYS", "365", "How far back \"recent patents\" reach.", false,
		func(c *Config, v string) error { return intIn(&c.PatentLookbackDays, v, 1, 36500) }},
	{"MAX_PATENTS_PER_COMPANY", "10", "Patents analysed per company.", false,
		func(c *Config, v string) error { return intIn(&c.MaxPatentsPerCompany, v, 1, 100) }},
	{"STORAGE_BACKEND", "local", "`local` or `s3`: where downloaded PDFs are kept.", false,
		func(c *Config, v string) error { return oneOf(&c.StorageBackend, v, "local", "s3") }},
	{"STORAGE_DIR", "data/patents", "Directory of the `local` storage backend.", false,
		func(c *Config, v string) error { c.StorageDir = v; return nil }},
	{"S3_BUCKET", "", "Bucket of the `s3` storage backend (required with it).", false,
		func(c *Config, v string) error { c.S3Bucket = v; return nil }},
	{"S3_ENDPOINT_URL", "", "Endpoint of an S3-compatible store (empty: AWS).", false,
		func(c *Config, v string) error { return optionalURL(&c.S3EndpointURL, v) }},
	{"PDF_ALLOWED_HOSTS", "patentimages.storage.googleapis.com", "Comma-separated hosts PDF links may point at (port ignored); `*` allows any.", false,
		func(c *Config, v string) error { c.PDFAllowedHosts = list(v); return nil }},

	{"PDF_MAX_MB", "30", "Largest PDF downloaded, in MiB.", false,
		func(c *Config, v string) error { return mebibytes(&c.PDFMaxBytes, v, 1, 1024) }},
	{"PDF_WORKERS", "4", "PDFs of one company fetched and read at once.", false,
		func(c *Config, v string) error { return intIn(&c.PDFWorkers, v, 1, 32) }},
	{"PDF_OCR", "auto", "`auto`: a PDF without a text layer (a scan) is read by OCR when the `tesseract` program and its English data are installed (the `patentsvc-ocr` image has them; the default image does not), at most 60 s a page and 50 pages a document; `off`: never. Without OCR such a PDF is reported as a scanned document, with the reason (`PDF_OCR is off`, `OCR unavailable: no tesseract on PATH`).", false,
		func(c *Config, v string) error { return oneOf(&c.PDFOCR, v, "auto", "off") }},
	{"UPSTREAM_TIMEOUT", "30s", "Timeout of one attempt at the patent search or a PDF download.", false,
		func(c *Config, v string) error { return positiveDuration(&c.UpstreamTimeout, v) }},
	{"UPSTREAM_RETRIES", "2", "Retries after the first attempt of a search, LLM call or download (0 to 10), for network errors, timeouts, throttling and 5xx.", false,
		func(c *Config, v string) error { return intIn(&c.UpstreamRetries, v, 0, 10) }},
	{"LLM_TIMEOUT", "120s", "Timeout of one attempt at the LLM gateway (answers take long).", false,
		func(c *Config, v string) error { return positiveDuration(&c.LLMTimeout, v) }},
	{"LLM_MAX_TOKENS", "1500", "Longest answer asked of the model, in tokens.", false,
		func(c *Config, v string) error { return intIn(&c.LLMMaxTokens, v, 64, 32000) }},
	{"LLM_MAX_ANSWER_KB", "256", "Longest model answer stored (in the analysis and the LLM cache), in KiB (1024 bytes), 1 to 4096; a longer answer is cut at a character boundary and ends with `[answer truncated]`, the whole within the cap. Apart from it, an answer whose body is over 4 MiB is refused (the analysis fails). Every answer, search result and PDF text is stored without NUL characters and as valid UTF-8 (each invalid byte becomes U+FFFD).", false,
		func(c *Config, v string) error { return kibibytes(&c.LLMMaxAnswerBytes, v, 1, 4096) }},
	{"PROMPT_MAX_CHARS", "24000", "Patent text budget of one prompt, in bytes, shared by its patents: abstract, independent claims and summary first, the description only with what is left.", false,
		func(c *Config, v string) error { return intIn(&c.PromptMaxChars, v, 1000, 400000) }},
	{"JOBS_MAX_CONCURRENT", "2", "Asynchronous batch jobs run at once by one replica; the others wait, pending, for any replica's free slot (every replica runs jobs, whichever accepted them).", false,
		func(c *Config, v string) error { return intIn(&c.JobsMaxConcurrent, v, 1, 16) }},
	{"JOBS_MAX_PER_USER", "10", "A user's unfinished (`pending` or `running`) asynchronous jobs; one more `POST /analyze/batch/async` answers 429 with `Retry-After`. Among pending jobs the next to start is the oldest job of the user with the fewest running.", false,
		func(c *Config, v string) error { return intIn(&c.JobsMaxPerUser, v, 1, 1000) }},
	{"JOBS_TIMEOUT", "30m", "Longest an asynchronous job runs; then it ends `failed`, with the companies finished so far and the others reported as not analysed. It bounds work that is alive but slow: a job whose replica dies fails within seconds, whatever this is (docs/operations.md, \"What a crash costs\").", false,
		func(c *Config, v string) error { return durationIn(&c.JobsTimeout, v, time.Second, 24*time.Hour) }},
	{"JOBS_MAX_ATTEMPTS", "3", "Runs of an asynchronous job's unit whose end could not be recorded (a database error), or that ran past `JOBS_TIMEOUT` and a margin while its replica stayed alive: the unit runs again, up to this many runs in all, then the job fails. A job whose replica dies is not run again: it fails.", false,
		func(c *Config, v string) error { return intIn(&c.JobsMaxAttempts, v, 1, 10) }},
	{"PDF_EXTRACT_TIMEOUT", "30s", "Longest one patent PDF is read (OCR included); a document past it is reported in the patent's entry (`read: false`) and not read again.", false,
		func(c *Config, v string) error {
			return durationIn(&c.PDFExtractTimeout, v, 100*time.Millisecond, 10*time.Minute)
		}},
	{"PDF_MAX_PAGES", "500", "Most pages of a patent PDF; a document with more is not read (`read: false`, and not read again).", false,
		func(c *Config, v string) error { return intIn(&c.PDFMaxPages, v, 1, 10000) }},
	{"PDF_MAX_DECODED_MB", "200", "Most memory, in MiB, that the PDF engine may use for one patent PDF, beyond its programs' own 64 MiB: the address-space ceiling of each poppler program that reads it (what its streams decompress to is held there); a document past it is not read (`read: false`, and not read again).", false,
		func(c *Config, v string) error { return mebibytes(&c.PDFMaxDecodedBytes, v, 1, 4096) }},
	{"PDF_FONT_PATH", "", "TrueType font file (`.ttf`: a single font with TrueType outlines, not a `.ttc` collection nor a CFF `.otf`) in which the PDF report draws the characters its built-in Go fonts lack, such as Chinese, Japanese and Korean. Empty: none, and those characters show as U+FFFD. The container image sets it to Droid Sans Fallback (Debian's `fonts-droid-fallback`, Apache 2.0). A file that cannot be read or is not such a font stops start-up.", false,
		func(c *Config, v string) error { c.PDFFontPath = v; return nil }},
	{"PDF_FONT_BOLD_PATH", "", "Bold of `PDF_FONT_PATH`, for bold text (same format); empty: `PDF_FONT_PATH` draws bold text too. Requires `PDF_FONT_PATH`.", false,
		func(c *Config, v string) error { c.PDFFontBoldPath = v; return nil }},

	{"SCHEDULER_ENABLED", "true", "Runs the periodic re-analysis of tracked companies on this replica: it queues the due companies' runs and runs them (with `false`, the other replicas do).", false,
		func(c *Config, v string) error { return boolean(&c.SchedulerEnabled, v) }},
	{"SCHEDULE_MAX_CONCURRENT", "4", "Scheduled re-analyses run at once by one replica; every replica runs them, so the cluster runs replicas times this many (docs/operations.md, \"Sizing the work queue\").", false,
		func(c *Config, v string) error { return intIn(&c.ScheduleMaxConcurrent, v, 1, 64) }},
	{"SCHEDULE_RUN_TIMEOUT", "15m", "Longest one scheduled re-analysis runs; then it counts as a failed run (retried with `SCHEDULE_RETRY_BASE`'s back-off). It bounds work that is alive but slow: a run whose replica dies is run again by another within seconds, whatever this is.", false,
		func(c *Config, v string) error { return durationIn(&c.ScheduleRunTimeout, v, time.Second, 6*time.Hour) }},
	{"SCHEDULE_INTERVAL_HOURS", "24", "Hours between re-analyses of a tracked company (decimals allowed: 0.01 is 36 s).", false,
		func(c *Config, v string) error { return hours(&c.ScheduleInterval, v) }},
	{"SCHEDULE_RETRY_BASE", "1m", "Wait before retrying a tracked company's failed scheduled run (its first included); doubled for each further failure in a row, never more than `SCHEDULE_INTERVAL_HOURS` (1m, 2m, 4m, ... 24h). A successful run resets it.", false,
		func(c *Config, v string) error { return positiveDuration(&c.ScheduleRetryBase, v) }},
	{"CHANGE_THRESHOLD_PERCENT", "20", "Smallest patent-count change, in percent, that raises an alert (decimals allowed).", false,
		func(c *Config, v string) error { return percent(&c.ChangeThresholdPercent, v) }},
	{"NEW_PATENT_ALERTS", "true", "`true` raises a `new_patents` alert (and its `alert.new_patents` webhooks) when a tracked company's scheduled run finds patents none of its earlier runs saw (its first run is the baseline). `false` raises none; the runs still record their new and dropped patents (the history's points, `GET /admin/changes`).", false,
		func(c *Config, v string) error { return boolean(&c.NewPatentAlerts, v) }},
	{"TRACKING_HISTORY_DAYS", "3650", "Days a tracked company's scheduled runs are kept (`tracking_runs`: the history of `GET /admin/tracked/{company_name}/history` and of the PDF report's chart), 1 to 3650; older ones are pruned hourly.", false,
		func(c *Config, v string) error { return days(&c.TrackingHistory, v, 1, 3650) }},
	{"WEBHOOK_URLS", "", "Comma-separated webhook targets (Slack incoming webhooks get Slack messages). Treated as secret: webhook URLs often carry their token.", true,
		func(c *Config, v string) error { return urls(&c.WebhookURLs, v) }},
	{"WEBHOOK_SECRET", "", "When set, generic webhooks carry Standard Webhooks signatures.", true,
		func(c *Config, v string) error { c.WebhookSecret = Secret(v); return nil }},
	{"WEBHOOK_RETRY_SCHEDULE", "5s,5m,30m,2h,5h,10h,10h", "Comma-separated waits between the attempts of one webhook delivery: the first attempt is immediate, each value is the wait before the next one (7 values: 8 attempts, about 28 hours); when the last attempt fails the delivery is `failed`. A `Retry-After` may lengthen a wait (up to an hour). Deliveries are stored in the database and survive restarts.", false,
		func(c *Config, v string) error { return durationList(&c.WebhookRetrySchedule, v) }},
	{"WEBHOOK_TIMEOUT", "15s", "Timeout of one webhook delivery attempt. A delivery whose replica died during an attempt is attempted again by another within seconds, whatever this is.", false,
		func(c *Config, v string) error { return positiveDuration(&c.WebhookTimeout, v) }},
}

// Load reads the configuration through getenv. It reports every bad value
// at once, each naming its variable.
func Load(getenv func(string) string) (Config, error) {
	var c Config
	var errs []error
	for _, s := range settings {
		v := strings.TrimSpace(getenv(s.name))
		if v == "" {
			v = s.def
		}
		if err := s.set(&c, v); err != nil {
			shown := strconv.Quote(v)
			if s.secret {
				shown = "[redacted]"
			}
			errs = append(errs, fmt.Errorf("%s: invalid value %s: %w", s.name, shown, err))
		}
	}
	if c.AppEnv != Development {
		switch secret := c.JWTSecret.Reveal(); {
		case secret == DefaultJWTSecret:
			errs = append(errs, fmt.Errorf("JWT_SECRET: the built-in default is refused when APP_ENV is %q; set a random secret of at least %d bytes", c.AppEnv, MinJWTSecret))
		case len(secret) < MinJWTSecret:
			errs = append(errs, fmt.Errorf("JWT_SECRET: %d bytes is too short when APP_ENV is %q; use at least %d", len(secret), c.AppEnv, MinJWTSecret))
		}
	}
	if prev := c.JWTSecretPrev.Reveal(); prev != "" && c.AppEnv != Development && len(prev) < MinJWTSecret {
		errs = append(errs, fmt.Errorf("JWT_SECRET_PREVIOUS: %d bytes is too short when APP_ENV is %q; use at least %d", len(prev), c.AppEnv, MinJWTSecret))
	}
	if c.PDFFontBoldPath != "" && c.PDFFontPath == "" {
		errs = append(errs, errors.New("PDF_FONT_BOLD_PATH: requires PDF_FONT_PATH (the regular font)"))
	}
	if c.StorageBackend == "s3" && c.S3Bucket == "" {
		errs = append(errs, errors.New("S3_BUCKET: required when STORAGE_BACKEND is s3"))
	}
	if c.Demo && c.AppEnv != Development {
		errs = append(errs, fmt.Errorf("DEMO: only make demo sets it, with APP_ENV=%q (APP_ENV is %q)", Development, c.AppEnv))
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// PreviousJWTSecret is JWT_SECRET_PREVIOUS as bytes, or nil when it is not
// set (no rotation in progress).
func (c Config) PreviousJWTSecret() []byte {
	if c.JWTSecretPrev == "" {
		return nil
	}
	return []byte(c.JWTSecretPrev.Reveal())
}

// AnalyzerMissing names the settings the analyzer needs and lacks.
func (c Config) AnalyzerMissing() []string {
	var missing []string
	if c.SerpAPIKey == "" {
		missing = append(missing, "SERPAPI_API_KEY")
	}
	if c.LLMAPIKey == "" {
		missing = append(missing, "LLM_API_KEY")
	}
	return missing
}

// LogValue lists the effective settings, secrets redacted.
func (c Config) LogValue() slog.Value {
	db := c.Database.String()
	return slog.GroupValue(
		slog.String("app_env", c.AppEnv),
		slog.Int("port", c.Port),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("root_path", c.RootPath),
		slog.Any("cors_origins", c.CORSOrigins),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.Bool("docs_enabled", c.DocsEnabled),
		slog.String("database", db),
		slog.Any("jwt_secret", c.JWTSecret),
		slog.String("model", c.Model),
		slog.Bool("serpapi_api_key_set", c.SerpAPIKey != ""),
		slog.Bool("llm_api_key_set", c.LLMAPIKey != ""),
		slog.Bool("use_cache", c.UseCache),
		slog.Int("llm_max_answer_bytes", c.LLMMaxAnswerBytes),
		slog.String("storage_backend", c.StorageBackend),
		slog.String("pdf_ocr", c.PDFOCR),
		slog.String("pdf_font_path", c.PDFFontPath),
		slog.Int("jobs_max_concurrent", c.JobsMaxConcurrent),
		slog.Int("jobs_max_per_user", c.JobsMaxPerUser),
		slog.String("jobs_timeout", c.JobsTimeout.String()),
		slog.Int("jobs_max_attempts", c.JobsMaxAttempts),
		slog.String("pdf_extract_timeout", c.PDFExtractTimeout.String()),
		slog.Int("pdf_max_pages", c.PDFMaxPages),
		slog.Int64("pdf_max_decoded_bytes", c.PDFMaxDecodedBytes),
		slog.Bool("scheduler_enabled", c.SchedulerEnabled),
		slog.Int("schedule_max_concurrent", c.ScheduleMaxConcurrent),
		slog.String("schedule_run_timeout", c.ScheduleRunTimeout.String()),
		slog.String("schedule_interval", c.ScheduleInterval.String()),
		slog.String("schedule_retry_base", c.ScheduleRetryBase.String()),
		slog.Bool("new_patent_alerts", c.NewPatentAlerts),
		slog.String("tracking_history", c.TrackingHistory.String()),
		slog.Int("webhook_urls", len(c.WebhookURLs)),
	)
}

// Markdown renders the settings table for docs/config/patentsvc.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# patentsvc configuration\n\n")
	b.WriteString("Generated from `patentsvc/internal/config`; run `go test ./internal/config -update` in `patentsvc/` after changing a setting.\n")
	b.WriteString("Every setting is an environment variable; an empty value means the default. A bad value stops start-up with a message naming the variable.\n\n")
	b.WriteString("A secret setting is never logged; deployments take it from a Secret.\n\n")
	b.WriteString("| Variable | Default | Secret | Meaning |\n|---|---|---|---|\n")
	for _, s := range settings {
		def := "`" + s.def + "`"
		if s.def == "" {
			def = "empty"
		}
		secret := "no"
		if s.secret {
			secret = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.name, def, secret, s.doc)
	}
	b.WriteString("\nTracing is configured by OpenTelemetry's standard variables, read by `shared/observe.SetupTracing`, not by this table: " +
		"`OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (unset: tracing off), `OTEL_EXPORTER_OTLP_PROTOCOL` " +
		"(`http/protobuf` or `grpc`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_EXPORTER_OTLP_COMPRESSION`, " +
		"`OTEL_SERVICE_NAME` (default `patentsvc`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`, " +
		"`OTEL_SDK_DISABLED`. docs/operations.md, \"Tracing\", has each one and what the spans mean.\n")
	return b.String()
}

func logLevel(dst *slog.Level, v string) error {
	switch strings.ToUpper(v) {
	case "DEBUG":
		*dst = slog.LevelDebug
	case "INFO":
		*dst = slog.LevelInfo
	case "WARNING", "WARN":
		*dst = slog.LevelWarn
	case "ERROR":
		*dst = slog.LevelError
	case "CRITICAL":
		*dst = slog.LevelError + 4
	default:
		return errors.New("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
	}
	return nil
}

func rootPath(dst *string, v string) error {
	v = strings.TrimRight(v, "/")
	if v != "" && (!strings.HasPrefix(v, "/") || strings.ContainsAny(v, " ?#")) {
		return errors.New("must be empty or a path such as /patents")
	}
	*dst = v
	return nil
}

func list(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func origins(dst *[]string, v string) error {
	out := list(v)
	if len(out) == 0 {
		return errors.New("must name at least one origin (\"*\" allows any)")
	}
	for _, o := range out {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			return fmt.Errorf("%q is not an origin such as https://app.example.com", o)
		}
	}
	*dst = out
	return nil
}

func prefixes(dst *[]netip.Prefix, v string) error {
	var out []netip.Prefix
	for _, p := range list(v) {
		if !strings.Contains(p, "/") {
			a, err := netip.ParseAddr(p)
			if err != nil {
				return fmt.Errorf("%q is not a CIDR or address", p)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		pf, err := netip.ParsePrefix(p)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR or address", p)
		}
		out = append(out, pf.Masked())
	}
	*dst = out
	return nil
}

func model(dst *string, v string) error {
	if _, err := patent.ResolveModel(v, ""); err != nil {
		return fmt.Errorf("must be one of %s", strings.Join(patent.ModelIDs(), ", "))
	}
	*dst = v
	return nil
}

func boolean(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("must be true or false")
	}
	*dst = b
	return nil
}

func hours(dst *time.Duration, v string) error {
	h, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(h) || math.IsInf(h, 0) || h <= 0 || h > 24*3650 {
		return errors.New("must be a positive number of hours (decimals allowed)")
	}
	d := time.Duration(h * float64(time.Hour))
	if d < time.Second {
		return errors.New("must be at least one second")
	}
	*dst = d
	return nil
}

func percent(dst *float64, v string) error {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
		return errors.New("must be a number of percent, 0 or more")
	}
	*dst = p
	return nil
}

func oneOf(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
}

func urls(dst *[]string, v string) error {
	out := list(v)
	for i, u := range out {
		var s string
		if err := httpURL(&s, u); err != nil {
			return fmt.Errorf("entry %d: %w", i+1, err)
		}
	}
	*dst = out
	return nil
}

func optionalURL(dst *string, v string) error {
	if v == "" {
		*dst = ""
		return nil
	}
	return httpURL(dst, v)
}

// durationList parses comma-separated positive durations (at least one,
// at most 20).
func durationList(dst *[]time.Duration, v string) error {
	parts := strings.Split(v, ",")
	if len(parts) > 20 {
		return errors.New("at most 20 waits")
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		var d time.Duration
		if err := positiveDuration(&d, strings.TrimSpace(p)); err != nil {
			return fmt.Errorf("%q: %w", strings.TrimSpace(p), err)
		}
		out = append(out, d)
	}
	*dst = out
	return nil
}

func positiveDuration(dst *time.Duration, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not a duration such as 90s, 30m or 168h")
	}
	if d <= 0 {
		return errors.New("must be positive")
	}
	*dst = d
	return nil
}

// durationIn reads a duration within [lo, hi].
func durationIn(dst *time.Duration, v string, lo, hi time.Duration) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not a duration such as 90s, 30m or 168h")
	}
	if d < lo || d > hi {
		return fmt.Errorf("must be between %s and %s", lo, hi)
	}
	*dst = d
	return nil
}

// mebibytes reads a whole number of MiB within [lo, hi] as bytes.
func mebibytes(dst *int64, v string, lo, hi int) error {
	var n int
	if err := intIn(&n, v, lo, hi); err != nil {
		return err
	}
	*dst = int64(n) << 20
	return nil
}

// kibibytes reads a whole number of KiB within [lo, hi] as bytes.
func kibibytes(dst *int, v string, lo, hi int) error {
	var n int
	if err := intIn(&n, v, lo, hi); err != nil {
		return err
	}
	*dst = n << 10
	return nil
}

// days reads a whole number of days within [lo, hi] as a duration.
func days(dst *time.Duration, v string, lo, hi int) error {
	var n int
	if err := intIn(&n, v, lo, hi); err != nil {
		return err
	}
	*dst = time.Duration(n) * 24 * time.Hour
	return nil
}

func intIn(dst *int, v string, lo, hi int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < lo || n > hi {
		return fmt.Errorf("must be between %d and %d", lo, hi)
	}
	*dst = n
	return nil
}

func httpURL(dst *string, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	*dst = strings.TrimRight(v, "/")
	return nil
}
