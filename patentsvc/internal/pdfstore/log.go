package pdfstore

import (
	"log/slog"
	"slices"

	"github.com/gatewayapis/shared/redact"
)

// retryLogger hands retryablehttp's messages to slog without the parts of
// a link that may carry secrets (userinfo, query, fragment: signed storage
// URLs put their signature in the query), with the house key "err" for
// errors. A failed attempt is logged at WARN: Fetch's caller decides
// whether the download as a whole is an error.
type retryLogger struct{ l *slog.Logger }

func (r retryLogger) Error(msg string, kv ...any) { r.l.Warn(msg, redactKV(kv)...) }
func (r retryLogger) Warn(msg string, kv ...any)  { r.l.Warn(msg, redactKV(kv)...) }
func (r retryLogger) Info(msg string, kv ...any)  { r.l.Info(msg, redactKV(kv)...) }
func (r retryLogger) Debug(msg string, kv ...any) { r.l.Debug(msg, redactKV(kv)...) }

// redactKV rewrites retryablehttp's key-value pairs with shared/redact's
// rules: "url" values and the URL inside "request" descriptions ("GET
// <url> (status: 500)") lose everything but scheme, host and path; errors
// lose the URL *url.Error embeds, and the peer's address.
func redactKV(kv []any) []any {
	out := slices.Clone(kv)
	for i := 0; i+1 < len(out); i += 2 {
		key, _ := out[i].(string)
		switch v := out[i+1].(type) {
		case error:
			if key == "error" {
				out[i] = "err"
			}
			out[i+1] = redact.Error(v)
		case string:
			switch key {
			case "url":
				out[i+1] = redact.URL(v)
			case "request":
				out[i+1] = redact.Links(v)
			}
		}
	}
	return out
}
