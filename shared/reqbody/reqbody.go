// Package reqbody guards how a request's body arrives: a body that cannot
// be read for the client's fault is the client's 400, never the service's
// 500, and a request framed by both Content-Length and Transfer-Encoding is
// refused and its connection closed (decisions.md, "Both services: hostile
// input answered, never a 5xx"; RFC 9112 section 6.1).
//
// # Caveats
//
//   - net/http accepts a request carrying both Content-Length and
//     Transfer-Encoding: chunked, frames it by the chunks and deletes the
//     Content-Length header before any handler runs, so no handler can see
//     that the request had both. Listener wraps the server's connections
//     to note, for each request's header section as it is read, whether it
//     had both; ConnContext hands those notes to Middleware, which refuses
//     the request. Both must be installed (shared/graceful does it for the
//     services); without them Middleware still guards bodies and refuses
//     nothing for framing.
//   - The notes follow the connection's bytes as net/http reads them,
//     framing each body as net/http does (Content-Length bytes, or chunks
//     and trailers; CR and LF before a request line skipped). A note is
//     matched to its request by the request line, so a request net/http
//     answers itself (OPTIONS *) does not shift the others.
//   - They fail closed. A framing header folded onto a second line (an
//     obsolete form net/http still joins) is refused like both headers.
//     When the framer loses its place (a stream it does not follow) or a
//     note is dropped (more than 32 requests pipelined ahead of their
//     answers), a request it holds no note for is refused: it might be
//     the one that carried both headers. Clients that frame plainly never
//     meet either.
//   - The notes scan header sections and chunk-size lines and skip body
//     bytes unread: about 150 ns and no allocation for a gateway's decode
//     request, header section and lookup together (BenchmarkFeed), about
//     1% of a cache hit's CPU.
package reqbody

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
)

// ErrAmbiguousFraming is the error Middleware returns for a request that
// carried both Content-Length and Transfer-Encoding: an Echo 400 that
// httperr renders with the service's error body.
var ErrAmbiguousFraming = echo.NewHTTPError(http.StatusBadRequest,
	"a request may not carry both Content-Length and Transfer-Encoding")

// Middleware refuses a request whose header section carried both
// Content-Length and Transfer-Encoding (400, Connection: close), and wraps
// every other request's body so that a read failing for the client's fault
// returns *httperr.BodyError, which httperr answers 400 and logs below
// ERROR. Put it before any middleware that reads or limits the body (Echo's
// BodyLimit wraps what this one gives it, so a body over the limit is
// still that limit's 413).
func Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if n, ok := req.Context().Value(notesKey{}).(*notes); ok && n.take(req) {
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return ErrAmbiguousFraming
			}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = &guarded{ReadCloser: req.Body}
			}
			return next(c)
		}
	}
}

// guarded is a request body whose read errors, other than its end and a
// handler's own misuse, are the client's.
type guarded struct{ io.ReadCloser }

func (g *guarded) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, http.ErrBodyReadAfterClose) {
		var he *echo.HTTPError
		var mb *http.MaxBytesError
		if !errors.As(err, &he) && !errors.As(err, &mb) {
			err = &httperr.BodyError{Err: err}
		}
	}
	return n, err
}

// Listener wraps ln so that its connections note, for each request, whether
// its header section carried both Content-Length and Transfer-Encoding.
// The notes reach Middleware through the server's ConnContext.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, n: &notes{seed: maphash.MakeSeed()}}, nil
}

// ConnContext is an http.Server's ConnContext that makes a connection's
// notes (a connection from Listener) available to Middleware.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*conn); ok {
		return context.WithValue(ctx, notesKey{}, fc.n)
	}
	return ctx
}

type notesKey struct{}

// conn feeds every byte net/http reads to its framer. net/http never reads
// one connection from two goroutines at once, but Middleware reads the
// notes from the handler's: the notes have a lock of their own.
type conn struct {
	net.Conn
	f framer
	n *notes
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.f.lost {
		c.f.feed(p[:n], c.n)
	}
	return n, err
}

// maxNotes bounds the notes a connection keeps: net/http reads at most a
// buffer (4 KiB) ahead of the request it serves, so a handful are ever
// waiting; a client that pipelines more loses the oldest notes.
const maxNotes = 32

// note is one request's header section: its request line's hash, and
// whether it carried both framing headers.
type note struct {
	line uint64
	both bool
}

type notes struct {
	seed    maphash.Seed // the connection's: request lines hash alike on both sides
	mu      sync.Mutex
	pending []note
	// lost: the framer stopped following the connection; dropped: a note
	// was dropped unread. Either way a request without a note may be the
	// one that carried both headers, so it is refused.
	lost, dropped bool
}

func (n *notes) add(x note) {
	n.mu.Lock()
	if len(n.pending) == maxNotes {
		n.pending = append(n.pending[:0], n.pending[1:]...)
		n.dropped = true
	}
	n.pending = append(n.pending, x)
	n.mu.Unlock()
}

// take finds req's note, drops it and any older one (a request net/http
// answered itself), and reports whether req is refused: it carried both
// framing headers (or folded one onto a second line), or it has no note
// once the framer has lost the connection or a note was dropped, so that
// what cannot be checked is refused rather than served (fail closed; no
// client that frames its requests plainly ever gets there).
func (n *notes) take(req *http.Request) bool {
	h := n.lineHash(req.Method, req.RequestURI, req.Proto)
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, x := range n.pending {
		if x.line == h {
			n.pending = append(n.pending[:0], n.pending[i+1:]...)
			return x.both
		}
	}
	return n.lost || n.dropped
}

// lineHash is the hash of the request line net/http parsed into method,
// request URI and protocol: it splits the line at its first two spaces, so
// the three joined by single spaces are the line itself.
func (n *notes) lineHash(method, uri, proto string) uint64 {
	var h maphash.Hash
	h.SetSeed(n.seed)
	h.WriteString(method)
	h.WriteByte(' ')
	h.WriteString(uri)
	h.WriteByte(' ')
	h.WriteString(proto)
	return h.Sum64()
}
