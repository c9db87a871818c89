package webhook

import (
	"net/http"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// SetTransport replaces d's HTTP transport. Tests route Slack-looking URLs
// (hooks.slack.com cannot be an httptest host) to a local receiver with it,
// so that format detection runs on the real URL.
func SetTransport(d *Dispatcher, rt http.RoundTripper) { d.client.Transport = rt }

// SetClock replaces d's clock (webhook-timestamp, event times, retry
// times). Call it before Run.
func SetClock(d *Dispatcher, now func() time.Time) { d.now = now }

// Compose composes e's deliveries as AlertDeliveries and JobDeliveries do.
func Compose(d *Dispatcher, e Event) ([]patent.Delivery, error) { return d.compose(e) }

// StoreOf returns the store d delivers from.
func StoreOf(d *Dispatcher) Store { return d.store }
