package observe

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
)

// NewLogHandler returns the services' log handler: slog's JSON handler on
// w at level (nil: INFO), with the trace ids of a sampled request on its lines
// (TraceLogHandler), and a faster way for Middleware to write the access
// line.
//
// Why: the access line is written once per request, and slog's JSON
// handler took a tenth of a cache hit's CPU under load (generic attribute
// handling, and the latency float through encoding/json), more than any
// other part of the service's own work (docs/performance.md). Middleware
// writes it with accessLine instead, which appends exactly the bytes
// slog's JSON handler writes for the same record (FuzzAccessLine holds the
// two equal) without going through slog.Record. Every other line, and the
// access line of a logger derived with With or WithGroup, goes through
// slog as before.
func NewLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	lw := &lockedWriter{w: w}
	return &logHandler{
		traceLogHandler: traceLogHandler{slog.NewJSONHandler(lw, &slog.HandlerOptions{Level: level})},
		w:               lw,
	}
}

// logHandler is NewLogHandler's handler. Both ways to the output write one
// whole line with one Write to w, which serialises them.
type logHandler struct {
	traceLogHandler
	w *lockedWriter
}

// lockedWriter lets one line at a time through to the output, whichever
// way it came (slog's handler locks around its own writes only), so that
// an output not safe for concurrent use gets whole lines.
//
// Even over a LogWriter, which is safe for concurrent use, this lock stays:
// measured under wrk (64 connections, two cores), access lines written
// straight into the LogWriter raised a cache hit's p99 from 13-15 ms to
// 19-21 ms, and with this lock in front of it p99 came back to 12.5-15 ms,
// for 3% of the throughput gained. The requests queue on one lock (which hands itself
// over in order once contended) instead of on the LogWriter's, whose
// holder may be taking a full batch out; whatever the exact cause, the
// lock is what slog's handler had and the tail is the better for it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// accessLine is what the access line says.
type accessLine struct {
	end       time.Time
	level     slog.Level
	requestID string
	method    string
	route     string
	status    int
	latency   time.Duration
	path      string // only for UnmatchedRoute
}

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeAccess writes the access line as slog's JSON handler would write
// the record Middleware builds, with trace_id and span_id when the
// request's span is sampled (TraceLogHandler).
func (h *logHandler) writeAccess(ctx context.Context, l *accessLine) error {
	bp := lineBufs.Get().(*[]byte)
	b := l.appendJSON((*bp)[:0], trace.SpanContextFromContext(ctx))
	_, err := h.w.Write(b)
	if cap(b) <= 4<<10 { // an unmatched path can be long: keep only the usual size
		*bp = b
		lineBufs.Put(bp)
	}
	return err
}

// appendJSON appends the line: slog's JSON handler's layout (time, level,
// msg, then the attributes in order), strings escaped as it escapes them,
// the float as encoding/json writes it.
func (l *accessLine) appendJSON(b []byte, sc trace.SpanContext) []byte {
	b = append(b, `{"time":"`...)
	b = l.end.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = appendJSONString(b, l.level.String())
	b = append(b, `,"msg":"request","request_id":`...)
	b = appendJSONString(b, l.requestID)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, l.method)
	b = append(b, `,"route":`...)
	b = appendJSONString(b, l.route)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"latency_ms":`...)
	b = appendJSONFloat(b, latencyMillis(l.latency))
	if l.route == UnmatchedRoute {
		b = append(b, `,"path":`...)
		b = appendJSONString(b, l.path)
	}
	if sc.IsSampled() {
		tid, sid := sc.TraceID(), sc.SpanID()
		b = append(b, `,"trace_id":"`...)
		b = hex.AppendEncode(b, tid[:])
		b = append(b, `","span_id":"`...)
		b = hex.AppendEncode(b, sid[:])
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// latencyMillis is the access line's latency_ms: whole microseconds, in
// milliseconds.
func latencyMillis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// appendJSONString appends s quoted as slog's JSON handler quotes a
// string: ", \ and control characters escaped (\n, \r, \t by name),
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped; <, > and & as they
// are. (vinsvc's response writer has its own, after encoding/json, which
// also names \b and \f: each copies the encoder its output must equal.)
func appendJSONString(b []byte, s string) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', digits[c>>4], digits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', digits[r&15])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat appends a finite f as encoding/json writes a float64
// (which slog's JSON handler uses for floats): shortest decimal, in
// exponent form below 1e-6 and from 1e21, the exponent without a leading
// zero.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
