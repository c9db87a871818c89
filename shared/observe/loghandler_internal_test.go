package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/shared/requestid"
)

// FuzzAccessLine: the access line NewLogHandler writes is, byte for byte,
// the line slog's JSON handler behind TraceLogHandler writes for the same
// record, whatever the strings (quotes, control characters, invalid UTF-8,
// U+2028), status, latency, time zone and span.
//
//	go test -run '^$' -fuzz FuzzAccessLine ./observe
func FuzzAccessLine(f *testing.F) {
	f.Add("8a1f0c2e-4d6b-4c1a-9e2f-0b7d5c3a1e9f", "GET", "/v1/decode", "", 200, int64(1234), int64(1764100000123456789), 0, false, []byte("0123456789abcdef01234567"))
	f.Add("id", "POST", UnmatchedRoute, "/nowhere/\"quoted\"\n\t\x01\u2028\u2029<&>\xff", 404, int64(0), int64(0), 60, true, []byte{1})
	f.Add("", "_OTHER", "/analyze/:company_name", "", 503, int64(7_000_000_000), int64(-1), -330, true, []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Add("ünïcödé", "GET", "/v1/decode", "", 200, int64(-5), int64(253402300799999999), 840, false, []byte{})
	f.Fuzz(func(t *testing.T, requestID, method, route, path string, status int, latencyMicros, unixNano int64, zoneMinutes int, sampled bool, ids []byte) {
		// A clock's time: years 1678-2262, as time.Unix(0, n) gives.
		end := time.Unix(0, unixNano).In(time.FixedZone("", (zoneMinutes%(24*60))*60))
		latency := time.Duration(latencyMicros%(1<<52)) * time.Microsecond
		l := accessLine{end: end, level: slog.LevelInfo, requestID: requestID, method: method, route: route,
			status: status, latency: latency, path: path}
		if status >= 500 {
			l.level = slog.LevelWarn
		}
		var sc trace.SpanContextConfig
		copy(sc.TraceID[:], ids)
		if len(ids) > 16 {
			copy(sc.SpanID[:], ids[16:])
		}
		if sampled {
			sc.TraceFlags = trace.FlagsSampled
		}
		ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(sc))

		var want bytes.Buffer
		if err := TraceLogHandler(slog.NewJSONHandler(&want, nil)).Handle(ctx, l.record()); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		h := NewLogHandler(&got, nil).(*logHandler)
		if err := h.writeAccess(ctx, &l); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("access line differs from slog's:\n got %s\nwant %s", got.String(), want.String())
		}
	})
}

// TestMiddlewareWritesAccessLineItself: through NewLogHandler's handler
// the access line does not go through slog (the inner handler here
// records every record it is given); every other line does.
func TestMiddlewareWritesAccessLineItself(t *testing.T) {
	var out bytes.Buffer
	inner := &recordingHandler{}
	h := &logHandler{traceLogHandler: traceLogHandler{inner}, w: &lockedWriter{w: &out}}
	logger := slog.New(h)
	e := echo.New()
	e.Use(requestid.Middleware(logger))
	e.Use(Middleware(logger, NewMetrics(prometheus.NewRegistry())))
	e.GET("/items/:id", func(c echo.Context) error {
		logger.Info("in the handler")
		return c.NoContent(http.StatusNoContent)
	})
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/1", nil))
	if !strings.Contains(out.String(), `"msg":"request","request_id":`) || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("written directly: %q, want the one access line", out.String())
	}
	if len(inner.msgs) != 1 || inner.msgs[0] != "in the handler" {
		t.Errorf("through slog: %q, want only the handler's own line", inner.msgs)
	}
}

type recordingHandler struct{ msgs []string }

func (*recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (r *recordingHandler) Handle(_ context.Context, rec slog.Record) error {
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordingHandler) WithGroup(string) slog.Handler      { return r }

// FuzzJSONFloat: appendJSONFloat writes a finite float64 as encoding/json
// (and so slog's JSON handler) does.
func FuzzJSONFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 0.001, 1.5, 1e-6, 9.99e-7, 1e-7, 5e-324, 1e20, 1e21, 123456.789, -2.5e-9, math.MaxFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Skip("not JSON")
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, v); string(got) != string(want) {
			t.Fatalf("appendJSONFloat(%v) = %s, want %s", v, got, want)
		}
	})
}

// BenchmarkAccessLine: the access line through slog's JSON handler (as
// before NewLogHandler) and through writeAccess.
//
//	go test -run '^$' -bench AccessLine ./observe
func BenchmarkAccessLine(b *testing.B) {
	l := accessLine{end: time.Now(), level: slog.LevelInfo, requestID: "8a1f0c2e-4d6b-4c1a-9e2f-0b7d5c3a1e9f",
		method: "GET", route: "/v1/decode", status: 200, latency: 87 * time.Microsecond}
	ctx := context.Background()
	b.Run("slog", func(b *testing.B) {
		h := TraceLogHandler(slog.NewJSONHandler(discard{}, nil))
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, l.record())
		}
	})
	b.Run("writeAccess", func(b *testing.B) {
		h := NewLogHandler(discard{}, nil).(*logHandler)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.writeAccess(ctx, &l)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
