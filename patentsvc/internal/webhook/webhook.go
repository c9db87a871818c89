package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
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
)

// Delivery defaults (decisions.md, "durable webhooks").
const (
	// AttemptTimeout bounds one delivery attempt when WEBHOOK_TIMEOUT is
	// not set; the Standard Webhooks spec suggests 15 to 30 s.
	AttemptTimeout = 15 * time.Second
	// DefaultPoll is how often a deliverer looks for due deliveries.
	DefaultPoll = time.Second
	// DefaultWorkers is how many attempts one process makes at once.
	DefaultWorkers = 4
	// DeliveredRetention is how long a delivered row is kept (for the
	// admin listing) before it is pruned.
	DeliveredRetention = 7 * 24 * time.Hour
	// FailedRetention is how long a failed row is kept (an admin may retry
	// it meanwhile), counted from its creation.
	FailedRetention = 30 * 24 * time.Hour
	// pruneEvery is how often a deliverer prunes old rows.
	pruneEvery = time.Hour
	// leaseMargin is what a claim lasts beyond its attempt's timeout.
	leaseMargin = 5 * time.Second
	// releaseTimeout bounds the write that hands back a claim whose
	// attempt shutdown cut short.
	releaseTimeout = time.Second
)

// DefaultSchedule is WEBHOOK_RETRY_SCHEDULE's default: the waits before
// the 2nd to 8th attempts (the first is immediate).
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Event is one notification, before it is composed into deliveries.
type Event struct {
	// Type is the event type, EventJobCompleted or EventAlert; required.
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

	id string // the delivery's webhook-id, set per target by compose
}

// Field is a label/value pair of a Slack message.
type Field struct{ Label, Value string }

// Store keeps the deliveries; *store.Store implements it.
type Store interface {
	// ClaimDeliveries claims up to limit due deliveries for owner until
	// now+lease.
	ClaimDeliveries(ctx context.Context, owner string, limit int, lease time.Duration) ([]patent.Delivery, error)
	// RecordAttempt records an attempt made under owner's claim and
	// releases the claim; it fails (a kind of patent.ErrConflict) when the
	// claim is no longer owner's.
	RecordAttempt(ctx context.Context, id, owner string, a patent.Attempt) error
	// ReleaseDelivery hands a claim back unattempted.
	ReleaseDelivery(ctx context.Context, id, owner string) error
	PendingDeliveries(ctx context.Context) (int64, error)
	PruneDeliveries(ctx context.Context, delivered, failed time.Time) (int64, error)
}

// Config holds the delivery settings.
type Config struct {
	URLs     []string        // WEBHOOK_URLS
	Secret   string          // WEBHOOK_SECRET; empty: nothing is signed
	Timeout  time.Duration   // one attempt (WEBHOOK_TIMEOUT); AttemptTimeout when 0
	Schedule []time.Duration // WEBHOOK_RETRY_SCHEDULE; DefaultSchedule when nil
	Owner    string          // this process's name in claims
	Poll     time.Duration   // DefaultPoll when 0
	Workers  int             // DefaultWorkers when 0
}

// Dispatcher composes deliveries (stored by the caller in the event's own
// transaction) and delivers the stored ones from any replica. It is safe
// for concurrent use.
type Dispatcher struct {
	cfg     Config
	targets []target
	store   Store
	client  *http.Client
	key     []byte // HMAC key; nil when there is no secret
	logger  *slog.Logger
	now     func() time.Time // replaced by tests (export_test.go)

	// life is the context attempts run in: it ends only when Shutdown's
	// deadline passes, not when Run's context does, so an attempt in
	// flight at the signal may finish within SHUTDOWN_TIMEOUT.
	life     context.Context
	kill     context.CancelFunc
	slots    chan struct{} // one per attempt in flight
	wake     chan struct{}
	closing  chan struct{}
	mu       sync.Mutex // orders inflight.Add before Shutdown's Wait
	closed   bool       // Shutdown has begun; guarded by mu
	inflight sync.WaitGroup
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
// their position. logger may be nil. Attempts run in a context derived
// from base: its values carry over, its cancellation does not.
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
	cfg.Poll = cmpOr(cfg.Poll, DefaultPoll)
	cfg.Workers = max(cfg.Workers, 0)
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 2
	d := &Dispatcher{
		cfg: cfg, store: st, logger: logger, now: time.Now,
		client: &http.Client{
			// A client span per attempt, under the span in the attempt's
			// context (none: deliveries run in the background).
			Transport: observe.TracingTransport(transport, observe.WithoutURLPath()), // a Slack URL's path is its token
			// Standard Webhooks: a 3xx is a failure, never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		slots: make(chan struct{}, cfg.Workers), wake: make(chan struct{}, 1), closing: make(chan struct{}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "patentsvc_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered (2xx), retried (failed, another attempt is scheduled), failed (failed for good: 410 Gone or the retry schedule exhausted).",
		}, []string{"outcome"}),
	}
	for _, o := range []string{"delivered", "retried", "failed"} {
		d.outcomes.WithLabelValues(o) // every series exists from the start
	}
	d.life, d.kill = context.WithCancel(context.WithoutCancel(base))
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

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
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
		ctx, cancel := context.WithTimeout(d.life, time.Second)
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

