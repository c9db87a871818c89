package httperr

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/requestid"
)

// Classifier maps a domain error to an *Error, or returns nil when it does
// not recognise the error. Each service keeps one status table and passes
// its lookup here.
type Classifier func(error) *Error

// Renderer writes an *Error as the service's error body.
type Renderer func(c echo.Context, e *Error) error

// NewHandler returns the Echo HTTP error handler shared by the services.
//
// It does nothing when the response is already committed (Echo calls the
// handler a second time when the access logger runs with HandleError). For
// HEAD requests it writes the status without a body. Errors that end as a
// failure of the service (see logged: a 500 INTERNAL_ERROR, and an
// upstream's failure, vinsvc's 500 UPSTREAM_ERROR or patentsvc's 502) are
// logged once, at ERROR, as "request failed" with their chain (URLs
// removed, shared/redact's Text) and the request id; the client sees only
// the service's message.
func NewHandler(logger *slog.Logger, classify Classifier, render Renderer) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		e := Classify(err, classify)
		if _, ok := errors.AsType[*BodyError](err); ok {
			// The rest of the connection's bytes cannot be framed: close it
			// after this answer (net/http honours the header).
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
		if logged(e) {
			requestid.Logger(c.Request().Context(), logger).Error("request failed",
				"route", c.Path(), "status", e.Status, "err", redact.Text(err.Error()))
		}
		var rerr error
		if c.Request().Method == http.MethodHead {
			rerr = c.NoContent(e.Status)
		} else {
			rerr = render(c, e)
		}
		if rerr != nil {
			requestid.Logger(c.Request().Context(), logger).Error("error response failed", "err", rerr.Error())
		}
	}
}

// logged reports whether the handler logs e at ERROR: every 5xx but 503.
// A 5xx is a failure, the service's own or an upstream's, and the access
// line says only WARN and the status, so the cause must be logged once
// (docs/operations.md, "Logs"). That is wider than logging only the
// unclassified errors: an upstream failure is classified (it has its own
// code and message) and still needs its cause in the log. A 503 is a
// refusal by design (analyses not configured, shutting down) whose reason
// is its message.
func logged(e *Error) bool {
	return e.Status >= http.StatusInternalServerError && e.Status != http.StatusServiceUnavailable
}

// Classify turns any error into an *Error: a *BodyError anywhere in the
// chain is the client's 400, whatever wraps it (a handler that turned its
// failed read into a 500, or a decoder's message); then an *Error in the
// chain is used as it is, an *echo.HTTPError is translated, classify gets
// the rest, and what classify does not know becomes 500 INTERNAL_ERROR.
func Classify(err error, classify Classifier) *Error {
	if be, ok := errors.AsType[*BodyError](err); ok {
		return Wrap(be, http.StatusBadRequest, be.message())
	}
	if e := As(err); e != nil {
		return e
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return fromEcho(he)
	}
	if classify != nil {
		if e := classify(err); e != nil {
			return e
		}
	}
	return Wrap(err, http.StatusInternalServerError, "internal server error")
}

// fromEcho translates Echo's own errors (router, body limit, binder).
func fromEcho(he *echo.HTTPError) *Error {
	status := he.Code
	if status == 0 {
		status = http.StatusInternalServerError
	}
	var msg string
	switch status {
	case http.StatusNotFound:
		msg = "resource not found"
	case http.StatusMethodNotAllowed:
		msg = "method not allowed"
	case http.StatusRequestEntityTooLarge:
		msg = "request body too large"
	case http.StatusUnsupportedMediaType:
		msg = "unsupported media type"
	default:
		if s, ok := he.Message.(string); ok && status < http.StatusInternalServerError {
			msg = s
		} else {
			msg = http.StatusText(status)
		}
	}
	if status >= http.StatusInternalServerError {
		// Echo's 5xx (e.g. a failed bind) keeps its cause for the log only.
		return Wrap(he, status, "internal server error")
	}
	return &Error{Status: status, Code: CodeForStatus(status), Message: msg, Err: he}
}

// RejectOptions makes OPTIONS a method like any other the routes do not
// serve, for services that register no OPTIONS route: 405 with the path's
// Allow header on a known path, 404 on an unknown one. Echo (and its CORS
// middleware) would otherwise answer 204 with no body. With cors, a CORS
// preflight (an OPTIONS request with Origin and
// Access-Control-Request-Method) on a known path goes on to the next
// handler instead: put the CORS middleware after this one. Allow never
// lists OPTIONS, for any method's 405, since a plain OPTIONS is refused.
func RejectOptions(cors bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			// The router sets the key only for a known path whose methods
			// do not include the request's.
			allow, known := c.Get(echo.ContextKeyHeaderAllow).(string)
			if known {
				allow = withoutOptions(allow)
				c.Set(echo.ContextKeyHeaderAllow, allow) // read by Echo's 405 handler and the CORS middleware
			}
			req := c.Request()
			if req.Method != http.MethodOptions {
				return next(c)
			}
			if !known {
				return echo.ErrNotFound
			}
			if cors && req.Header.Get(echo.HeaderOrigin) != "" && req.Header.Get(echo.HeaderAccessControlRequestMethod) != "" {
				return next(c)
			}
			c.Response().Header().Set(echo.HeaderAllow, allow)
			return echo.ErrMethodNotAllowed
		}
	}
}

// withoutOptions drops OPTIONS from an Allow list ("OPTIONS, GET, POST").
func withoutOptions(allow string) string {
	var out []string
	for _, m := range strings.Split(allow, ",") {
		if m = strings.TrimSpace(m); m != "" && m != http.MethodOptions {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}
