package observe

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/requestid"
)

// Livez answers the Kubernetes liveness probe: 200 {"status":"ok"} while
// the process serves. It checks nothing else (decisions.md: a dependency
// outage must not restart pods).
func Livez() echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
}

// Readyz answers the Kubernetes readiness probe: 200 {"status":"ready"}
// when check, given at most timeout, answers nil. Otherwise it logs the
// failure at WARN and returns a 503 *httperr.Error with message, which the
// service's error handler renders in its own error body. check must cover
// the service's own stores only, never a third-party upstream: an upstream
// outage must not take the pods out of rotation.
func Readyz(check func(context.Context) error, timeout time.Duration, message string, logger *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
		defer cancel()
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		if err := check(ctx); err != nil {
			requestid.Logger(ctx, logger).WarnContext(ctx, "not ready", "err", err.Error())
			return httperr.Wrap(err, http.StatusServiceUnavailable, message)
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}
