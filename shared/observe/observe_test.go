package observe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/requestid"
)

func newServer(logs *bytes.Buffer) (*echo.Echo, http.Handler) {
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	reg := observe.NewRegistry()
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(logger, nil, func(c echo.Context, he *httperr.Error) error {
		return c.JSON(he.Status, map[string]string{"code": he.Code})
	})
	e.Use(requestid.Middleware(logger))
	e.Use(observe.Middleware(logger, observe.NewMetrics(reg)))
	e.Use(observe.Recover(logger))
	e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/teapot", func(c echo.Context) error { return httperr.New(http.StatusTeapot, "short and stout") })
	e.GET("/panic", func(c echo.Context) error { panic("boom") })
	e.GET("/fail", func(c echo.Context) error { return errors.New("plain failure") })
	return e, observe.Handler(reg)
}

func TestAccessLogAndMetrics(t *testing.T) {
	var logs bytes.Buffer
	e, metrics := newServer(&logs)
	for _, p := range []string{"/items/1", "/items/2", "/teapot", "/panic", "/fail", "/missing/abc"} {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.Header.Set(requestid.Header, "id-"+strings.ReplaceAll(p, "/", "_"))
		e.ServeHTTP(httptest.NewRecorder(), req)
	}

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON", l)
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 6 {
		t.Fatalf("access lines = %d, want one per request (6)\n%s", len(lines), logs.String())
	}
	want := []struct {
		route  string
		status float64
	}{{"/items/:id", 200}, {"/items/:id", 200}, {"/teapot", 418}, {"/panic", 500}, {"/fail", 500}, {"unmatched", 404}}
	for i, w := range want {
		l := lines[i]
		if l["route"] != w.route || l["status"] != w.status || l["request_id"] == "" || l["method"] != "GET" || l["latency_ms"] == nil {
			t.Errorf("access line %d = %v, want route %s status %v with request_id, method, latency_ms", i, l, w.route, w.status)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"panic recovered"`) || !strings.Contains(logs.String(), `"request_id":"id-_panic"`) {
		t.Errorf("panic not logged with its request id:\n%s", logs.String())
	}

	rec := httptest.NewRecorder()
	metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, s := range []string{
		`http_requests_total{method="GET",route="/items/:id",status="200"} 2`,
		`http_requests_total{method="GET",route="/teapot",status="418"} 1`,
		`http_requests_total{method="GET",route="/panic",status="500"} 1`,
		`http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"} 2`,
		`process_cpu_seconds_total`,
	} {
		if !strings.Contains(rec.Body.String(), s) {
			t.Errorf("metrics lack %q", s)
		}
	}
	if strings.Contains(rec.Body.String(), "/items/1") {
		t.Error("metrics are labelled by raw path")
	}
}

// TestInventedMethodsShareOneSeries: methods outside HTTP's own are counted
// and logged as _OTHER, so a client cannot add series at will.
func TestInventedMethodsShareOneSeries(t *testing.T) {
	var logs bytes.Buffer
	e, metrics := newServer(&logs)
	for _, m := range []string{"FOO1", "FOO2", "BREW"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/items/1", nil))
	}
	rec := httptest.NewRecorder()
	metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if strings.Contains(body, "FOO1") || strings.Contains(body, "BREW") || !strings.Contains(body, `method="_OTHER"`) {
		t.Errorf("metrics carry invented methods, or no _OTHER series:\n%s", body)
	}
	if strings.Contains(logs.String(), "FOO1") || !strings.Contains(logs.String(), `"method":"_OTHER"`) {
		t.Errorf("the access log carries an invented method: %s", logs.String())
	}
}

// TestMetricsConcurrentSeries: requests creating and using series at the
// same time, from many goroutines (run with -race), are all counted.
func TestMetricsConcurrentSeries(t *testing.T) {
	e, metrics := newServer(new(bytes.Buffer))
	paths := []string{"/items/1", "/teapot", "/missing/a", "/missing/b"}
	const perPath = 50
	var wg sync.WaitGroup
	for _, p := range paths {
		for range perPath {
			wg.Go(func() { e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil)) })
		}
	}
	wg.Wait()
	w := httptest.NewRecorder()
	metrics.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`http_requests_total{method="GET",route="/items/:id",status="200"} 50`,
		`http_requests_total{method="GET",route="/teapot",status="418"} 50`,
		`http_requests_total{method="GET",route="unmatched",status="404"} 100`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, w.Body.String())
		}
	}
}

// TestLogHandlerAccessLines: through NewLogHandler, Middleware writes the
// same access lines as through slog's JSON handler (time and latency
// aside), a logger derived with With keeps its attributes on them, and
// the lines written at once from many requests and other log calls come
// out whole (run with -race: the two ways share one writer).
func TestLogHandlerAccessLines(t *testing.T) {
	serve := func(logger *slog.Logger) {
		e := echo.New()
		e.Use(requestid.Middleware(logger))
		e.Use(observe.Middleware(logger, observe.NewMetrics(observe.NewRegistry())))
		e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
		e.GET("/fail", func(c echo.Context) error { return c.NoContent(http.StatusBadGateway) })
		for _, p := range []string{"/items/1", "/fail", "/missing/\"x\"%0A\u2028"} {
			req := httptest.NewRequest(http.MethodGet, p, nil)
			req.Header.Set(requestid.Header, "id-1")
			e.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	mask := regexp.MustCompile(`"time":"[^"]*"|"latency_ms":[0-9.e-]+`)
	for _, demo := range []bool{false, true} {
		var fast, plain bytes.Buffer
		fastLogger := slog.New(observe.NewLogHandler(&fast, nil))
		plainLogger := slog.New(observe.TraceLogHandler(slog.NewJSONHandler(&plain, nil)))
		if demo {
			fastLogger, plainLogger = fastLogger.With("demo", true), plainLogger.With("demo", true)
		}
		serve(fastLogger)
		serve(plainLogger)
		got, want := mask.ReplaceAllString(fast.String(), "•"), mask.ReplaceAllString(plain.String(), "•")
		if got != want || strings.Count(got, `"msg":"request"`) != 3 {
			t.Errorf("demo %v: access lines through NewLogHandler:\n%s\nwant, as slog writes them:\n%s", demo, got, want)
		}
	}

	var out bytes.Buffer
	logger := slog.New(observe.NewLogHandler(&out, slog.LevelInfo))
	e := echo.New()
	e.Use(requestid.Middleware(logger))
	e.Use(observe.Middleware(logger, observe.NewMetrics(observe.NewRegistry())))
	e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/1", nil))
				logger.Info("between requests", "n", 1)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %q is not JSON: two writes interleaved", l)
		}
	}
}
