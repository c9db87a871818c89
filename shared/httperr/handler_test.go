package httperr_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/requestid"
)

var (
	errDomain   = errors.New("domain: thing missing")
	errUpstream = errors.New("upstream failure")
	errRefused  = errors.New("shutting down")
)

func classify(err error) *httperr.Error {
	switch {
	case errors.Is(err, errDomain):
		return &httperr.Error{Status: http.StatusNotFound, Code: "THING_MISSING", Message: "no such thing", Err: err}
	case errors.Is(err, errUpstream):
		return &httperr.Error{Status: http.StatusInternalServerError, Code: "UPSTREAM_ERROR", Message: "the upstream failed", Err: err}
	case errors.Is(err, errRefused):
		return &httperr.Error{Status: http.StatusServiceUnavailable, Code: "SERVICE_UNAVAILABLE", Message: "shutting down", Err: err}
	}
	return nil
}

type body struct {
	Status int
	Code   string
	Msg    string
	Fields []httperr.FieldError
}

func render(c echo.Context, e *httperr.Error) error {
	return c.JSON(e.Status, body{Status: e.Status, Code: e.Code, Msg: e.Message, Fields: e.Fields})
}

func newEcho(logs *bytes.Buffer, h echo.HandlerFunc) *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(slog.New(slog.NewJSONHandler(logs, nil)), classify, render)
	e.Use(middleware.BodyLimit("1K"))
	e.GET("/x", h)
	e.POST("/x", h)
	e.HEAD("/x", h)
	return e
}

func TestHandler(t *testing.T) {
	for _, tt := range []struct {
		name    string
		method  string
		path    string
		body    string
		err     error
		status  int
		code    string
		msg     string
		logged  bool
		hasBody bool
	}{
		{"httperr passes through", "GET", "/x", "", httperr.New(400, "bad thing").WithCode("BAD_THING"), 400, "BAD_THING", "bad thing", false, true},
		{"wrapped httperr", "GET", "/x", "", fmt.Errorf("ctx: %w", httperr.New(409, "dup")), 409, "CONFLICT", "dup", false, true},
		{"domain error classified", "GET", "/x", "", fmt.Errorf("load: %w", errDomain), 404, "THING_MISSING", "no such thing", false, true},
		{"unknown error is 500", "GET", "/x", "", errors.New("db password=hunter2 failed"), 500, "INTERNAL_ERROR", "internal server error", true, true},
		{"route not found", "GET", "/nope", "", nil, 404, "NOT_FOUND", "resource not found", false, true},
		{"method not allowed", "PUT", "/x", "", nil, 405, "METHOD_NOT_ALLOWED", "method not allowed", false, true},
		{"body too large", "POST", "/x", strings.Repeat("a", 2048), nil, 413, "PAYLOAD_TOO_LARGE", "request body too large", false, true},
		{"echo 400 keeps its message", "GET", "/x", "", echo.NewHTTPError(400, "bad param"), 400, "BAD_REQUEST", "bad param", false, true},
		{"echo 500 hides its message", "GET", "/x", "", echo.NewHTTPError(500, "secret internals"), 500, "INTERNAL_ERROR", "internal server error", true, true},
		{"HEAD has no body", "HEAD", "/x", "", errors.New("boom"), 500, "", "", true, false},
		// A classified 5xx is a failure too: its cause is logged.
		{"upstream failure is logged", "GET", "/x", "", fmt.Errorf("%w: decode: status 503", errUpstream), 500, "UPSTREAM_ERROR", "the upstream failed", true, true},
		{"upstream 502 is logged", "GET", "/x", "", httperr.Wrap(errors.New("gateway: status 500"), 502, "bad gateway"), 502, "UPSTREAM_ERROR", "bad gateway", true, true},
		// A body the client broke is its 400, whatever a handler made of it.
		{"broken body inside a 500", "GET", "/x", "", httperr.Wrap(&httperr.BodyError{Err: io.ErrUnexpectedEOF}, 500, "read failed"), 400, "BAD_REQUEST",
			"the request body ended before it was complete (shorter than its Content-Length, or a chunk cut off)", false, true},
		{"body stopped arriving", "GET", "/x", "", fmt.Errorf("decode: %w", &httperr.BodyError{Err: os.ErrDeadlineExceeded}), 400, "BAD_REQUEST",
			"the request body stopped arriving before it was complete", false, true},
		{"malformed chunks", "GET", "/x", "", &httperr.BodyError{Err: errors.New("http chunk length too large")}, 400, "BAD_REQUEST",
			"the request body could not be read: malformed chunked encoding", false, true},
		// A 503 is a refusal by design, not a failure.
		{"503 is not logged", "GET", "/x", "", fmt.Errorf("submit: %w", errRefused), 503, "SERVICE_UNAVAILABLE", "shutting down", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			e := newEcho(&logs, func(c echo.Context) error { return tt.err })
			var rb *strings.Reader
			if tt.body != "" {
				rb = strings.NewReader(tt.body)
			}
			var req *http.Request
			if rb != nil {
				req = httptest.NewRequest(tt.method, tt.path, rb)
			} else {
				req = httptest.NewRequest(tt.method, tt.path, nil)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if !tt.hasBody {
				if rec.Body.Len() != 0 {
					t.Errorf("HEAD answered a body: %s", rec.Body)
				}
			} else {
				want := fmt.Sprintf(`{"Status":%d,"Code":%q,"Msg":%q,"Fields":null}`, tt.status, tt.code, tt.msg)
				if got := strings.TrimSpace(rec.Body.String()); got != want {
					t.Errorf("body = %s, want %s", got, want)
				}
			}
			if got := strings.Contains(logs.String(), "request failed"); got != tt.logged {
				t.Errorf("logged = %v, want %v (logs: %s)", got, tt.logged, logs.String())
			}
			if _, isBody := errors.AsType[*httperr.BodyError](tt.err); isBody != (rec.Header().Get("Connection") == "close") {
				t.Errorf("Connection: %q for a body error %v", rec.Header().Get("Connection"), isBody)
			}
			if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "secret internals") {
				t.Errorf("internal detail leaked to the client: %s", rec.Body)
			}
		})
	}
}

