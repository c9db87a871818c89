package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/labstack/echo/v4"
)

type healthJSON struct {
	Status        string       `json:"status"`
	Version       string       `json:"version"`
	UptimeSeconds int64        `json:"uptime_seconds"`
	Cache         cacheJSON    `json:"cache"`
	Upstream      upstreamJSON `json:"upstream"`
	Snapshot      snapshotJSON `json:"snapshot"`
	// Redis is "ok", "unreachable" or "disabled" (no REDIS_URL); it never
	// makes the service degraded: without Redis each replica answers alone.
	Redis string `json:"redis"`
	// Demo is true under make demo (DEMO=true), absent otherwise.
	Demo bool `json:"demo,omitempty"`
}

// snapshotJSON is health's snapshot object (decisions.md): the mode,
// whether a snapshot is loaded, its data date, and a warning when it is
// older than vin.SnapshotMaxAge.
type snapshotJSON struct {
	Mode      string  `json:"mode"`
	Available bool    `json:"available"`
	Loading   bool    `json:"loading,omitempty"` // the file is still being read at start
	Date      *string `json:"date"`              // YYYY-MM-DD; null when not available
	AgeDays   *int    `json:"age_days"`
	Warning   string  `json:"warning,omitempty"`
}

func fromSnapshot(info vin.SnapshotInfo, now time.Time) snapshotJSON {
	out := snapshotJSON{Mode: string(info.Mode), Available: info.Available, Loading: info.Loading}
	if !info.Available {
		return out
	}
	date := info.Date.UTC().Format(time.DateOnly)
	age := int(now.Sub(info.Date).Hours() / 24)
	out.Date, out.AgeDays = &date, &age
	if vin.SnapshotStale(info.Date, now) {
		out.Warning = fmt.Sprintf("the vPIC snapshot is %d days old (more than %d): refresh it (docs/operations.md)", age, int(vin.SnapshotMaxAge.Hours()/24))
	}
	return out
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
// cache fails, or the last upstream check failed and no snapshot answers
// in its place. Redis's state is shown and never degrades it.
func handleHealth(cache Cache, dec Decoder, monitor UpstreamMonitor, shared SharedState, demo bool, started time.Time, now func() time.Time) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		cacheErr := cache.Check(ctx)
		st := cache.Stats()
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
			Redis:    shared.State(ctx),
			Demo:     demo,
		}
		if !up.Reachable {
			body.Upstream.Catalog = "unreachable"
		}
		if !up.LastCheck.IsZero() {
			body.Upstream.LastCheck = up.LastCheck.UTC().Format(time.RFC3339)
		}
		snap := dec.Snapshot()
		body.Snapshot = fromSnapshot(snap, now())
		// The snapshot answers while vPIC is unreachable (unless it is off);
		// one still loading at start is not a failure: the readiness probe
		// keeps traffic away until it is there.
		answers := up.Reachable || (snap.Available || snap.Loading) && snap.Mode != vin.SnapshotOff
		status := http.StatusOK
		if cacheErr != nil || !answers {
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
// cache.
const readyTimeout = time.Second

// probeLoading is the readiness probe's answer while the snapshot loads.
type probeLoading struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// handleReady serves GET /readyz: 503 {"status":"loading","reason":"vPIC
// snapshot loading"} while the configured snapshot is still being read at
// start (decisions.md, "vinsvc: snapshot answers as vPIC gives them"), so
// that a new pod takes traffic only once it answers as it will; then ready
// as the cache says.
func handleReady(dec Decoder, ready echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if dec.Snapshot().Loading {
			c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
			return c.JSON(http.StatusServiceUnavailable, probeLoading{Status: "loading", Reason: "vPIC snapshot loading"})
		}
		return ready(c)
	}
}
