// Package reqbody guards how a request's body arrives: a body that cannot
// be read for the client's fault is the client's 400, never the service's
// 500 (decisions.md, "Both services: hostile input answered, never a
// 5xx"), and a request framed by Transfer-Encoding closes its connection
// after its answer (decisions.md, "Both services: the platform's own HTTP
// framing, ...").
//
// # Framing
//
// net/http reads a request that carries both Content-Length and
// Transfer-Encoding: chunked by its chunks alone, and deletes the
// Content-Length header before any handler runs (RFC 9112 section 6.3,
// item 3). What the RFC asks of a server beyond that is to close the
// connection after the response, since a proxy in front may have framed
// the request by its Content-Length and sent what it thinks is the next
// request in the bytes net/http read as the body, or the other way round.
// A handler cannot tell that the header section had both, but every such
// request that net/http serves has Transfer-Encoding (req.TransferEncoding
// is set): Middleware answers every request framed by it with
// "Connection: close", and net/http closes the connection after the
// answer, so nothing sent behind it on that connection is read. Clients
// that send bodies with Content-Length (all of the services' clients do)
// keep their connections.
package reqbody

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
)

// Middleware wraps every request's body so that a read failing for the
// client's fault returns *httperr.BodyError, which httperr answers 400 and
// logs below ERROR, and answers a request framed by Transfer-Encoding with
// "Connection: close". Put it before any middleware that reads or limits
// the body (Echo's BodyLimit wraps what this one gives it, so a body over
// the limit is still that limit's 413).
func Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if len(req.TransferEncoding) > 0 {
				c.Response().Header().Set(echo.HeaderConnection, "close")
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
