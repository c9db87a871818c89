package route_test

import (
	"net/http"
	"net/http/httptest"
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
