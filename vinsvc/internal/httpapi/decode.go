package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// handleDecode serves GET /v1/decode?vin=&raw=.
func handleDecode(dec Decoder) echo.HandlerFunc {
	return func(c echo.Context) error {
		q := c.QueryParams()
		vins := q["vin"]
		if len(vins) == 0 || vin.Normalize(vins[0]) == "" {
			return badRequest("missing required query parameter vin")
		}
		if len(vins) > 1 {
			return badRequest("query parameter vin given %d times; give it once", len(vins))
		}
		withRaw, err := parseRaw(q)
		if err != nil {
			return err
		}
		v, err := vin.Parse(vins[0])
		if err != nil {
			return err
		}
		out, err := dec.Decode(c.Request().Context(), v, withRaw)
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h["X-Cache"] = []string{cacheHeader(out.Cached)}
		res := fromOutcome(out, withRaw)
		if res.Source == vin.SourceSnapshot {
			h.Set("X-Data-Source", vin.DataSourceOf(vin.SourceSnapshot, dec.Snapshot().Date))
		} else {
			h["X-Data-Source"] = dataSource
		}
		body := append(res.appendJSON(make([]byte, 0, 1024)), '\n')
		return c.JSONBlob(http.StatusOK, body)
	}
}

var dataSource = []string{vin.DataSource}

// parseRaw reads the raw flag: true, false, 1 or 0 (decisions.md), absent
// meaning false; anything else is a 400.
func parseRaw(q map[string][]string) (bool, error) {
	vals, ok := q["raw"]
	if !ok {
		return false, nil
	}
	if len(vals) > 1 {
		return false, badRequest("query parameter raw given %d times; give it once", len(vals))
	}
	switch vals[0] {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, badRequest("query parameter raw must be true, false, 1 or 0, got %q", truncate(vals[0], 40))
}

func cacheHeader(hit bool) string {
	if hit {
		return "HIT"
	}
	return "MISS"
}

// truncate shortens client input echoed in error messages.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
