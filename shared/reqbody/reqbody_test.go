package reqbody_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/gatewayapis/shared/graceful"
	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/reqbody"
	"github.com/gatewayapis/shared/reqbody/reqbodytest"
	"github.com/gatewayapis/testkit/syncbuf"
)

// serve runs an Echo server as the services build theirs (httperr's
// handler, reqbody.Middleware before a body limit, graceful's server) with
// a 1 s read timeout, and returns its address and its log. POST /echo
// answers the body it read; POST /refuse reads the body and refuses it,
// as a service refuses a body it cannot use (400 BAD_REQUEST); a failed
// read goes back as a 500 from both, as a careless handler would return
// it.
func serve(t *testing.T) (string, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(logger, nil, func(c echo.Context, e *httperr.Error) error {
		return c.JSON(e.Status, map[string]string{"error": e.Code, "message": e.Message})
	})
	e.Use(reqbody.Middleware(), middleware.BodyLimit("1KiB"))
	e.POST("/echo", func(c echo.Context) error {
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return httperr.Wrap(err, http.StatusInternalServerError, "reading failed")
		}
		return c.String(http.StatusOK, fmt.Sprintf("%d:%s", len(b), b))
	})
	e.POST("/refuse", func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return httperr.Wrap(err, http.StatusInternalServerError, "reading failed")
		}
		return echo.NewHTTPError(http.StatusBadRequest, "no body is good enough")
	})
	e.GET("/*", func(c echo.Context) error { return c.String(http.StatusOK, "got "+c.Request().URL.Path) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := graceful.NewServer(e, logger, 5*time.Second)
	srv.ReadTimeout = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	drain, stop := graceful.DrainContext(ctx, time.Second)
	done := make(chan error, 1)
	go func() { done <- graceful.Serve(ctx, drain, srv, ln, logger) }()
	t.Cleanup(func() {
		cancel()
		<-done
		stop()
	})
	return ln.Addr().String(), logs
}

func TestHostileBodies(t *testing.T) {
	addr, logs := serve(t)
	t.Run("probes", func(t *testing.T) {
		reqbodytest.Run(t, addr, "/refuse", "", time.Second, func(b []byte) error {
			var body struct{ Error, Message string }
			if err := json.Unmarshal(b, &body); err != nil || body.Error != "BAD_REQUEST" || body.Message == "" {
				return fmt.Errorf("want {error: BAD_REQUEST, message}")
			}
			return nil
		})
	})
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("a client's broken body was logged at ERROR:\n%s", logs)
	}
}

// TestOversizeStill413 checks the guard leaves the body limit's answer
// alone: an oversize body is 413, not a broken one.
func TestOversizeStill413(t *testing.T) {
	addr, _ := serve(t)
	resp, err := http.Post("http://"+addr+"/echo", "text/plain", strings.NewReader(strings.Repeat("a", 2048)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
}

// TestTransferEncodingClosesTheConnection sends, on one connection,
// requests framed in every way net/http accepts: requests with a
// Content-Length body (one with the same Content-Length twice), a bare-LF
// header section, an HTTP/1.0 request with Transfer-Encoding (which
// net/http ignores there) and OPTIONS * (which net/http answers itself)
// are all served, and the connection stays; then a chunked request, with
// extensions and a trailer, is served and answered with Connection: close,
// and the request sent behind it is not.
func TestTransferEncodingClosesTheConnection(t *testing.T) {
	addr, _ := serve(t)
	reqs := []struct{ raw, want string }{
		{"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "5:hello"},
		{"OPTIONS * HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", ""},
		{"GET /one HTTP/1.1\nHost: a\n\n", "got /one"},
		{"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nxyz", "3:xyz"},
		{"POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n", "0:"},
		{"GET /two HTTP/1.1\r\nHost: a\r\n\r\n", "got /two"},
		{"POST /echo HTTP/1.1\r\nHost: a\r\ntransfer-encoding: Chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n", "5:abcde"},
	}
	var all strings.Builder
	for _, r := range reqs {
		all.WriteString(r.raw)
	}
	all.WriteString(reqbodytest.Smuggled + "\r\nHost: a\r\n\r\n")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, all.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for i, r := range reqs {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != r.want {
			t.Errorf("answer %d = %d %q, want 200 %q", i, resp.StatusCode, b, r.want)
		}
		if last := i == len(reqs)-1; resp.Close != last {
			t.Errorf("answer %d: Connection: close %v, want %v", i, resp.Close, last)
		}
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("the connection stayed open after the chunked request's answer: %v (read %q)", err, rest)
	}
	if len(rest) > 0 {
		t.Errorf("after the chunked request the connection carried %q: the request behind it was served", rest)
	}
}
