// Package httpapi is the VIN service's HTTP surface: routes, handlers,
// request parsing, the error table and the wire format. NewServer builds
// it from Options, the plain settings, and Deps, what it calls through the
// small interfaces declared here, on the caller's side (Decoder, Cache,
// UpstreamMonitor, SharedState).
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/reqbody"
	"github.com/gatewayapis/shared/requestid"
	"github.com/gatewayapis/shared/route"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// BodyLimit is the largest request body accepted (decisions.md: 64 KiB;
// Echo reads "64K" as 64,000 bytes, "64KiB" as 65,536).
const BodyLimit = "64KiB"

// WriteSlack is how long past the longest upstream call a response may
// take: the http.Server's WriteTimeout is the upstream client's
// MaxCallDuration plus WriteSlack, so a request that waits for a slow
// upstream is not cut off while its answer is written.
const WriteSlack = 10 * time.Second

// InterfaceVersion is the version of the interface specification this
// server implements (docs/openapi/vinsvc.yaml), fixed by the contract and
// reported by the health endpoint. It is not the build's version: that is
// main.version, set at link time and logged at start.
const InterfaceVersion = "1.0.0"

// Decoder is what the HTTP layer calls of the decoding core: decodes,
// their counts for metrics and health, the snapshot's state.
// *decoding.Service implements it.
type Decoder interface {
	// Decode decodes one normalised, valid VIN. The error is the Outcome's
	// Err: a kind of vin.ErrUpstream when no answer could be had, or the
	// request context's error.
	Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error)
	// DecodeBatch decodes normalised, valid, distinct VINs (at most 50):
	// one Outcome per VIN, in order, Err set on each that failed.
	DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome
	// HitRate is cache hits / lookups over the last 24 hours.
	HitRate() float64
	// Counts are the cache hits and misses since start.
	Counts() (hits, misses uint64)
	// SourceCounts are the fresh answers (not cache hits) from vPIC and
	// from the snapshot since start.
	SourceCounts() (vpic, snapshot uint64)
	// SnapshotErrors is how many snapshot reads failed since start.
	SnapshotErrors() uint64
	// Snapshot describes the snapshot: mode, loading, available, date.
	Snapshot() vin.SnapshotInfo
	// Suggest answers a typed VIN (vin.ParseTyped) from the snapshot:
	// valid, or the likeliest VINs one edit away; vin.ErrNoSnapshot
	// without one.
	Suggest(ctx context.Context, typed string) (vin.Suggestions, error)
}

// Cache is what the HTTP layer needs of the cache (the bbolt file): its
// figures for health and metrics, and whether it works, for health and
// readiness. *cache.Cache implements it.
type Cache interface {
	Stats() vin.CacheStats
	// Check returns an error when the cache cannot be read.
	Check(ctx context.Context) error
}

// UpstreamMonitor reports the last upstream check; *vpic.Monitor implements
// it.
type UpstreamMonitor interface {
	State() vin.UpstreamState
}

// SharedState reports the Redis the replicas share, for health: "ok",
// "unreachable" or "disabled"; *cluster.Redis implements it (a nil one is
// "disabled").
type SharedState interface {
	State(ctx context.Context) string
}

// Options are the HTTP layer's plain settings, read from the configuration.
// The zero value accepts no proxy secret (every /v1/decode and /v1/batch
// is 403), marks no demo and serves no API reference.
type Options struct {
	// ProxySecrets are the values of X-Gateway-Proxy-Secret accepted on
	// /v1/decode and /v1/batch: PROXY_SECRET, and PROXY_SECRET_PREVIOUS
	// while a rotation is in progress.
	ProxySecrets []string
	// Demo marks a make demo run (DEMO=true): health says demo: true.
	Demo bool
	// Docs serves the API reference, GET /docs and GET /openapi.yaml
	// (DOCS_ENABLED).
	Docs bool
}

// Deps are what the HTTP layer calls. Every field but Limiter is required.
type Deps struct {
	// Decoder is the decoding core.
	Decoder Decoder
	// Cache is the cache's figures and health.
	Cache Cache
	// Limiter rate-limits /v1/decode and /v1/batch per subscriber; nil when
	// rate limiting is off (RATE_LIMITS=off).
	Limiter *ratelimit.Limiter
	// Upstream is the last vPIC check, for health and metrics.
	Upstream UpstreamMonitor
	// Shared is the state of the Redis the replicas share, for health.
	Shared SharedState
	// Registry receives the HTTP metrics and those read at scrape time from
	// Decoder, Cache and Upstream; /metrics serves it.
	Registry *prometheus.Registry
	// Started is when the service started, for health's uptime.
	Started time.Time
	// Now is the clock: uptime, the snapshot's age.
	Now func() time.Time
}

// NewServer builds the service's router with its middleware and routes
// over deps, set up as opts says.
func NewServer(logger *slog.Logger, opts Options, deps Deps) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard) // everything Echo reports reaches slog through the error handler
	e.JSONSerializer = jsonSerializer{}
	// The gateway is the only client that reaches us; trust no forwarding
	// header for the client address.
	e.IPExtractor = echo.ExtractIPDirect()
	e.HTTPErrorHandler = httperr.NewHandler(logger, classify, render)

	// The middleware every request passes, in order, built once (route.Use).
	// The request id, and the server span in the same context: before the
	// access line, so it carries the trace.
	route.Use(e,
		requestid.Middleware(logger, observe.TracingScope()),
		observe.Middleware(logger, observe.NewMetrics(deps.Registry)),
		observe.Recover(logger),
		reqbody.Middleware(), // before the limit: a body's faults are the client's 400, its size the limit's 413
		middleware.BodyLimit(BodyLimit),
		httperr.RejectOptions(false), // no CORS: every OPTIONS is a wrong method
	)

	registerMetrics(deps.Registry, deps.Decoder, deps.Cache, deps.Upstream)
	addRoutes(e, logger, opts, deps)
	return e
}

// jsonSerializer is Echo's serializer without HTML escaping: vPIC values
// such as "1st Row (Driver & Passenger)" stay readable.
type jsonSerializer struct{}

func (jsonSerializer) Serialize(c echo.Context, i any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

func (jsonSerializer) Deserialize(c echo.Context, i any) error {
	if err := json.NewDecoder(c.Request().Body).Decode(i); err != nil {
		return httperr.Wrap(err, 400, fmt.Sprintf("invalid JSON body: %v", err))
	}
	return nil
}
