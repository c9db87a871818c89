package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
)

// The event types the service sends (decisions.md, "Webhooks").
const (
	EventJobCompleted = "job.completed"
	EventAlert        = "alert.patent_count_change"
	// EventNewPatents is the new_patents alert's (decisions.md, "patentsvc:
	// what changed, and what the portfolio covers").
	EventNewPatents = "alert.new_patents"
)

// Delivery defaults (decisions.md, "durable webhooks").
const (
	// AttemptTimeout bounds one delivery attempt when WEBHOOK_TIMEOUT is
	// not set; the Standard Webhooks spec suggests 15 to 30 s.
	AttemptTimeout = 15 * time.Second
	// Workers is how many attempts one process makes at once (the queue's
	// webhook workers).
	Workers = 4
	// UnitMargin is how much longer than an attempt's timeout the queue
	// lets a delivery's unit run: the attempt times out first and its
	// outcome is recorded.
	UnitMargin = 5 * time.Second
	// DeliveredRetention is how long a delivered row is kept (for the
	// admin listing) before it is pruned.
	DeliveredRetention = 7 * 24 * time.Hour
	// FailedRetention is how long a failed row is kept (an admin may retry
	// it meanwhile), counted from its creation.
	FailedRetention = 30 * 24 * time.Hour
	// PruneEvery is how often gocron has Prune delete old rows.
	PruneEvery = time.Hour
)

// DefaultSchedule is WEBHOOK_RETRY_SCHEDULE's default: the waits before
// the 2nd to 8th attempts (the first is immediate).
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Event is one notification, before it is composed into deliveries.
type Event struct {
	// Type is the event type, EventJobCompleted, EventAlert or
	// EventNewPatents; required.
	Type string
	// Timestamp is when the event happened; now when zero. It is sent in
	// UTC.
	Timestamp time.Time
	// Data is the event's payload, encoded with encoding/json when the
	// deliveries are composed. It should encode to a JSON object; nil is
	// sent as {}.
	Data any
	// Summary is one line of human text for chat formats (Slack's text and
	// first section).
	Summary string
	// Fields are label/value pairs shown in Slack messages.
	Fields []Field
	// Links are linked lines shown in Slack messages after the fields, at
	// most slackMaxLinks (a new_patents alert's patents).
	Links []Link

	id string // the delivery's webhook-id, set per target by compose
}

// Field is a label/value pair of a Slack message.
type Field struct{ Label, Value string }

// Link is a line of a Slack message: Text linked to URL (plain when URL is
// ""), then Note.
type Link struct{ Text, URL, Note string }

// Store keeps the deliveries; store.Deliveries implements it.
type Store interface {
	// Delivery returns a delivery, or patent.ErrNotFound.
	Delivery(ctx context.Context, id string) (patent.Delivery, error)
	// RecordAttempt records an attempt at a pending delivery; it fails (a
	// kind of patent.ErrConflict) when the delivery is no longer pending.
	RecordAttempt(ctx context.Context, id string, a patent.Attempt) error
	// SweepDeliveries gives the pending deliveries without a unit one, and
	// fails those whose unit the queue gave up.
	SweepDeliveries(ctx context.Context, reason string) (queued, failed int64, err error)
	// ReleaseDeadUnits makes the units of its kind that dead replicas were
	// running available again.
	ReleaseDeadUnits(ctx context.Context) (int64, error)
	PendingDeliveries(ctx context.Context) (int64, error)
	PruneDeliveries(ctx context.Context, delivered, failed time.Time) (int64, error)
}

// Config holds the delivery settings.
type Config struct {
	URLs     []string        // WEBHOOK_URLS
	Secret   string          // WEBHOOK_SECRET; empty: nothing is signed
	Timeout  time.Duration   // one attempt (WEBHOOK_TIMEOUT); AttemptTimeout when 0
	Schedule []time.Duration // WEBHOOK_RETRY_SCHEDULE; DefaultSchedule when nil
}

// Dispatcher composes deliveries (stored by the caller in the event's own
// transaction, each with the queue's unit that attempts it) and makes the
// attempts the queue's units ask for, on any replica. It is safe for
// concurrent use.
type Dispatcher struct {
	cfg      Config
	targets  []target
	store    Store
	client   *http.Client
	key      []byte // HMAC key; nil when there is no secret
	logger   *slog.Logger
	now      func() time.Time // replaced by tests (export_test.go)
	base     context.Context  // the metrics' reads run in it
	outcomes *prometheus.CounterVec
}

// target is one configured URL.
type target struct {
	url   string // never logged: Slack URLs carry their token in the path
	host  string // scheme://host, what logs and listings show
	slack bool
}

