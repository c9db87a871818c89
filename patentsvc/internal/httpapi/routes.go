package httpapi

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/observe"
)

// addRoutes is the whole HTTP surface of the service, under ROOT_PATH.
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

	g.POST("/auth/register", handleRegister(authn), rateLimit(limits.Register), bodyLimit)
	g.POST("/auth/login", handleLogin(authn), rateLimit(limits.Login), bodyLimit)
	g.POST("/auth/refresh", handleRefresh(authn), bodyLimit)
	g.GET("/auth/me", handleMe(), user)

	g.GET("/models", handleModels(opts.DefaultModel))

	// Static segments win over parameters: /analyze/batch is the listing,
	// not a company named "batch".
	g.GET("/analyze/batch", handleListAnalyses(st), user)
	g.POST("/analyze/batch", handleBatch(an, opts.DefaultModel), bodyLimit, user, ready)
	g.POST("/analyze/batch/async", handleBatchAsync(jobs, opts.DefaultModel), bodyLimit, user, ready)
	g.GET("/analyze/patent/:patent_id", handleAnalyzePatent(an, opts.DefaultModel), user, ready)
	g.GET("/analyze/:company_name", handleAnalyzeCompany(an, opts.DefaultModel), user, ready)
	g.GET("/jobs", handleListJobs(st), user)
	g.GET("/jobs/:job_id", handleJob(st), user)

	g.GET("/export/:company_name", handleExportCSV(st, logger), user)
	g.GET("/export/:company_name/pdf", handleExportPDF(st, logger, now), user)
	g.GET("/analytics/trends", handleTrends(st, now), user)
	g.GET("/analytics/summary", handleSummary(st, now), user)

	g.GET("/admin/tracked", handleListTracked(st), user, admin)
	g.POST("/admin/tracked", handleCreateTracked(st), bodyLimit, user, admin)
	g.DELETE("/admin/tracked/:company_name", handleDeleteTracked(st), user, admin)
	g.GET("/admin/alerts", handleListAlerts(st), user, admin)
	g.GET("/admin/rate-limits", handleRateLimits(limits), user, admin)
	g.GET("/admin/users", handleListUsers(st), user, admin)
	g.PATCH("/admin/users/:user_id/role", handleSetRole(st), bodyLimit, user, admin)
	g.DELETE("/admin/users/:user_id", handleDeleteUser(st), user, admin)
	g.GET("/admin/webhooks/deliveries", handleListDeliveries(st), user, admin)
	g.POST("/admin/webhooks/deliveries/:delivery_id/retry", handleRetryDelivery(st), user, admin)

	g.GET("/health", handleHealth(st, opts, started, now))
	// Readiness checks the database only, never the search API or the LLM
	// gateway.
	g.GET("/livez", observe.Livez())
	g.GET("/readyz", observe.Readyz(st.Ping, readyTimeout, "database unavailable", logger))
	g.GET("/metrics", echo.WrapHandler(observe.Handler(reg)))
}
