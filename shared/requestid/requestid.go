// Package requestid gives every request an id, echoed in X-Request-Id, and a
// request-scoped logger that carries it.
//
// An incoming X-Request-Id is kept only when it is 1 to 128 characters of
// [A-Za-z0-9._-]; anything else (absent, too long, other characters) is
// replaced by a new UUID, so a client cannot inject text into our logs.
package requestid

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Header is the request and response header carrying the id.
const Header = echo.HeaderXRequestID

// MaxLen is the longest incoming id that is kept.
const MaxLen = 128

type ctxKey struct{}

// scope is what a request's context carries: one value, one allocation.
type scope struct {
	id     string
	logger *slog.Logger
}

// Middleware assigns the request id, sets the response header and stores the
// id and the base logger in the request context; Logger derives the
// request-scoped logger from them when one is needed (building it on every
// request would cost the hot path an allocation-heavy slog.With).
func Middleware(logger *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			id := req.Header.Get(Header)
			if !Valid(id) {
				id = uuid.NewString()
			}
			c.Response().Header()[Header] = []string{id}
			c.SetRequest(req.WithContext(context.WithValue(req.Context(), ctxKey{}, &scope{id: id, logger: logger})))
			return next(c)
		}
	}
}

// Valid reports whether an incoming id is kept as it is.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// FromContext returns the request id, or "" outside a request.
func FromContext(ctx context.Context) string {
	if s, ok := ctx.Value(ctxKey{}).(*scope); ok {
		return s.id
	}
	return ""
}

// Logger returns a logger with the request's request_id attribute, built
// on the logger given to Middleware; outside a request it returns fallback.
func Logger(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	s, ok := ctx.Value(ctxKey{}).(*scope)
	if !ok {
		return fallback
	}
	return s.logger.With("request_id", s.id)
}
