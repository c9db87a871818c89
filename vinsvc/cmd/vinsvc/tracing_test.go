package main

import (
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/shared/observe/otlptest"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// The gateway's span, as its traceparent header sends it (sampled).
const (
	gatewayTraceID = "0af7651916cd43dd8448eb211c80319c"
	gatewaySpanID  = "b7ad6b7169203331"
)

func hexID(b []byte) string { return hex.EncodeToString(b) }

// TestRunTracing runs the service with an OTLP/HTTP receiver as its
// collector and checks the span tree of a VIN miss: the gateway's span →
// the server span → the cache lookup and the vPIC attempt, one trace id,
// and vPIC receiving that trace id in traceparent.
func TestRunTracing(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	up := vpictest.New(t)
	base, stop, logs := start(t, map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "e2e-proxy-secret-16", "VPIC_BASE_URL": up.BaseURL(),
		"CACHE_PATH": filepath.Join(t.TempDir(), "vincache.db"), "UPSTREAM_CHECK_INTERVAL": "1h",
		"VPIC_SNAPSHOT_MODE":          "off",
		"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL,
		"OTEL_BSP_SCHEDULE_DELAY":     "100",
	})
	// Not vpic.ProbeVIN: the health probe decodes that one at start-up, in
	// a trace of its own, and may reach vPIC after the request does.
	resp, body := get(t, base+"/v1/decode?vin="+vpictest.VINVWTiguan, map[string]string{
		"X-Gateway-Proxy-Secret": "e2e-proxy-secret-16", "X-Gateway-Subscription": "PRO", "X-Gateway-User": "e2e",
		"traceparent": "00-" + gatewayTraceID + "-" + gatewaySpanID + "-01",
	})
	if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "MISS" {
		t.Fatalf("decode = %d %s (X-Cache %q), want 200 MISS", resp.StatusCode, body, resp.Header.Get("X-Cache"))
	}

	// Exported in the background, within the batch delay.
	inTrace := func(spans []otlptest.Span) []otlptest.Span {
		var out []otlptest.Span
		for _, s := range spans {
			if hexID(s.TraceId) == gatewayTraceID {
				out = append(out, s)
			}
		}
		return out
	}
	named := func(spans []otlptest.Span, name string) []otlptest.Span {
		var out []otlptest.Span
		for _, s := range spans {
			if s.Name == name {
				out = append(out, s)
			}
		}
		return out
	}
	early := recv.WaitFor(5*time.Second, func(spans []otlptest.Span) bool {
		return len(named(inTrace(spans), "GET /v1/decode")) == 1
	})
	if len(named(inTrace(early), "GET /v1/decode")) != 1 {
		t.Error("the server span was not exported within 5s (OTEL_BSP_SCHEDULE_DELAY=100)")
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v, want nil\n%s", err, logs)
	}
	spans := inTrace(recv.Spans()) // with what the shutdown flushed

	servers := named(spans, "GET /v1/decode")
	if len(servers) != 1 {
		t.Fatalf("server spans GET /v1/decode in the gateway's trace = %d, want 1; spans: %v", len(servers), spanNames(spans))
	}
	server := servers[0]
	if hexID(server.ParentSpanId) != gatewaySpanID {
		t.Errorf("server span's parent = %s, want the gateway's span %s", hexID(server.ParentSpanId), gatewaySpanID)
	}
	if server.Resource["service.name"] != "vinsvc" {
		t.Errorf("service.name = %q, want vinsvc", server.Resource["service.name"])
	}
	if v, _ := server.Attr("http.route"); v != "/v1/decode" {
		t.Errorf("http.route = %q, want /v1/decode", v)
	}
	if v, _ := server.Attr("http.response.status_code"); v != "200" {
		t.Errorf("http.response.status_code = %q, want 200", v)
	}

	// Under the server span (directly or through the decoder's spans): the
	// cache lookup, a miss, and one vPIC attempt.
	under := func(s otlptest.Span) bool {
		byID := map[string]otlptest.Span{}
		for _, x := range spans {
			byID[hexID(x.SpanId)] = x
		}
		for p := hexID(s.ParentSpanId); p != ""; p = hexID(byID[p].ParentSpanId) {
			if p == hexID(server.SpanId) {
				return true
			}
			if _, ok := byID[p]; !ok {
				return false
			}
		}
		return false
	}
	caches := named(spans, "cache.local.get")
	if len(caches) == 0 || !under(caches[0]) {
		t.Fatalf("no cache.local.get span under the server span; spans: %v", spanNames(spans))
	}
	if hit, _ := caches[0].Attr("cache.hit"); hit != "false" {
		t.Errorf("cache.hit = %q, want false for a new VIN", hit)
	}
	clients := named(spans, "GET")
	if len(clients) != 1 || !under(clients[0]) {
		t.Fatalf("vPIC client spans under the server span = %d, want 1; spans: %v", len(clients), spanNames(spans))
	}
	client := clients[0]
	if u, _ := client.Attr("url.full"); !strings.HasPrefix(u, up.BaseURL()+"/") || strings.Contains(u, "?") {
		t.Errorf("url.full = %q, want vPIC's URL without a query", u)
	}
	if v, _ := client.Attr("http.response.status_code"); v != "200" {
		t.Errorf("client http.response.status_code = %q, want 200", v)
	}

	// vPIC got the trace, with the client span as the parent.
	var sent []string
	headers := up.Headers()
	for i, c := range up.Calls() {
		if len(c.VINs) == 1 && c.VINs[0] == vpictest.VINVWTiguan {
			sent = append(sent, headers[i].Get("traceparent"))
		}
	}
	if len(sent) != 1 {
		t.Fatalf("vPIC calls for %s = %d, want 1 (traceparents %q)", vpictest.VINVWTiguan, len(sent), sent)
	}
	if want := "00-" + gatewayTraceID + "-" + hexID(client.SpanId) + "-01"; sent[0] != want {
		t.Errorf("vPIC received traceparent %q, want %q", sent[0], want)
	}

	// The access line carries the trace.
	if !strings.Contains(logs.String(), `"trace_id":"`+gatewayTraceID+`"`) {
		t.Errorf("no log line carries the gateway's trace id:\n%s", logs)
	}
}

