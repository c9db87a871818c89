package httpapi

import (
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// handleDecode serves GET /v1/decode?vin=&raw=.
func handleDecode(dec Decoder) echo.HandlerFunc {
	bodies := &sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
	return func(c echo.Context) error {
		vins, raw := decodeQuery(c)
		if vins.n == 0 || vin.Normalize(vins.first) == "" {
			return badRequest("missing required query parameter vin")
		}
		if vins.n > 1 {
			return badRequest("query parameter vin given %d times; give it once", vins.n)
		}
		withRaw, err := parseRaw(raw)
		if err != nil {
			return err
		}
		v, err := vin.Parse(vins.first)
		if err != nil {
			return err
		}
		out, err := dec.Decode(c.Request().Context(), v, withRaw)
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h["X-Cache"] = cacheHeader(out.Cached)
		res := fromOutcome(out, withRaw)
		if res.Source == vin.SourceSnapshot {
			h.Set("X-Data-Source", vin.DataSourceOf(vin.SourceSnapshot, dec.Snapshot().Date))
		} else {
			h["X-Data-Source"] = dataSource
		}
		return writeResult(c, bodies, &res)
	}
}

// writeResult writes res as the 200 body, in a buffer from bodies: the body
// is the largest allocation of a cache hit (a fifth of its bytes, measured
// under wrk), and every byte not allocated puts the next garbage
// collection further off, which matters more to a hit than the writing
// does. net/http has copied the body into the connection's buffer when
// JSONBlob returns, and no middleware wraps the response writer, so the
// buffer is free again then.
func writeResult(c echo.Context, bodies *sync.Pool, res *resultJSON) error {
	buf := bodies.Get().(*[]byte)
	body := append(res.appendJSON((*buf)[:0]), '\n')
	c.Response().Header()[echo.HeaderContentType] = jsonContentType // what JSONBlob sets, without its lookup
	err := c.JSONBlob(http.StatusOK, body)
	if cap(body) <= maxPooledBody { // a raw record can make one large: let those go
		*buf = body
		bodies.Put(buf)
	}
	return err
}

// maxPooledBody is the largest body buffer writeResult keeps for reuse (a
// result with its raw record takes about 5 KB).
const maxPooledBody = 16 << 10

// Header values set on every hit, shared rather than allocated each time
// (net/http copies the header map before writing it).
var (
	jsonContentType = []string{echo.MIMEApplicationJSON}
	dataSource      = []string{vin.DataSource}
	hitHeader       = []string{"HIT"}
	missHeader      = []string{"MISS"}
)

// param is what the handlers use of a query parameter: how many times it
// was given and its first value.
type param struct {
	n     int
	first string
}

func paramOf(vals []string) param {
	if len(vals) == 0 {
		return param{}
	}
	return param{n: len(vals), first: vals[0]}
}

// decodeQuery returns the query parameters vin and raw as c.QueryParams()
// (url.ParseQuery) reads them. A query without escapes or semicolons, which
// is what clients send, is read in place, without the map and slices
// ParseQuery allocates on every request; any other goes through
// ParseQuery. The one difference: on the in-place path a GODEBUG
// urlmaxqueryparams limit set below the query's parameter count (which
// ParseQuery enforces by ignoring the whole query) is not applied.
func decodeQuery(c echo.Context) (vins, raw param) {
	q := c.Request().URL.RawQuery
	if strings.ContainsAny(q, "%+;") {
		all := c.QueryParams()
		return paramOf(all["vin"]), paramOf(all["raw"])
	}
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		p := &vins
		switch key {
		case "vin":
		case "raw":
			p = &raw
		default:
			continue
		}
		if p.n == 0 {
			p.first = value
		}
		p.n++
	}
	return vins, raw
}

// parseRaw reads the raw flag: true, false, 1 or 0 (decisions.md), absent
// meaning false; anything else is a 400.
func parseRaw(p param) (bool, error) {
	if p.n == 0 {
		return false, nil
	}
	if p.n > 1 {
		return false, badRequest("query parameter raw given %d times; give it once", p.n)
	}
	switch p.first {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, badRequest("query parameter raw must be true, false, 1 or 0, got %q", truncate(p.first, 40))
}

func cacheHeader(hit bool) []string {
	if hit {
		return hitHeader
	}
	return missHeader
}

// truncate shortens client input echoed in error messages.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