// New returns a Dispatcher for cfg. URLs that are blank are skipped; URLs
// that are not absolute http(s) URLs are skipped with an ERROR log naming
// their position. logger may be nil. The metrics read the store in
// contexts derived from base.
func New(base context.Context, cfg Config, st Store, logger *slog.Logger) *Dispatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = AttemptTimeout
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultSchedule
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 2
	d := &Dispatcher{
		cfg: cfg, store: st, logger: logger, now: time.Now, base: context.WithoutCancel(base),
		client: &http.Client{
			// A client span per attempt, under the span in the attempt's
			// context (none: deliveries run in the background).
			Transport: observe.TracingTransport(transport, observe.WithoutURLPath()), // a Slack URL's path is its token
			// Standard Webhooks: a 3xx is a failure, never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "patentsvc_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered (2xx), retried (failed, another attempt is scheduled), failed (failed for good: 410 Gone or the retry schedule exhausted).",
		}, []string{"outcome"}),
	}
	for _, o := range []string{"delivered", "retried", "failed"} {
		d.outcomes.WithLabelValues(o) // every series exists from the start
	}
	if cfg.Secret != "" {
		key, err := signingKey(cfg.Secret)
		if err != nil {
			// Start anyway (config owns validation); the receivers will
			// reject the signatures, which is what this line explains.
			logger.Error("WEBHOOK_SECRET starts with whsec_ but the rest is not base64; signing with the raw secret")
			key = []byte(cfg.Secret)
		}
		d.key = key
	}
	d.targets = parseTargets(cfg.URLs, logger)
	return d
}

// parseTargets keeps the usable URLs of WEBHOOK_URLS.
func parseTargets(urls []string, logger *slog.Logger) []target {
	var out []target
	for i, raw := range urls {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			logger.Error("webhook url ignored: not an absolute http(s) url", "entry", i+1)
			continue
		}
		out = append(out, target{url: raw, host: u.Scheme + "://" + u.Host, slack: IsSlack(raw)})
	}
	return out
}

// RegisterMetrics registers the delivery metrics in reg:
// patentsvc_webhook_deliveries_total{outcome} and
// patentsvc_webhook_deliveries_pending (read from the database at scrape
// time, 0 when it does not answer within a second).
func (d *Dispatcher) RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(d.outcomes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "patentsvc_webhook_deliveries_pending",
		Help: "Webhook deliveries stored and not yet delivered or failed, across every replica.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(d.base, time.Second)
		defer cancel()
		n, err := d.store.PendingDeliveries(ctx)
		if err != nil {
			return 0
		}
		return float64(n)
	}))
}

// newID returns "msg_" and a time-ordered unique suffix, as in the
// Standard Webhooks examples.
func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return "msg_" + strings.ReplaceAll(id.String(), "-", "")
}

// AlertDeliveries composes the deliveries of an alert (with its id and
// time), one per configured URL (none without WEBHOOK_URLS), for the
// caller to store with the alert.
func (d *Dispatcher) AlertDeliveries(a patent.Alert) ([]patent.Delivery, error) {
	return d.compose(AlertEvent(a))
}

// JobDeliveries composes the deliveries of a job as it ended, for the
// caller to store with its end.
func (d *Dispatcher) JobDeliveries(j patent.Job) ([]patent.Delivery, error) {
	return d.compose(JobEvent(j))
}

// compose encodes e once per URL, each with a webhook-id of its own (the
// admin endpoints address one delivery by it).
func (d *Dispatcher) compose(e Event) ([]patent.Delivery, error) {
	if len(d.targets) == 0 {
		return nil, nil
	}
	if e.Type == "" {
		return nil, errors.New("webhook event without a type")
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = d.now()
	}
	out := make([]patent.Delivery, 0, len(d.targets))
	for _, t := range d.targets {
		e.id = newID()
		encode := genericBody
		if t.slack {
			encode = slackBody
		}
		body, err := encode(e)
		if err != nil {
			return nil, err
		}
		out = append(out, patent.Delivery{ID: e.id, Event: e.Type, URL: t.url, URLHost: t.host, Payload: body})
	}
	return out, nil
}

// reasonOrphaned is the last_error of a delivery whose unit the queue gave
// up.
const reasonOrphaned = "the processes attempting the delivery stopped or failed each time; retry it from the admin endpoint"

// Sweep resolves the deliveries whose unit stopped (gocron calls it every
// few seconds on every replica; the store makes sweeps at once safe): an
// attempt a dead replica was making is made again at once, with the same
// webhook-id (its session ended, so it is known dead); a pending delivery
// without a unit gets one; one whose unit the queue gave up fails.
func (d *Dispatcher) Sweep(ctx context.Context) {
	n, err := d.store.ReleaseDeadUnits(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		d.logger.Warn("releasing the webhook attempts of dead replicas failed", "err", err.Error())
	case n > 0:
		d.logger.Warn("webhook attempts of dead replicas released to be made again", "count", n)
	}
	queued, failed, err := d.store.SweepDeliveries(ctx, reasonOrphaned)
	switch {
	case err != nil && ctx.Err() == nil:
		d.logger.Warn("sweeping webhook deliveries failed", "err", err.Error())
	case queued > 0 || failed > 0:
		d.logger.Warn("swept webhook deliveries", "queued", queued, "failed", failed)
		d.outcomes.WithLabelValues("failed").Add(float64(failed))
	}
}

// Prune deletes the deliveries delivered more than DeliveredRetention ago
// and those failed more than FailedRetention after their creation (gocron
// calls it every PruneEvery).
func (d *Dispatcher) Prune(ctx context.Context) {
	now := d.now()
	n, err := d.store.PruneDeliveries(ctx, now.Add(-DeliveredRetention), now.Add(-FailedRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		d.logger.Warn("pruning webhook deliveries failed", "err", err.Error())
	case n > 0:
		d.logger.Info("pruned old webhook deliveries", "count", n)
	}
}

// Close closes the idle connections to the receivers.
func (d *Dispatcher) Close() { d.client.CloseIdleConnections() }
