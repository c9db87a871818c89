package webhook

import (
	"net/http"
	"time"
)

// SetTransport replaces d's HTTP transport. Tests route Slack-looking URLs
// (hooks.slack.com cannot be an httptest host) to a local receiver with it,
// so that format detection runs on the real URL.
func SetTransport(d *Dispatcher, rt http.RoundTripper) { d.client.Transport = rt }

// SetClock replaces d's clock (webhook-timestamp, default event times).
// Call it before Send and Run.
func SetClock(d *Dispatcher, now func() time.Time) { d.now = now }
