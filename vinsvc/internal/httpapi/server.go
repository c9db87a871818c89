// Package httpapi is the VIN service's HTTP surface: routes, handlers,
// request parsing, the error table and the wire format.
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

// Decoder decodes VINs; *decoding.Service implements it.
type Decoder interface {
	Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error)
	DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome
	HitRate() float64
	Counts() (hits, misses uint64)
	SourceCounts() (vpic, snapshot uint64)
	SnapshotErrors() uint64
	Snapshot() vin.SnapshotInfo
}

// Store is what the API needs of the cache; *cache.Cache implements it.
type Store interface {
	Stats() vin.CacheStats
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

// NewServer builds the service's router with its middleware and routes.
// limiter is nil when rate limiting is off; demo marks a make demo run
// in health; docs serves the API reference (DOCS_ENABLED). Metrics about
// the cache, the decoder and the upstream are registered in reg.
func NewServer(logger *slog.Logger, proxySecrets []string, dec Decoder, store Store, limiter *ratelimit.Limiter,
	monitor UpstreamMonitor, shared SharedState, demo, docs bool, reg *prometheus.Registry, started time.Time, now func() time.Time) *echo.Echo {
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
		observe.Middleware(logger, observe.NewMetrics(reg)),
		observe.Recover(logger),
		reqbody.Middleware(), // before the limit: a body's faults are the client's 400, its size the limit's 413
		middleware.BodyLimit(BodyLimit),
		httperr.RejectOptions(false), // no CORS: every OPTIONS is a wrong method
	)

	registerMetrics(reg, dec, store, monitor)
	addRoutes(e, logger, proxySecrets, dec, store, limiter, monitor, shared, demo, docs, reg, started, now)
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