// AlertDeliveries composes the deliveries of a stored alert, one per
// configured URL (none without WEBHOOK_URLS). It is a
// patent.Deliveries[patent.Alert] for the store's CreateAlert.
func (d *Dispatcher) AlertDeliveries(a patent.Alert) ([]patent.Delivery, error) {
	return d.compose(AlertEvent(a))
}

// JobDeliveries composes the deliveries of a job that ended. It is a
// patent.Deliveries[patent.Job] for the store's FinishJob.
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

// Run delivers the due deliveries until ctx ends or Shutdown begins:
// every Poll (and at once when an attempt ends) it claims as many as it
// has free workers and attempts each in a goroutine of its own. It prunes
// old rows every hour. Attempts in flight when ctx ends go on; Shutdown
// bounds them.
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	var pruned time.Time
	for {
		d.pump(ctx)
		if now := d.now(); now.Sub(pruned) >= pruneEvery {
			d.prune(ctx)
			pruned = now
		}
		select {
		case <-ctx.Done():
			return
		case <-d.closing:
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// pump claims due deliveries while workers are free and starts them.
func (d *Dispatcher) pump(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case <-d.closing:
			return
		default:
		}
		free := cap(d.slots) - len(d.slots)
		if free == 0 {
			return
		}
		ds, err := d.store.ClaimDeliveries(ctx, d.cfg.Owner, free, d.lease())
		if err != nil {
			if ctx.Err() == nil {
				d.logger.Warn("claiming webhook deliveries failed", "err", err.Error())
			}
			return
		}
		for _, del := range ds {
			d.start(del)
		}
		if len(ds) < free {
			return
		}
	}
}

// start attempts a claimed delivery in a goroutine of its own, or hands
// the claim back when Shutdown has begun.
func (d *Dispatcher) start(del patent.Delivery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.life), releaseTimeout)
		defer cancel()
		_ = d.store.ReleaseDelivery(ctx, del.ID, d.cfg.Owner) // else it is due when the claim lapses
		return
	}
	d.slots <- struct{}{} // never blocks: at most the free slots were claimed
	d.inflight.Add(1)
	go d.deliver(del)
}

// lease is how long a claim lasts: the attempt's timeout and a margin, so
// a claim never lapses while its attempt runs.
func (d *Dispatcher) lease() time.Duration { return d.cfg.Timeout + leaseMargin }

func (d *Dispatcher) prune(ctx context.Context) {
	now := d.now()
	n, err := d.store.PruneDeliveries(ctx, now.Add(-DeliveredRetention), now.Add(-FailedRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		d.logger.Warn("pruning webhook deliveries failed", "err", err.Error())
	case n > 0:
		d.logger.Info("pruned old webhook deliveries", "count", n)
	}
}

// Shutdown stops claiming and waits for the attempts in flight until ctx
// ends; then it cancels them (the receivers' answers are not awaited) and
// hands their claims back, each write bounded by a second, so it returns
// within about a second of ctx's end. A delivery whose claim could not be
// handed back is due again when its claim lapses. The error wraps
// ctx.Err() when attempts were cut short.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.closing)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.inflight.Wait(); close(done) }()
	defer d.client.CloseIdleConnections()
	select {
	case <-done:
		d.kill()
		return nil
	case <-ctx.Done():
		d.kill()
		<-done
		return fmt.Errorf("webhook: attempts cut short at shutdown, to be retried: %w", ctx.Err())
	}
}
