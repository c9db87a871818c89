package observe

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// traceEnv is the tracing configuration read from the OTEL_* variables.
// The SDK and the exporters can read most of them themselves, but from
// os.Getenv; reading them here, through getenv, keeps the rule that the
// environment comes in only through run's getenv (tests set it per run).
type traceEnv struct {
	off         string // why tracing is off; "" when it is on
	endpoint    string // full URL of the traces endpoint
	protocol    string // "http/protobuf" or "grpc"
	headers     map[string]string
	timeout     time.Duration
	gzip        bool
	service     string
	samplerName string
	sampler     sdktrace.Sampler
	attrs       []attribute.KeyValue // OTEL_RESOURCE_ATTRIBUTES
	batch       []sdktrace.BatchSpanProcessorOption
}

// loadTraceEnv reads the tracing variables; every invalid value is
// reported, naming its variable.
func loadTraceEnv(getenv func(string) string, service string) (traceEnv, error) {
	env := traceEnv{service: service}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		env.service = v
	}
	switch {
	case strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true"):
		env.off = "OTEL_SDK_DISABLED=true"
		return env, nil
	case strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none"):
		env.off = "OTEL_TRACES_EXPORTER=none"
		return env, nil
	}
	var errs []error
	env.protocol = firstOf(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	switch env.protocol {
	case "":
		env.protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	default:
		errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol %q (http/protobuf or grpc)", env.protocol))
	}
	endpoint, err := traceEndpoint(getenv, env.protocol)
	if err != nil {
		errs = append(errs, err)
	}
	if endpoint == "" && err == nil {
		env.off = "no OTEL_EXPORTER_OTLP_ENDPOINT"
		return env, errors.Join(errs...) // an invalid value is an error even with tracing off
	}
	env.endpoint = endpoint
	env.headers, err = parseKeyValues("OTEL_EXPORTER_OTLP_HEADERS", firstOf(getenv, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"))
	errs = append(errs, err)
	env.timeout, err = envMillis(getenv, "OTEL_EXPORTER_OTLP_TIMEOUT")
	errs = append(errs, err)
	if v := firstOf(getenv, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); v != "" && v != "none" {
		env.gzip = v == "gzip"
		if !env.gzip {
			errs = append(errs, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION: unsupported compression %q (gzip or none)", v))
		}
	}
	env.samplerName, env.sampler, err = traceSampler(getenv)
	errs = append(errs, err)
	attrs, err := parseKeyValues("OTEL_RESOURCE_ATTRIBUTES", getenv("OTEL_RESOURCE_ATTRIBUTES"))
	errs = append(errs, err)
	for k, v := range attrs {
		env.attrs = append(env.attrs, attribute.String(k, v))
	}
	if name := attrs["service.name"]; name != "" && strings.TrimSpace(getenv("OTEL_SERVICE_NAME")) == "" {
		env.service = name // OTEL_SERVICE_NAME wins over it, it over the default
	}
	env.batch, err = batchOptions(getenv)
	errs = append(errs, err)
	return env, errors.Join(errs...)
}

// firstOf returns the first of the variables that is set, trimmed.
func firstOf(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// traceEndpoint returns the traces endpoint URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// as it is, or OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended for
// http/protobuf (the OTLP exporter specification); "" when neither is set.
func traceEndpoint(getenv func(string) string, protocol string) (string, error) {
	name, raw := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if raw == "" {
		name, raw = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the value: it may hold credentials.
		return "", fmt.Errorf("%s: not an http:// or https:// URL", name)
	}
	if name == "OTEL_EXPORTER_OTLP_ENDPOINT" && protocol != "grpc" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// endpointForLog is the endpoint without userinfo, path or query.
func (env traceEnv) endpointForLog() string {
	u, err := url.Parse(env.endpoint)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// traceSampler returns OTEL_TRACES_SAMPLER's sampler, with
// OTEL_TRACES_SAMPLER_ARG as the ratio where it takes one.
func traceSampler(getenv func(string) string) (string, sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	if name == "" {
		name = "parentbased_always_on"
	}
	ratio := 1.0
	if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return name, nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: invalid ratio %q (0 to 1)", arg)
		}
		ratio = r
	}
	switch name {
	case "always_on":
		return name, sdktrace.AlwaysSample(), nil
	case "always_off":
		return name, sdktrace.NeverSample(), nil
	case "traceidratio":
		return name, sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_always_on":
		return name, sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return name, sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return name, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return name, nil, fmt.Errorf("OTEL_TRACES_SAMPLER: unsupported sampler %q", name)
}

// parseKeyValues parses a W3C-baggage-like list, key1=value1,key2=value2,
// with percent-encoded values (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS).
// Errors name the variable, not the value: headers hold credentials.
func parseKeyValues(name, list string) (map[string]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	kv := map[string]string{}
	for i, item := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: item %d is not key=value", name, i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: item %d: invalid percent-encoding", name, i+1)
		}
		kv[k] = dv
	}
	return kv, nil
}

// envMillis reads a duration in milliseconds; 0 when unset.
func envMillis(getenv func(string) string, name string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: invalid milliseconds %q", name, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// batchOptions reads OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (ms),
// OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
func batchOptions(getenv func(string) string) ([]sdktrace.BatchSpanProcessorOption, error) {
	var opts []sdktrace.BatchSpanProcessorOption
	var errs []error
	for _, d := range []struct {
		name string
		opt  func(time.Duration) sdktrace.BatchSpanProcessorOption
	}{{"OTEL_BSP_SCHEDULE_DELAY", sdktrace.WithBatchTimeout}, {"OTEL_BSP_EXPORT_TIMEOUT", sdktrace.WithExportTimeout}} {
		v, err := envMillis(getenv, d.name)
		errs = append(errs, err)
		if v > 0 {
			opts = append(opts, d.opt(v))
		}
	}
	for _, n := range []struct {
		name string
		opt  func(int) sdktrace.BatchSpanProcessorOption
	}{{"OTEL_BSP_MAX_QUEUE_SIZE", sdktrace.WithMaxQueueSize}, {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", sdktrace.WithMaxExportBatchSize}} {
		v := strings.TrimSpace(getenv(n.name))
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(v)
		if err != nil || i <= 0 {
			errs = append(errs, fmt.Errorf("%s: invalid size %q", n.name, v))
			continue
		}
		opts = append(opts, n.opt(i))
	}
	return opts, errors.Join(errs...)
}

// newExporter returns the OTLP exporter for env's protocol. Neither
// exporter connects here: the first export does.
func newExporter(ctx context.Context, env traceEnv) (sdktrace.SpanExporter, error) {
	if env.protocol == "grpc" {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(env.endpoint)}
		if env.headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(env.headers))
		}
		if env.timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(env.timeout))
		}
		if env.gzip {
			opts = append(opts, otlptracegrpc.WithCompressor("gzip"))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(env.endpoint)}
	if env.headers != nil {
		opts = append(opts, otlptracehttp.WithHeaders(env.headers))
	}
	if env.timeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(env.timeout))
	}
	if env.gzip {
		opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	return otlptracehttp.New(ctx, opts...)
}

// newResource describes the service: OTEL_RESOURCE_ATTRIBUTES, then
// service.name (OTEL_SERVICE_NAME or the default) and service.version,
// and the SDK's own attributes.
func newResource(ctx context.Context, env traceEnv, version string) (*resource.Resource, error) {
	attrs := append(env.attrs,
		attribute.String("service.name", env.service),
		attribute.String("service.version", version))
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	return res, nil
}