// The cause is logged once, with the request id and without URLs (which
// carry keys in their queries).
func TestHandlerLogsCause(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(logger, classify, render)
	e.Use(requestid.Middleware(logger))
	e.GET("/x", func(c echo.Context) error {
		return fmt.Errorf("%w: Get \"http://upstream.example/v1?api_key=k3y\": status 502", errUpstream)
	})
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set(echo.HeaderXRequestID, "req-42")
	e.ServeHTTP(httptest.NewRecorder(), req)

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %s", len(lines), logs.String())
	}
	l := lines[0]
	if l["level"] != "ERROR" || l["msg"] != "request failed" || l["request_id"] != "req-42" || l["status"] != 500.0 {
		t.Errorf("log line = %v, want ERROR request failed with request_id req-42, status 500", l)
	}
	if got, want := l["err"], "upstream failure: Get \"[url]\": status 502"; got != want {
		t.Errorf("logged err = %q, want %q", got, want)
	}
	if strings.Contains(logs.String(), "k3y") || strings.Contains(logs.String(), "upstream.example") {
		t.Errorf("the log reveals the URL: %s", logs.String())
	}
}

func TestHandlerCommitted(t *testing.T) {
	var logs bytes.Buffer
	e := newEcho(&logs, func(c echo.Context) error {
		c.String(http.StatusOK, "partial")
		return errors.New("late failure")
	})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "partial" {
		t.Errorf("committed response was rewritten: %d %q", rec.Code, rec.Body)
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := errors.New("cause")
	e := httperr.Wrap(cause, 422, "bad").WithFields(httperr.FieldError{Field: "name", Message: "too short"})
	if !errors.Is(e, cause) || e.Code != "UNPROCESSABLE_ENTITY" || len(e.Fields) != 1 {
		t.Errorf("Wrap/WithFields = %+v", e)
	}
	if got := httperr.As(fmt.Errorf("x: %w", e)); got != e {
		t.Errorf("As = %v, want %v", got, e)
	}
	if httperr.As(cause) != nil {
		t.Error("As found an *Error in a plain error")
	}
	for status, code := range map[int]string{400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
		405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED", 500: "INTERNAL_ERROR", 503: "SERVICE_UNAVAILABLE"} {
		if got := httperr.CodeForStatus(status); got != code {
			t.Errorf("CodeForStatus(%d) = %s, want %s", status, got, code)
		}
	}
}

func TestRejectOptions(t *testing.T) {
	preflight := map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"}
	for _, tt := range []struct {
		name    string
		cors    bool
		method  string
		path    string
		headers map[string]string
		status  int
		allow   string // the Allow header wanted, "" for none
	}{
		{"options known path", false, http.MethodOptions, "/x", nil, 405, "GET, HEAD, POST"},
		{"options known path, cors", true, http.MethodOptions, "/x", nil, 405, "GET, HEAD, POST"},
		{"options unknown path", false, http.MethodOptions, "/nope", nil, 404, ""},
		{"options unknown path, cors", true, http.MethodOptions, "/nope", nil, 404, ""},
		{"wrong method: allow without options", false, http.MethodPut, "/x", nil, 405, "GET, HEAD, POST"},
		{"served method untouched", false, http.MethodGet, "/x", nil, 204, ""},
		// A preflight goes on to the CORS middleware only with cors.
		{"preflight, cors", true, http.MethodOptions, "/x", preflight, 204, "GET, HEAD, POST"}, // and the CORS headers
		{"preflight, no cors", false, http.MethodOptions, "/x", preflight, 405, "GET, HEAD, POST"},
		{"preflight unknown path", true, http.MethodOptions, "/nope", preflight, 404, ""},
		{"preflight without origin", true, http.MethodOptions, "/x", map[string]string{"Access-Control-Request-Method": "GET"}, 405, "GET, HEAD, POST"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			e := newEcho(&logs, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
			e.Use(httperr.RejectOptions(tt.cors))
			if tt.cors {
				e.Use(middleware.CORSWithConfig(middleware.CORSConfig{AllowOrigins: []string{"http://localhost:3000"}}))
			}
			req := httptest.NewRequest(tt.method, tt.path, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.status)
			}
			// Echo lists a path's methods in registration order.
			allow := strings.Split(rec.Header().Get("Allow"), ", ")
			slices.Sort(allow)
			if got := strings.Join(allow, ", "); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if tt.cors && tt.status == 204 && rec.Header().Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
				t.Errorf("preflight answered without CORS headers: %v", rec.Header())
			}
			if tt.status >= 400 && !strings.Contains(rec.Body.String(), `"Code":`) {
				t.Errorf("body %q: not the error format", rec.Body.String())
			}
		})
	}
}
