package httpapi

import (
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

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
func addRoutes(e *echo.Echo, logger *slog.Logger, opts Options, deps Deps) {
	users, an, jobs, tracking, reports, limits := deps.Users, deps.Analyses, deps.Jobs, deps.Tracking, deps.Reports, deps.Limits
	user := requireUser(users)
	admin := requireAdmin()
	ready := requireAnalyzer(opts.AnalyzerMissing)
	bodyLimit := middleware.BodyLimit(BodyLimit)
	g := e.Group(opts.RootPath)

	g.POST("/auth/register", route.Wrap(handleRegister(users), rateLimit(limits.Register), bodyLimit))
	g.POST("/auth/login", route.Wrap(handleLogin(users), rateLimit(limits.Login), bodyLimit))
	g.POST("/auth/refresh", route.Wrap(handleRefresh(users), bodyLimit))
	g.GET("/auth/me", route.Wrap(handleMe(), user))

	g.GET("/models", handleModels(opts.DefaultModel))

	// Static segments win over parameters: /analyze/batch is the listing,
	// not a company named "batch".
	g.GET("/analyze/batch", route.Wrap(handleListAnalyses(an), user))
	g.POST("/analyze/batch", route.Wrap(handleBatch(an, opts.DefaultModel), bodyLimit, user, ready))
	g.POST("/analyze/batch/async", route.Wrap(handleBatchAsync(jobs, opts.DefaultModel), bodyLimit, user, ready))
	g.GET("/analyze/patent/:patent_id", route.Wrap(handleAnalyzePatent(an, opts.DefaultModel), user, ready))
	g.GET("/analyze/:company_name", route.Wrap(handleAnalyzeCompany(an, opts.DefaultModel), user, ready))
	g.GET("/jobs", route.Wrap(handleListJobs(jobs), user))
	g.GET("/jobs/:job_id", route.Wrap(handleJob(jobs), user))

	g.GET("/export/:company_name", route.Wrap(handleExportCSV(reports, logger), user))
	g.GET("/export/:company_name/pdf", route.Wrap(handleExportPDF(reports, opts.PDF, logger), user))
	g.GET("/compare", route.Wrap(handleCompare(reports), user))
	g.GET("/compare/pdf", route.Wrap(handleComparePDF(reports, opts.PDF), user))
	g.GET("/analytics/trends", route.Wrap(handleTrends(reports), user))
	g.GET("/analytics/summary", route.Wrap(handleSummary(reports), user))

	g.GET("/admin/tracked", route.Wrap(handleListTracked(tracking), user, admin))
	g.POST("/admin/tracked", route.Wrap(handleCreateTracked(tracking), bodyLimit, user, admin))
	g.DELETE("/admin/tracked/:company_name", route.Wrap(handleDeleteTracked(tracking), user, admin))
	g.GET("/admin/tracked/:company_name/history", route.Wrap(handleTrackedHistory(tracking), user, admin))
	g.GET("/admin/alerts", route.Wrap(handleListAlerts(tracking), user, admin))
	g.GET("/admin/changes", route.Wrap(handleListChanges(tracking), user, admin))
	g.GET("/admin/rate-limits", route.Wrap(handleRateLimits(limits), user, admin))
	g.GET("/admin/users", route.Wrap(handleListUsers(users), user, admin))
	g.PATCH("/admin/users/:user_id/role", route.Wrap(handleSetRole(users), bodyLimit, user, admin))
	g.DELETE("/admin/users/:user_id", route.Wrap(handleDeleteUser(users), user, admin))
	g.GET("/admin/webhooks/deliveries", route.Wrap(handleListDeliveries(deps.Deliveries), user, admin))
	g.POST("/admin/webhooks/deliveries/:delivery_id/retry", route.Wrap(handleRetryDelivery(deps.Deliveries), user, admin))

	g.GET("/health", handleHealth(deps.Database, opts, deps.Started, deps.Now))
	// Readiness checks the database only, never the search API or the LLM
	// gateway.
	g.GET("/livez", observe.Livez())
	g.GET("/readyz", observe.Readyz(deps.Database.Ping, readyTimeout, "database unavailable", logger))
	g.GET("/metrics", echo.WrapHandler(observe.Handler(deps.Registry)))

	// The API reference (DOCS_ENABLED): no token, as /models; "try it"
	// calls from the page carry the token the reader types into it.
	if opts.Docs {
		ref := apidocs.New(docsTitle, openAPIDocument)
		g.GET("/openapi.yaml", ref.Document)
		g.GET("/docs", ref.Page)
		g.GET("/docs/:asset", ref.Asset)
	}
}
