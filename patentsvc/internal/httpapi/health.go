package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

type healthJSON struct {
	Status        string `json:"status"`
	Version       string `json:"version"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	Database      string `json:"database"`
	Analyzer      string `json:"analyzer"`
	Scheduler     string `json:"scheduler"`
	// Demo is true under make demo (DEMO=true), absent otherwise.
	Demo bool `json:"demo,omitempty"`
}

// handleHealth serves GET /health (no token): 200 "ok", or 503 "degraded"
// when the database does not answer.
func handleHealth(db Pinger, opts Options, started time.Time, now func() time.Time) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		body := healthJSON{Status: "ok", Version: cmp.Or(opts.Version, "dev"), UptimeSeconds: int64(now().Sub(started).Seconds()),
			Database: "ok", Analyzer: "ready", Scheduler: opts.Scheduler, Demo: opts.Demo}
		if len(opts.AnalyzerMissing) > 0 {
			body.Analyzer = "not_configured"
		}
		status := http.StatusOK
		if err := db.Ping(ctx); err != nil {
			body.Status, body.Database, status = "degraded", "error", http.StatusServiceUnavailable
		}
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return c.JSON(status, body)
	}
}

// readyTimeout bounds the readiness probe's check of the service's own
// store.
const readyTimeout = time.Second
