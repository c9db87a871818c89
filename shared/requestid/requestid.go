// Package requestid gives every request an id, echoed in X-Request-Id, and a
// request-scoped logger that carries it.
//
// An incoming X-Request-Id is kept only when it is 1 to 128 characters of
// [A-Za-z0-9._-]; anything else (absent, too long, other characters) is
// replaced by a new UUID, so a client cannot inject text into our logs.
package requestid

import (
	"bufio"
	"context"
	"crypto/rand"
	"log/slog"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Header is the request and response header carrying the id.
const Header = echo.HeaderXRequestID

// MaxLen is the longest incoming id that is kept.
const MaxLen = 128

type ctxKey struct{}

// scope is what a request's context carries, and is itself the context
// node that carries it: the node, the id, the base logger and the response
// header's value slice in one allocation, where context.WithValue would
// take three. It answers Value for ctxKey and delegates everything else
// (Done, Err, Deadline, other keys) to the request's context, so it
// behaves as the node context.WithValue would make.
type scope struct {
	context.Context
	id     string
	logger *slog.Logger
	header [1]string
}

// Value returns the scope itself for ctxKey, else asks the parent.
func (s *scope) Value(key any) any {
	if _, ok := key.(ctxKey); ok {
		return s
	}
	return s.Context.Value(key)
}

// Scope adds something of its own to every request's context, through
// Middleware: the request's context is then replaced once per request
// instead of once per middleware (each replacement copies the
// http.Request, a quarter of a kilobyte). observe.TracingScope is one.
type Scope interface {
	// Enter returns parent (the request's context) with what the scope
	// adds. It runs before the request id is stored, after it is chosen.
	Enter(c echo.Context, parent context.Context) context.Context
	// Exit runs once the rest of the chain has returned err, with the
	// request's context (the one Enter's result was built into).
	Exit(c echo.Context, ctx context.Context, err error)
}

// Middleware assigns the request id, sets the response header and stores the
// id and the base logger in the request context; Logger derives the
// request-scoped logger from them when one is needed (building it on every
// request would cost the hot path an allocation-heavy slog.With). The
// scopes (nil ones are skipped) add to the same context, in order, and
// exit in reverse order.
func Middleware(logger *slog.Logger, scopes ...Scope) echo.MiddlewareFunc {
	ids := newIDSource()
	scopes = slices.DeleteFunc(slices.Clone(scopes), func(s Scope) bool { return s == nil })
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			req := c.Request()
			id := req.Header.Get(Header)
			if !Valid(id) {
				id = ids.next()
			}
			ctx := req.Context()
			for _, sc := range scopes {
				ctx = sc.Enter(c, ctx)
			}
			s := &scope{Context: ctx, id: id, logger: logger}
			s.header[0] = id
			c.Response().Header()[Header] = s.header[:]
			c.SetRequest(req.WithContext(s))
			if len(scopes) > 0 {
				defer func() { // one deferred call, also when next panics
					for i := len(scopes) - 1; i >= 0; i-- {
						scopes[i].Exit(c, s, err)
					}
				}()
			}
			return next(c)
		}
	}
}

// idSource makes random (version 4) UUIDs from crypto/rand, read 4 KiB at
// a time into per-P buffers: one read per 256 ids instead of one per
// request, and no lock shared between requests. The bytes are request
// ids, not secrets, so holding some in memory costs nothing.
type idSource struct {
	readers sync.Pool // of *bufio.Reader over crypto/rand
}

func newIDSource() *idSource {
	return &idSource{readers: sync.Pool{New: func() any { return bufio.NewReaderSize(rand.Reader, 4096) }}}
}

func (s *idSource) next() string {
	r := s.readers.Get().(*bufio.Reader)
	u, err := uuid.NewRandomFromReader(r)
	s.readers.Put(r)
	if err != nil { // crypto/rand does not fail on supported platforms; be safe anyway
		return uuid.NewString()
	}
	return u.String()
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
