package httpapi

import (
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/apidocs"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/route"
)

// addRoutes is the whole HTTP surface of the service.
// A route's middleware goes through route.Wrap, which builds its chain
// once, where Echo would build it again on every request.
func addRoutes(e *echo.Echo, logger *slog.Logger, opts Options, deps Deps) {
	secret := requireProxySecret(opts.ProxySecrets)
	dec := deps.Decoder

	v1 := e.Group("/v1")
	v1.GET("/decode", route.Wrap(handleDecode(dec), secret, limit(deps.Limiter, decodeCost)))
	v1.GET("/suggest", route.Wrap(handleSuggest(dec), secret, limit(deps.Limiter, decodeCost)))
	v1.POST("/batch", route.Wrap(handleBatch(dec), secret, limit(deps.Limiter, batchCost)))
	v1.GET("/health", handleHealth(deps.Cache, dec, deps.Upstream, deps.Shared, opts.Demo, deps.Started, deps.Now))

	// Readiness checks the cache only, never vPIC nor Redis: the cache
	// serves while the upstream is down, and the service runs on its own
	// while Redis is. (The message is the wire contract's.)
	e.GET("/livez", observe.Livez())
	e.GET("/readyz", handleReady(dec, observe.Readyz(deps.Cache.Check, readyTimeout, "cache store unavailable", logger)))
	e.GET("/metrics", echo.WrapHandler(observe.Handler(deps.Registry)))

	// The API reference (DOCS_ENABLED): open like the probes, outside /v1,
	// so no proxy secret; "try it" calls from the page carry the one the
	// reader types into it. Not routed by the gateway examples.
	if opts.Docs {
		ref := apidocs.New(docsTitle, openAPIDocument)
		e.GET("/openapi.yaml", ref.Document)
		e.GET("/docs", ref.Page)
		e.GET("/docs/:asset", ref.Asset)
	}
}
