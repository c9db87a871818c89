// Package shared is the root of the workspace's shared module. It holds no
// code itself: its packages are the error and middleware helpers that both
// services use, and nothing else belongs here.
//
//   - httperr: the error type handlers return and the Echo error handler that
//     renders it through a service-specific renderer.
//   - requestid: the X-Request-Id middleware and the request-scoped logger.
//   - observe: the access log, Prometheus HTTP metrics and panic recovery.
//   - graceful: serving an http.Server until a context ends, then draining it.
//   - redact: text of outbound HTTP errors without URLs, hosts or addresses.
package shared
