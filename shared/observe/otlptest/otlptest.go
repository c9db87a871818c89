// Package otlptest is an OTLP/HTTP trace receiver for tests: an
// httptest.Server that decodes the protobuf export requests with the
// official OTLP types and keeps their spans, so a test can run a service
// with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it and check the span tree
// it exports.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with the resource it came with.
type Span struct {
	*tracepb.Span
	Resource map[string]string // string-valued resource attributes
}

// Attr returns the span attribute key as a string (ints are formatted),
// and whether the span has it.
func (s Span) Attr(key string) (string, bool) {
	return attrValue(s.Attributes, key)
}

// Receiver is an OTLP/HTTP receiver for POST /v1/traces.
type Receiver struct {
	// URL is the base URL, the value for OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string

	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
}

// NewReceiver starts a receiver closed at the end of tb.
func NewReceiver(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var in io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" { // as a collector accepts it (OTEL_EXPORTER_OTLP_COMPRESSION=gzip)
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in = zr
	}
	body, err := io.ReadAll(in)
	var msg collectorpb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range msg.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()], _ = attrValue(rs.GetResource().GetAttributes(), kv.GetKey())
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{Span: s, Resource: res})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Requests returns how many export requests arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers returns the headers of every export request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// WaitFor polls until done(spans) is true or timeout passes, and returns
// the last spans seen.
func (r *Receiver) WaitFor(timeout time.Duration, done func([]Span) bool) []Span {
	deadline := time.Now().Add(timeout)
	for {
		spans := r.Spans()
		if done(spans) || time.Now().After(deadline) {
			return spans
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attrValue(attrs []*commonpb.KeyValue, key string) (string, bool) {
	for _, kv := range attrs {
		if kv.GetKey() != key {
			continue
		}
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue, true
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10), true
		case *commonpb.AnyValue_BoolValue:
			return strconv.FormatBool(v.BoolValue), true
		case *commonpb.AnyValue_DoubleValue:
			return strconv.FormatFloat(v.DoubleValue, 'g', -1, 64), true
		}
		return kv.GetValue().String(), true
	}
	return "", false
}
