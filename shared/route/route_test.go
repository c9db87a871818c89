package route_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/route"
)

// tag returns a middleware that appends name to the trace before and after
// the rest of the chain.
func tag(trace *[]string, name string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			*trace = append(*trace, name)
			err := next(c)
			*trace = append(*trace, "/"+name)
			return err
		}
	}
}

// TestWrapRunsInEchosOrder registers the same middleware once as Echo
// route middleware and once through Wrap: both traces must be the same,
// and Wrap must build its chain at registration, not per request.
func TestWrapRunsInEchosOrder(t *testing.T) {
	var viaEcho, viaWrap []string
	built := 0
	counting := func(next echo.HandlerFunc) echo.HandlerFunc { built++; return next }
	h := func(trace *[]string) echo.HandlerFunc {
		return func(c echo.Context) error {
			*trace = append(*trace, "handler")
			return c.NoContent(http.StatusNoContent)
		}
	}
	e := echo.New()
	e.GET("/echo", h(&viaEcho), tag(&viaEcho, "a"), tag(&viaEcho, "b"))
	e.GET("/wrap", route.Wrap(h(&viaWrap), tag(&viaWrap, "a"), tag(&viaWrap, "b"), counting))
	for range 3 {
		for _, p := range []string{"/echo", "/wrap"} {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			if rec.Code != http.StatusNoContent {
				t.Fatalf("%s: status %d", p, rec.Code)
			}
		}
	}
	if got, want := strings.Join(viaWrap, " "), strings.Join(viaEcho, " "); got != want {
		t.Errorf("Wrap ran %q, Echo ran %q", got, want)
	}
	if want := "a b handler /b /a"; !strings.HasPrefix(strings.Join(viaWrap, " "), want) {
		t.Errorf("Wrap ran %q, want it to start %q", strings.Join(viaWrap, " "), want)
	}
	if built != 1 {
		t.Errorf("the chain was built %d times for 3 requests, want once", built)
	}
}

// TestUseRunsAsEchoUse registers the same middleware on one Echo with
// e.Use and on another with Use: for a route, a 404 and a 405, both must
// run them in the same order around the same handler and answer the same,
// and Use must build its chain once and add no allocation per request.
func TestUseRunsAsEchoUse(t *testing.T) {
	var viaEcho, viaUse []string
	built := 0
	counting := func(next echo.HandlerFunc) echo.HandlerFunc { built++; return next }
	newEcho := func(trace *[]string, use func(e *echo.Echo, mw ...echo.MiddlewareFunc)) *echo.Echo {
		e := echo.New()
		use(e, tag(trace, "a"), tag(trace, "b"))
		e.GET("/r/:id", func(c echo.Context) error {
			*trace = append(*trace, "handler "+c.Param("id"))
			return c.NoContent(http.StatusNoContent)
		})
		return e
	}
	eEcho := newEcho(&viaEcho, func(e *echo.Echo, mw ...echo.MiddlewareFunc) { e.Use(mw...) })
	eUse := newEcho(&viaUse, func(e *echo.Echo, mw ...echo.MiddlewareFunc) { route.Use(e, append(mw, counting)...) })
	for _, r := range []struct{ method, path string }{{"GET", "/r/1"}, {"GET", "/missing"}, {"POST", "/r/2"}} {
		a, b := httptest.NewRecorder(), httptest.NewRecorder()
		eEcho.ServeHTTP(a, httptest.NewRequest(r.method, r.path, nil))
		eUse.ServeHTTP(b, httptest.NewRequest(r.method, r.path, nil))
		if a.Code != b.Code || a.Header().Get("Allow") != b.Header().Get("Allow") || a.Body.String() != b.Body.String() {
			t.Errorf("%s %s: e.Use answered %d %q %s, Use %d %q %s", r.method, r.path,
				a.Code, a.Header().Get("Allow"), a.Body, b.Code, b.Header().Get("Allow"), b.Body)
		}
	}
	if got, want := strings.Join(viaUse, " "), strings.Join(viaEcho, " "); got != want {
		t.Errorf("Use ran %q, e.Use ran %q", got, want)
	}
	if want := "a b handler 1 /b /a a b /b /a a b /b /a"; strings.Join(viaUse, " ") != want {
		t.Errorf("Use ran %q, want %q", strings.Join(viaUse, " "), want)
	}
	if built != 1 {
		t.Errorf("the chain was built %d times for 3 requests, want once", built)
	}

	// Per request, Use costs what a bare Echo does: nothing of its own.
	// The averages are fractional, over many requests: under the race
	// detector sync.Pool drops Echo's contexts at random, which adds a
	// fraction of an allocation to every request of every server alike
	// (testing.AllocsPerRun rounds that down or not, and flaked).
	pass := func(next echo.HandlerFunc) echo.HandlerFunc { return func(c echo.Context) error { return next(c) } }
	allocs := func(use func(e *echo.Echo)) float64 {
		e := echo.New()
		use(e)
		e.GET("/", func(c echo.Context) error { return nil })
		req, w := httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder()
		e.ServeHTTP(w, req) // warm up
		const runs = 2000
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			e.ServeHTTP(w, req)
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / runs
	}
	bare := allocs(func(*echo.Echo) {})
	viaRoute := allocs(func(e *echo.Echo) { route.Use(e, pass, pass, pass) })
	viaEchoUse := allocs(func(e *echo.Echo) { e.Use(pass, pass, pass) })
	t.Logf("allocations per request: a bare Echo %.2f, three middleware through Use %.2f, through e.Use %.2f", bare, viaRoute, viaEchoUse)
	if viaRoute > bare+0.5 {
		t.Errorf("three middleware through Use: %.2f allocations per request, a bare Echo %.2f", viaRoute, bare)
	}
	if viaEchoUse < bare+1.5 {
		t.Errorf("three middleware through e.Use: %.2f allocations per request, a bare Echo %.2f: the test no longer shows what Use saves", viaEchoUse, bare)
	}
}
