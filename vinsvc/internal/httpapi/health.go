package httpapi

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

type healthJSON struct {
	Status        string       `json:"status"`
	Version       string       `json:"version"`
	UptimeSeconds int64        `json:"uptime_seconds"`
	Cache         cacheJSON    `json:"cache"`
	Upstream      upstreamJSON `json:"upstream"`
}

type cacheJSON struct {
	Entries    int64   `json:"entries"`
	HitRate24h float64 `json:"hit_rate_24h"`
	SizeMB     float64 `json:"size_mb"`
}

type upstreamJSON struct {
	Catalog string `json:"upstream_catalog"`
	// LastCheck is absent until the first check has finished.
	LastCheck string `json:"last_check,omitempty"`
}

// handleHealth serves GET /v1/health: 200 "ok", or 503 "degraded" when the
// last upstream check failed or the cache store fails.
func handleHealth(store Store, dec Decoder, monitor UpstreamMonitor, started time.Time, now func() time.Time) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		cacheErr := store.Check(ctx)
		st := store.Stats()
		up := monitor.State()

		body := healthJSON{
			Status:        "ok",
			Version:       InterfaceVersion,
			UptimeSeconds: int64(now().Sub(started).Seconds()),
			Cache: cacheJSON{
				Entries:    st.Entries,
				HitRate24h: round(dec.HitRate(), 4),
				SizeMB:     round(float64(st.SizeBytes)/(1<<20), 3),
			},
			Upstream: upstreamJSON{Catalog: "reachable"},
		}
		if !up.Reachable {
			body.Upstream.Catalog = "unreachable"
		}
		if !up.LastCheck.IsZero() {
			body.Upstream.LastCheck = up.LastCheck.UTC().Format(time.RFC3339)
		}
		status := http.StatusOK
		if cacheErr != nil || !up.Reachable {
			body.Status, status = "degraded", http.StatusServiceUnavailable
		}
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return c.JSON(status, body)
	}
}

func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}

// readyTimeout bounds the readiness probe's check of the service's own
// store.
const readyTimeout = time.Second
