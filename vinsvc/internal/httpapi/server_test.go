package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const (
	secret         = "test-proxy-secret"
	previousSecret = "previous-proxy-secret" // accepted too: a rotation in progress
)

// env is a whole service wired as run wires it, with a real bbolt cache, a
// real vPIC client and a fake vPIC server over loopback.
type env struct {
	e       *echo.Echo
	up      *vpictest.Server
	cache   *cache.Cache
	dec     *decoding.Service
	mon     *vpic.Monitor
	clk     *clocktest.Clock
	reg     *prometheus.Registry
	logs    *syncbuf.Buffer
	limiter *ratelimit.Limiter
}

type option func(*options)

type options struct {
	quiet   bool // discard logs (benchmarks)
	limits  string
	retries int
	timeout time.Duration
	decoder httpapi.Decoder
	snap    decoding.Snapshot
	mode    vin.SnapshotMode
	shared  httpapi.SharedState
	demo    bool
	noDocs  bool // DOCS_ENABLED=false
}

// fixedShared is a Redis whose state is fixed.
type fixedShared string

func (f fixedShared) State(context.Context) string { return string(f) }

func withShared(s httpapi.SharedState) option { return func(o *options) { o.shared = s } }

// demo marks the server as make demo's (health says demo: true).
func demo() option { return func(o *options) { o.demo = true } }

// withoutDocs turns the API reference off (DOCS_ENABLED=false).
func withoutDocs() option { return func(o *options) { o.noDocs = true } }

func quiet() option                        { return func(o *options) { o.quiet = true } }
func withLimits(s string) option           { return func(o *options) { o.limits = s } }
func withRetries(n int) option             { return func(o *options) { o.retries = n } }
func withTimeout(d time.Duration) option   { return func(o *options) { o.timeout = d } }
func withDecoder(d httpapi.Decoder) option { return func(o *options) { o.decoder = d } }

// withSnapshot gives the decoder a snapshot in mode (fallback on failure
// only: no delay).
func withSnapshot(s decoding.Snapshot, mode vin.SnapshotMode) option {
	return func(o *options) { o.snap, o.mode = s, mode }
}

func newEnv(t testing.TB, opts ...option) *env {
	t.Helper()
	o := options{limits: "off", timeout: 2 * time.Second, mode: vin.SnapshotOff, shared: fixedShared("disabled")}
	for _, f := range opts {
		f(&o)
	}
	logs := &syncbuf.Buffer{}
	var w io.Writer = logs
	if o.quiet {
		w = io.Discard
	}
	logger := slog.New(slog.NewJSONHandler(w, nil))
	clk := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	up := vpictest.New(t)
	c, err := cache.Open(filepath.Join(t.TempDir(), "vincache.db"), 90*24*time.Hour, logger, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	reg := observe.NewRegistry()
	client := vpic.NewClient(up.BaseURL(), o.timeout, o.retries, 1000, logger, vpic.NewMetrics(reg))
	dec := decoding.Compose(c, client, decoding.NewSnapshots(o.snap, o.mode, 24*time.Hour, logger), 0, client.MaxCallDuration(), logger, clk.Now)
	mon := vpic.NewMonitor(client.Ping, o.timeout, logger, clk.Now)
	plans, err := ratelimit.Parse(o.limits, ratelimit.Limit{N: 60, Per: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var lim *ratelimit.Limiter
	if plans != nil {
		lim = ratelimit.New(plans, clk.Now)
	}
	var d httpapi.Decoder = dec
	if o.decoder != nil {
		d = o.decoder
	}
	started := clk.Now().Add(-time.Hour)
	e := httpapi.NewServer(logger,
		httpapi.Options{ProxySecrets: []string{secret, previousSecret}, Demo: o.demo, Docs: !o.noDocs},
		httpapi.Deps{Decoder: d, Cache: c, Limiter: lim, Upstream: mon, Shared: o.shared, Registry: reg, Started: started, Now: clk.Now})
	return &env{e: e, up: up, cache: c, dec: dec, mon: mon, clk: clk, reg: reg, logs: logs, limiter: lim}
}

type request struct {
	method  string
	target  string
	body    string
	headers map[string]string
	noAuth  bool
}

// httpRequest builds the request that do sends; each call gives a fresh one
// (the OpenAPI conformance test validates a twin of what the server got).
func (r request) httpRequest() *http.Request {
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.target, body)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if !r.noAuth {
		req.Header.Set("X-Gateway-Proxy-Secret", secret)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	return req
}

func (en *env) do(t testing.TB, r request) *httptest.ResponseRecorder {
	t.Helper()
	req := r.httpRequest()
	rec := httptest.NewRecorder()
	en.e.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id header", req.Method, r.target)
	}
	return rec
}

func decode(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
}

// golden compares body, indented, with testdata/name.golden.
func golden(t testing.TB, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", name, err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/httpapi -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s: body differs from %s\ngot:\n%s\nwant:\n%s", name, path, buf.Bytes(), want)
	}
}

type errBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// wantError checks status, error code and that the body is exactly the
// Error shape with status equal to the HTTP status.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) errBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var raw map[string]any
	decode(t, rec, &raw)
	if len(raw) != 3 {
		t.Errorf("error body %s has %d fields, want exactly error, message, status", rec.Body, len(raw))
	}
	var b errBody
	decode(t, rec, &b)
	if b.Error != code || b.Status != status || b.Message == "" {
		t.Errorf("error body = %+v, want error %s, status %d and a message", b, code, status)
	}
	return b
}

func (en *env) cached(t testing.TB, v string) bool {
	t.Helper()
	_, ok, err := en.cache.Get(context.Background(), v, false)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
