// Package httpapi is the patent service's HTTP surface: routes, handlers,
// request parsing, the error table and the wire format.
package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/reqbody"
	"github.com/gatewayapis/shared/requestid"
	"github.com/gatewayapis/shared/route"
)

// BodyLimit is the largest request body accepted (decisions.md: 1 MiB;
// Echo reads "1M" as 10^6 bytes, "1MiB" as 2^20).
const BodyLimit = "1MiB"

// WriteTimeout is the HTTP server's write timeout: the longest a response
// may take, which a synchronous batch of 20 companies needs.
const WriteTimeout = 5 * time.Minute

// InterfaceVersion is the version of the HTTP interface that
// docs/openapi/patentsvc.yaml describes (its info.version). It is not the
// build's version, which Options.Version carries to the health endpoint.
const InterfaceVersion = "1.0.0"

// Users registers users, signs them in, checks their tokens and manages
// them; *auth.Service implements it.
type Users interface {
	Register(ctx context.Context, email, password string) (patent.User, error)
	Login(ctx context.Context, email, password string) (auth.Tokens, error)
	Refresh(ctx context.Context, refreshToken string) (auth.Tokens, error)
	Authenticate(ctx context.Context, accessToken string) (patent.User, error)
	// Users returns every user, oldest first.
	Users(ctx context.Context) ([]patent.User, error)
	// SetRole returns patent.ErrNotFound for an unknown user and
	// patent.ErrLastAdmin when the change would leave no admin.
	SetRole(ctx context.Context, id int64, role patent.Role) (patent.User, error)
	// DeleteUser deletes user id on behalf of actor: patent.ErrSelfDelete,
	// patent.ErrLastAdmin, patent.ErrNotFound.
	DeleteUser(ctx context.Context, actor, id int64) error
}

// Pinger is the readiness probe of the service's own database (health and
// /readyz); *store.Store implements it. It is the one thing the HTTP
// layer asks of the database itself: every request goes through a core.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the HTTP layer calls: the cores, each through the
// interface it declares here, the database's readiness probe, the rate
// limits, the metrics registry and the clock.
type Deps struct {
	Users    Users
	Analyses Analyses
	Jobs     Jobs
	Tracking Tracking
	Reports  Reports
	// Deliveries lists and retries the webhook deliveries.
	Deliveries Deliveries
	Database   Pinger
	Limits     Limits
	// Registry is where the HTTP metrics and the rate limits' are
	// registered, and what /metrics serves.
	Registry *prometheus.Registry
	// Started is when the process started (health's uptime).
	Started time.Time
	Now     func() time.Time
}

// Options are the settings the HTTP layer needs.
type Options struct {
	// Version is the build's version (main.version), reported by the
	// health endpoint; "dev" when empty.
	Version        string
	RootPath       string
	CORSOrigins    []string
	TrustedProxies []netip.Prefix
	DefaultModel   string
	// AnalyzerMissing names the settings the analyzer lacks; empty when it
	// is ready.
	AnalyzerMissing []string
	// Scheduler is the scheduler's state for health: "running" or
	// "disabled".
	Scheduler string
	// Demo marks a make demo run: health says demo: true.
	Demo bool
	// Docs serves the API reference, GET /docs and GET /openapi.yaml
	// (DOCS_ENABLED).
	Docs bool
	// PDF is how PDF exports are drawn: the fonts, loaded once at start
	// (PDF_FONT_PATH). The zero value draws with the Go fonts alone.
	PDF export.PDFOptions
}

// Limits are the rate-limited endpoints' windows.
type Limits struct {
	Register *ratelimit.Window
	Login    *ratelimit.Window
	// Cluster is the windows' shared store (PostgreSQL), nil when they are
	// the process's own (SQLite).
	Cluster *ratelimit.Cluster
}

// NewLimits returns the windows of decisions.md: 5 registrations and 10
// logins a minute per client, kept in cluster's store when cluster is not
// nil (decisions.md, "Across replicas") and in the process otherwise.
func NewLimits(now func() time.Time, cluster *ratelimit.Cluster) Limits {
	var opts []ratelimit.Option
	if cluster != nil {
		opts = append(opts, ratelimit.WithShared(cluster))
	}
	return Limits{
		Register: ratelimit.New("/auth/register", "5/minute", 5, time.Minute, now, opts...),
		Login:    ratelimit.New("/auth/login", "10/minute", 10, time.Minute, now, opts...),
		Cluster:  cluster,
	}
}

// Windows lists the windows, for the janitor that sweeps them.
func (l Limits) Windows() []*ratelimit.Window { return []*ratelimit.Window{l.Register, l.Login} }

// NewServer builds the service's router with its middleware and routes.
// While Options.AnalyzerMissing is not empty the endpoints that analyse
// answer 503, and the others work.
func NewServer(logger *slog.Logger, opts Options, deps Deps) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard) // everything Echo reports reaches slog through the error handler
	e.JSONSerializer = jsonSerializer{}
	e.IPExtractor = ipExtractor(opts.TrustedProxies)
	e.HTTPErrorHandler = httperr.NewHandler(logger, classify, render)

	// The middleware every request passes, in order, built once (route.Use).
	// The request id, and a server span per request, "<METHOD> <route>",
	// child of the gateway's traceparent, in the same context: before the
	// access log, so its line carries the trace id.
	mw := []echo.MiddlewareFunc{
		requestid.Middleware(logger, observe.TracingScope()),
		observe.Middleware(logger, observe.NewMetrics(deps.Registry)),
		observe.Recover(logger),
		reqbody.Middleware(), // before the routes' body limits: a body's faults are the client's 400, its size the limit's 413
	}
	registerMetrics(deps.Registry, deps.Limits)
	// Body limits are set where the routes are declared (routes.go).
	// CORS preflights go on to the CORS middleware; every other OPTIONS is
	// a wrong method. An empty origin list would make Echo allow every
	// origin: no CORS then.
	cors := len(opts.CORSOrigins) > 0
	mw = append(mw, httperr.RejectOptions(cors))
	if cors {
		mw = append(mw, middleware.CORSWithConfig(middleware.CORSConfig{
			AllowOrigins:  opts.CORSOrigins,
			AllowMethods:  []string{"GET", "POST", "PATCH", "DELETE", "OPTIONS"},
			AllowHeaders:  []string{echo.HeaderAuthorization, echo.HeaderContentType, echo.HeaderXRequestID},
			ExposeHeaders: []string{echo.HeaderXRequestID, echo.HeaderRetryAfter, echo.HeaderContentDisposition},
			MaxAge:        600,
		}))
	}
	route.Use(e, mw...)

	addRoutes(e, logger, opts, deps)
	return e
}

// ipExtractor believes X-Forwarded-For only from trusted proxies: the
// client is the right-most address not inside them. With none configured,
// the socket peer is the client.
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		_, n, err := net.ParseCIDR(p.String())
		if err == nil {
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// jsonSerializer is Echo's serializer without HTML escaping.
type jsonSerializer struct{}

func (jsonSerializer) Serialize(c echo.Context, i any, indent string) error {
	enc := json.NewEncoder(c.Response())
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

func (jsonSerializer) Deserialize(c echo.Context, i any) error { return decodeJSON(c, i) }
