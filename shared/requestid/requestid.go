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

type ctxKey int

const (
	idKey ctxKey = iota
	loggerKey
)

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
			ctx := context.WithValue(req.Context(), idKey, id)
			ctx = context.WithValue(ctx, loggerKey, logger)
			c.SetRequest(req.WithContext(ctx))
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
	id, _ := ctx.Value(idKey).(string)
	return id
}

// Logger returns a logger with the request's request_id attribute, built
// on the logger given to Middleware; outside a request it returns fallback.
func Logger(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	l, ok := ctx.Value(loggerKey).(*slog.Logger)
	if !ok {
		return fallback
	}
	return l.With("request_id", FromContext(ctx))
}