// TestRunTracingOff: without an endpoint one line says tracing is off and
// nothing is exported or propagated.
func TestRunTracingOff(t *testing.T) {
	up := vpictest.New(t)
	base, stop, logs := start(t, map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "e2e-proxy-secret-16", "VPIC_BASE_URL": up.BaseURL(),
		"CACHE_PATH": filepath.Join(t.TempDir(), "vincache.db"), "UPSTREAM_CHECK_INTERVAL": "1h",
		"VPIC_SNAPSHOT_MODE": "off",
	})
	resp, body := get(t, base+"/v1/decode?vin="+vpictest.VINHondaAccord, map[string]string{
		"X-Gateway-Proxy-Secret": "e2e-proxy-secret-16", "X-Gateway-Subscription": "PRO", "X-Gateway-User": "e2e",
		"traceparent": "00-" + gatewayTraceID + "-" + gatewaySpanID + "-01",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("decode = %d %s, want 200", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v, want nil\n%s", err, logs)
	}
	if n := strings.Count(logs.String(), `"msg":"tracing off"`); n != 1 {
		t.Errorf("lines saying tracing is off = %d, want 1\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "trace_id") || strings.Contains(logs.String(), "tracing on") {
		t.Errorf("tracing off, but the log mentions a trace:\n%s", logs)
	}
	for _, h := range up.Headers() {
		if tp := h.Get("traceparent"); tp != "" {
			t.Errorf("tracing off, but vPIC received traceparent %q", tp)
		}
	}
}

func spanNames(spans []otlptest.Span) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name + "(" + hexID(s.SpanId)[:4] + "<" + hexID(s.ParentSpanId) + ")"
	}
	return names
}
