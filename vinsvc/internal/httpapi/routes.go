package httpapi

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/apidocs"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/route"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

// addRoutes is the whole HTTP surface of the service.
// A route's middleware goes through route.Wrap, which builds its chain
// once, where Echo would build it again on every request.
func addRoutes(e *echo.Echo, logger *slog.Logger, proxySecrets []string, dec Decoder, store Store,
	limiter *ratelimit.Limiter, monitor UpstreamMonitor, shared SharedState, demo, docs bool, reg *prometheus.Registry, started time.Time, now func() time.Time) {
	secret := requireProxySecret(proxySecrets)

	v1 := e.Group("/v1")
	v1.GET("/decode", route.Wrap(handleDecode(dec), secret, limit(limiter, decodeCost)))
	v1.POST("/batch", route.Wrap(handleBatch(dec), secret, limit(limiter, batchCost)))
	v1.GET("/health", handleHealth(store, dec, monitor, shared, demo, started, now))

	// Readiness checks the cache store only, never vPIC nor Redis: the
	// cache serves while the upstream is down, and the service runs on its
	// own while Redis is.
	e.GET("/livez", observe.Livez())
	e.GET("/readyz", handleReady(dec, observe.Readyz(store.Check, readyTimeout, "cache store unavailable", logger)))
	e.GET("/metrics", echo.WrapHandler(observe.Handler(reg)))

	// The API reference (DOCS_ENABLED): open like the probes, outside /v1,
	// so no proxy secret; "try it" calls from the page carry the one the
	// reader types into it. Not routed by the gateway examples.
	if docs {
		ref := apidocs.New(docsTitle, openAPIDocument)
		e.GET("/openapi.yaml", ref.Document)
		e.GET("/docs", ref.Page)
		e.GET("/docs/:asset", ref.Asset)
	}
}
