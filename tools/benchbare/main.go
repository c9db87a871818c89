// Command benchbare is the helper of tools/bench-wrk.sh (make bench-wrk):
// the bare net/http handler that vinsvc is measured against, the fake vPIC
// that fills vinsvc's cache, and a free-port finder. It imports nothing of
// the project's, so it lives in the tools module, outside the services'
// architecture rules.
//
// Usage:
//
//	benchbare bare ADDR RESPONSE   serve the HTTP response in file RESPONSE
//	                               (as `curl -si` prints it: status line,
//	                               headers, body) to every request, checking
//	                               nothing
//	benchbare echo ADDR RESPONSE   the same response from an Echo route
//	                               (GET /v1/decode, no middleware) on a
//	                               server with vinsvc's timeouts: what the
//	                               framework and the production server
//	                               settings cost before any of the
//	                               service's own work
//	benchbare vpic ADDR FIXTURE    answer every request with the vPIC JSON
//	                               in file FIXTURE
//	benchbare ports N              print N free TCP ports of 127.0.0.1
//	benchbare sink ADDR            an OTLP/HTTP collector that accepts and
//	                               drops every export (POST /v1/traces: 200,
//	                               an empty ExportTraceServiceResponse)
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchbare:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 2 && args[0] == "ports" {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		return freePorts(n, stdout)
	}
	if len(args) == 2 && args[0] == "sink" {
		return serve(args[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK) // an empty body is an empty response message
		}))
	}
	if len(args) != 3 {
		return errors.New("usage: benchbare bare|echo ADDR RESPONSE | vpic ADDR FIXTURE | ports N | sink ADDR")
	}
	raw, err := os.ReadFile(args[2])
	if err != nil {
		return err
	}
	var h http.Handler
	switch args[0] {
	case "bare":
		h, err = bare(raw)
	case "echo":
		if h, err = bare(raw); err == nil {
			return serveEcho(args[1], h)
		}
	case "vpic":
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(raw)
		})
	default:
		err = fmt.Errorf("unknown mode %q", args[0])
	}
	if err != nil {
		return err
	}
	return serve(args[1], h)
}

func serve(addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// serveEcho serves h as Echo's GET /v1/decode handler, with the timeouts
// vinsvc's server has (shared/graceful.NewServer and vinsvc's main: header
// and whole-request reads 10 s, writes bounded, idle connections 120 s).
// net/http then sets a read deadline and a write deadline per request and
// an idle deadline between requests, where bare's server sets only the
// header timeout.
func serveEcho(addr string, h http.Handler) error {
	e := echo.New()
	e.GET("/v1/decode", echo.WrapHandler(h))
	srv := &http.Server{Addr: addr, Handler: e, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	return srv.ListenAndServe()
}

// bare returns a handler that writes the captured response's status,
// headers and body, whatever the request. Date and Content-Length are left
// to net/http, which writes them as it does for vinsvc.
func bare(raw []byte) (http.Handler, error) {
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		return nil, fmt.Errorf("read the captured response: %w", err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	header := res.Header.Clone()
	header.Del("Date")
	header.Del("Content-Length")
	status := res.StatusCode
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		w.WriteHeader(status)
		w.Write(body)
	}), nil
}

// freePorts prints n distinct ports the kernel hands out for 127.0.0.1:0,
// holding them all open until every one is chosen.
func freePorts(n int, stdout io.Writer) error {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		fmt.Fprintln(stdout, ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
