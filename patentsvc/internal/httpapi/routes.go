package httpapi

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/apidocs"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/route"
)

// addRoutes is the whole HTTP surface of the service, under ROOT_PATH.
// A route's middleware goes through route.Wrap, which builds its chain
// once, where Echo would build it again on every request.
//
// Every route that reads a body declares its limit (bodyLimit, 1 MiB):
// first, so an oversize body is a 413 before anything else answers,
// except on the rate-limited routes, where the limiter counts every request
// first (decisions.md) and the limit comes second. Routes without a body
// never read one, so they need no limit.
func addRoutes(e *echo.Echo, logger *slog.Logger, opts Options, authn Auth, st Store, an Analyzer, jobs Jobs, limits Limits,
	reg *prometheus.Registry, started time.Time, now func() time.Time) {
	user := requireUser(authn)
	admin := requireAdmin()
	ready := requireAnalyzer(opts.AnalyzerMissing)
	bodyLimit := middleware.BodyLimit(BodyLimit)
	g := e.Group(opts.RootPath)

	g.POST("/auth/register", route.Wrap(handleRegister(authn), rateLimit(limits.Register), bodyLimit))
	g.POST("/auth/login", route.Wrap(handleLogin(authn), rateLimit(limits.Login), bodyLimit))
	g.POST("/auth/refresh", route.Wrap(handleRefresh(authn), bodyLimit))
	g.GET("/auth/me", route.Wrap(handleMe(), user))

	g.GET("/models", handleModels(opts.DefaultModel))

	// Static segments win over parameters: /analyze/batch is the listing,
	// not a company named "batch".
	g.GET("/analyze/batch", route.Wrap(handleListAnalyses(st), user))
	g.POST("/analyze/batch", route.Wrap(handleBatch(an, opts.DefaultModel), bodyLimit, user, ready))
	g.POST("/analyze/batch/async", route.Wrap(handleBatchAsync(jobs, opts.DefaultModel), bodyLimit, user, ready))
	g.GET("/analyze/patent/:patent_id", route.Wrap(handleAnalyzePatent(an, opts.DefaultModel), user, ready))
	g.GET("/analyze/:company_name", route.Wrap(handleAnalyzeCompany(an, opts.DefaultModel), user, ready))
	g.GET("/jobs", route.Wrap(handleListJobs(st), user))
	g.GET("/jobs/:job_id", route.Wrap(handleJob(st), user))

	g.GET("/export/:company_name", route.Wrap(handleExportCSV(st, logger), user))
	g.GET("/export/:company_name/pdf", route.Wrap(handleExportPDF(st, opts.PDF, logger, now), user))
	g.GET("/analytics/trends", route.Wrap(handleTrends(st, now), user))
	g.GET("/analytics/summary", route.Wrap(handleSummary(st, now), user))

	g.GET("/admin/tracked", route.Wrap(handleListTracked(st), user, admin))
	g.POST("/admin/tracked", route.Wrap(handleCreateTracked(st), bodyLimit, user, admin))
	g.DELETE("/admin/tracked/:company_name", route.Wrap(handleDeleteTracked(st), user, admin))
	g.GET("/admin/tracked/:company_name/history", route.Wrap(handleTrackedHistory(st, now), user, admin))
	g.GET("/admin/alerts", route.Wrap(handleListAlerts(st), user, admin))
	g.GET("/admin/changes", route.Wrap(handleListChanges(st, now), user, admin))
	g.GET("/admin/rate-limits", route.Wrap(handleRateLimits(limits), user, admin))
	g.GET("/admin/users", route.Wrap(handleListUsers(st), user, admin))
	g.PATCH("/admin/users/:user_id/role", route.Wrap(handleSetRole(st), bodyLimit, user, admin))
	g.DELETE("/admin/users/:user_id", route.Wrap(handleDeleteUser(st), user, admin))
	g.GET("/admin/webhooks/deliveries", route.Wrap(handleListDeliveries(st), user, admin))
	g.POST("/admin/webhooks/deliveries/:delivery_id/retry", route.Wrap(handleRetryDelivery(st), user, admin))

	g.GET("/health", handleHealth(st, opts, started, now))
	// Readiness checks the database only, never the search API or the LLM
	// gateway.
	g.GET("/livez", observe.Livez())
	g.GET("/readyz", observe.Readyz(st.Ping, readyTimeout, "database unavailable", logger))
	g.GET("/metrics", echo.WrapHandler(observe.Handler(reg)))

	// The API reference (DOCS_ENABLED): no token, as /models; "try it"
	// calls from the page carry the token the reader types into it.
	if opts.Docs {
		ref := apidocs.New(docsTitle, openAPIDocument)
		g.GET("/openapi.yaml", ref.Document)
		g.GET("/docs", ref.Page)
		g.GET("/docs/:asset", ref.Asset)
	}
}
