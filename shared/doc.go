// Package shared is the root of the workspace's shared module. It holds no
// code itself: its packages are the error and middleware helpers that both
// services use, and their outbound counterpart, the retry rule of their
// HTTP clients; nothing else belongs here.
//
//   - httperr: the error type handlers return and the Echo error handler that
//     renders it through a service-specific renderer.
//   - requestid: the X-Request-Id middleware and the request-scoped logger.
//   - observe: the access log, Prometheus HTTP metrics and panic recovery,
//     the services' JSON log handler (NewLogHandler: trace_id/span_id on
//     a sampled request's lines, the access line written without slog's
//     per-record work) and its batching writer (LogWriter), and
//     OpenTelemetry tracing: SetupTracing from the OTEL_* variables, server
//     spans (TracingScope, through requestid.Middleware) and client spans
//     (TracingTransport).
//   - reqbody: request bodies whose read fails for the client's fault
//     answered 400 (httperr.BodyError), and a request framed by both
//     Content-Length and Transfer-Encoding refused with its connection
//     closed (the connection notes net/http does not keep).
//   - route: route middleware applied once, at registration, not by Echo
//     on every request.
//   - graceful: serving an http.Server until a context ends, then draining it.
//   - redact: the redaction rules: outbound HTTP errors without URLs, hosts
//     or addresses, links without credentials, upstream text without URLs
//     or secrets.
//   - retry: the back-off hook for outbound requests (go-retryablehttp's
//     Backoff): exponential with jitter, or the server's Retry-After.
//   - apidocs: the API reference's handlers: a service's OpenAPI document
//     and an interactive page on it (Swagger UI, embedded, under a strict
//     Content-Security-Policy), given the document and the page's title;
//     each service registers them in its routes.go.
//
// What does not belong here, although both services have one of the same
// shape: the configuration loaders (the settings table, Load(getenv), the
// Secret type, the generated Markdown). They stay repeated in each
// service's internal/config on purpose: each service owns its settings, and
// this module is kept to error and middleware helpers (the design card).
// Nor do the tests' kits (the architecture tests, buffers, service
// starters, the fakes' scaffolding): they are the testkit module's.
package shared
