package webhook

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/retry"

	"github.com/google/uuid"
)

// The event types the service sends (decisions.md, "Webhooks").
const (
	EventJobCompleted = "job.completed"
	EventAlert        = "alert.patent_count_change"
)

// The delivery settings of decisions.md ("Webhooks"), which run() passes
// to New.
const (
	// AttemptTimeout bounds one delivery attempt; the Standard Webhooks
	// spec suggests 15 to 30 s.
	AttemptTimeout = 15 * time.Second
	// Attempts is the total number of tries of one delivery.
	Attempts = 4
	// FirstRetryWait is the wait before the first retry, doubled for each
	// further one (with jitter).
	FirstRetryWait = time.Second
	// QueueSize is the capacity of each URL's queue.
	QueueSize = 1000
)

const (
	userAgent = "patentsvc/1.0 webhooks (+https://github.com/gatewayapis)"
	// maxRetryAfter caps how long a Retry-After can hold the next attempt:
	// each URL has one worker, so a long wait holds that URL's queue.
	maxRetryAfter = 30 * time.Second
	// maxBackoff caps the exponential wait whatever attempts and backoff
	// are.
	maxBackoff = 5 * time.Minute
	// maxDrain is how much of an answer is read (and thrown away) so that
	// the connection can be reused.
	maxDrain = 64 << 10
)

// Event is one notification. Send fills ID and Timestamp when they are
// empty.
type Event struct {
	// ID is the event's id: the body's "id" and the webhook-id header,
	// the same on every attempt and for every URL, so receivers can drop
	// repeats. Send sets it to "msg_" plus a unique suffix when empty. A
	// caller's id must be 1 to 128 printable ASCII characters without
	// '.', ',' or spaces (the signed content is id.timestamp.body); Send
	// replaces one that is not, with a warning.
	ID string
	// Type is the event type, EventJobCompleted or EventAlert; required.
	Type string
	// Timestamp is when the event happened; Send uses now when zero. It is
	// sent in UTC.
	Timestamp time.Time
	// Data is the event's payload, encoded with encoding/json when Send is
	// called (later changes to it are not seen). It should encode to a
	// JSON object; nil is sent as {}.
	Data any
	// Summary is one line of human text for chat formats (Slack's text and
	// first section).
	Summary string
	// Fields are label/value pairs shown in Slack messages.
	Fields []Field
}

// Field is a label/value pair of a Slack message.
type Field struct{ Label, Value string }

// Dispatcher delivers events to the configured URLs in the background. It
// is safe for concurrent use. Each URL has its own bounded queue and one
// worker, so a slow or dead URL delays only its own deliveries.
type Dispatcher struct {
	targets  []*target
	client   *http.Client
	key      []byte // HMAC key; nil when there is no secret
	timeout  time.Duration
	attempts int
	backoff  time.Duration
	logger   *slog.Logger
	now      func() time.Time // replaced by tests (export_test.go)

	// life is the context deliveries run in. It is cancelled only when
	// Shutdown gives up (or has finished), not when Run's ctx ends: in
	// run() a SIGTERM ends Run's ctx before Shutdown is called, and the
	// deliveries then in flight are exactly what Shutdown is to flush.
	life    context.Context
	kill    context.CancelFunc
	aborted atomic.Int64 // deliveries cut short by kill

	mu      sync.Mutex
	closed  bool           // Shutdown has begun; guarded by mu
	workers sync.WaitGroup // every worker, Run's and Shutdown's
	once    sync.Once
	drained chan struct{} // closed when Shutdown's drain has ended
	dropped int           // deliveries dropped at shutdown; read after drained
}

// target is one configured URL.
type target struct {
	url   string // never logged: Slack URLs carry their token in the path
	name  string // scheme://host, what logs show
	entry int    // 1-based position in WEBHOOK_URLS
	slack bool
	queue chan message
}

// message is one event encoded for one format.
type message struct {
	id, event string
	body      []byte // shared between targets; never modified
}

// New returns a Dispatcher for urls (WEBHOOK_URLS, in order; blank entries
// are skipped and entries that are not absolute http(s) URLs are skipped
// with an ERROR log naming their position). secret (WEBHOOK_SECRET) may be
// empty: then nothing is signed. timeout bounds each attempt (15 s when not
// positive); attempts is the total number of tries (decisions.md: 4) and
// backoff the first wait (decisions.md: 1 s), doubled for each retry. queue
// is the capacity of each URL's queue (at least 1); events beyond it are
// dropped with an ERROR log. logger may be nil. Deliveries run in a
// context derived from base: its values carry over, its cancellation does
// not (queued events are flushed after the shutdown signal, until
// Shutdown's deadline).
func New(base context.Context, urls []string, secret string, timeout time.Duration, attempts int, backoff time.Duration, queue int, logger *slog.Logger) *Dispatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if timeout <= 0 {
		timeout = AttemptTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 2
	d := &Dispatcher{
		client: &http.Client{
			Transport: transport,
			// Standard Webhooks: a 3xx is a failure, never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout:  timeout,
		attempts: max(attempts, 1),
		backoff:  max(backoff, 0),
		logger:   logger,
		now:      time.Now,
		drained:  make(chan struct{}),
	}
	d.life, d.kill = context.WithCancel(context.WithoutCancel(base))
	if secret != "" {
		key, err := signingKey(secret)
		if err != nil {
			// Start anyway (config owns validation); the receivers will
			// reject the signatures, which is what this line explains.
			logger.Error("WEBHOOK_SECRET starts with whsec_ but the rest is not base64; signing with the raw secret")
			key = []byte(secret)
		}
		d.key = key
	}
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
		d.targets = append(d.targets, &target{
			url:   raw,
			name:  u.Scheme + "://" + u.Host,
			entry: i + 1,
			slack: IsSlack(raw),
			queue: make(chan message, max(queue, 1)),
		})
	}
	return d
}

// validID reports whether a caller's Event.ID can be sent: 1 to 128
// printable ASCII characters other than space, '.' (the separator of the
// signed content) and ',' (the separator inside webhook-signature).
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '.' || c == ',' {
			return false
		}
	}
	return true
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

// Send encodes e and queues it for every URL, then returns at once: it
// never waits for a delivery, a worker or a full queue. An event that
// cannot be queued (queue full, Shutdown begun, no Type, Data that does not
// encode) is dropped with a log line naming it.
func (d *Dispatcher) Send(e Event) {
	if len(d.targets) == 0 {
		return
	}
	switch {
	case e.ID == "":
		e.ID = newID()
	case !validID(e.ID):
		id := newID()
		d.logger.Warn("webhook event id unusable; replaced", "event", e.Type, "event_id", id)
		e.ID = id
	}
	if e.Type == "" {
		d.logger.Error("webhook event dropped: no type", "event_id", e.ID)
		return
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = d.now()
	}
	var generic, slack []byte
	for _, t := range d.targets {
		var err error
		switch {
		case t.slack && slack == nil:
			slack, err = slackBody(e)
		case !t.slack && generic == nil:
			generic, err = genericBody(e)
		}
		if err != nil {
			d.logger.Error("webhook event dropped: cannot encode", "event", e.Type, "event_id", e.ID, "err", err.Error())
			return
		}
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		d.logger.Error("webhook event dropped: shutting down", "event", e.Type, "event_id", e.ID)
		return
	}
	for _, t := range d.targets {
		m := message{id: e.ID, event: e.Type, body: generic}
		if t.slack {
			m.body = slack
		}
		select {
		case t.queue <- m:
		default:
			d.logger.Error("webhook event dropped: queue full", "event", e.Type, "event_id", e.ID,
				"target", t.name, "entry", t.entry, "queue", cap(t.queue))
		}
	}
}

// Run delivers queued events, one worker per URL, until ctx ends or
// Shutdown has emptied the queues. When ctx ends, each worker finishes the
// delivery it is on (those are cut only by Shutdown's deadline) and what is
// still queued waits for Shutdown, which flushes it. Call Run once; after
// Shutdown it returns at once.
func (d *Dispatcher) Run(ctx context.Context) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	var mine sync.WaitGroup
	for _, t := range d.targets {
		d.workers.Add(1)
		mine.Go(func() { d.work(t, ctx.Done()) })
	}
	d.mu.Unlock()
	mine.Wait()
}

// Shutdown stops accepting events (later Sends are dropped with a log) and
// delivers what is queued or in flight until ctx ends, whether or not Run
// is still running. At ctx's end, deliveries still in flight or queued are
// abandoned: their count is logged at ERROR and the returned error, which
// wraps ctx.Err(), names it. It returns nil when everything was flushed
// (delivered, or failed for good after its retries).
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	d.once.Do(func() {
		d.mu.Lock()
		d.closed = true
		for _, t := range d.targets {
			close(t.queue)
			d.workers.Add(1)
			go d.work(t, nil) // a second worker per URL speeds the flush up
		}
		d.mu.Unlock()
		go func() {
			d.workers.Wait()
			n := int(d.aborted.Load())
			for _, t := range d.targets {
				n += len(t.queue)
			}
			if n > 0 {
				d.logger.Error("webhook deliveries dropped at shutdown", "count", n)
			}
			d.dropped = n
			d.kill()
			d.client.CloseIdleConnections()
			close(d.drained)
		}()
	})
	select {
	case <-d.drained:
	case <-ctx.Done():
		d.kill()
		<-d.drained // prompt: every wait and request watches d.life
	}
	if d.dropped > 0 {
		return fmt.Errorf("webhook: %d deliveries dropped at shutdown: %w", d.dropped, cmp.Or(ctx.Err(), context.Canceled))
	}
	return nil
}

// work delivers t's messages until stop is closed, t's queue is closed and
// empty, or the dispatcher is killed.
func (d *Dispatcher) work(t *target, stop <-chan struct{}) {
	defer d.workers.Done()
	for {
		select { // stopping wins over a ready message
		case <-stop:
			return
		case <-d.life.Done():
			return
		default:
		}
		select {
		case <-stop:
			return
		case <-d.life.Done():
			return
		case m, ok := <-t.queue:
			if !ok {
				return
			}
			d.deliver(t, m)
		}
	}
}

// result is the outcome of one attempt.
type result struct {
	status     int           // 0 when there was no answer
	err        error         // network error or timeout
	retryAfter time.Duration // from a 429 or 503
	slackError string        // Slack's error code from a non-2xx answer
}

func (r result) ok() bool { return r.err == nil && r.status >= 200 && r.status < 300 }

// retryable: network errors, timeouts, 429 and 5xx (decisions.md).
func (r result) retryable() bool {
	return r.err != nil || r.status == http.StatusTooManyRequests || r.status >= 500
}

// deliver sends m to t with retries and logs the outcome once.
func (d *Dispatcher) deliver(t *target, m message) {
	log := d.logger.With("event", m.event, "event_id", m.id, "target", t.name, "entry", t.entry)
	for attempt := 1; ; attempt++ {
		r := d.try(t, m)
		switch {
		case r.ok():
			log.Info("webhook delivered", "attempts", attempt, "status", r.status)
			return
		case d.life.Err() != nil:
			d.aborted.Add(1) // counted and logged by Shutdown
			return
		case r.status == http.StatusGone:
			// Standard Webhooks: 410 means the endpoint is gone; retrying
			// is pointless. It is not disabled: the next event tries once.
			log.Warn("webhook endpoint is gone", "attempts", attempt, "status", r.status)
			return
		case !r.retryable() || attempt >= d.attempts:
			log.Warn("webhook delivery failed", r.attrs(attempt)...)
			return
		}
		timer := time.NewTimer(d.wait(attempt, r.retryAfter))
		select {
		case <-timer.C:
		case <-d.life.Done():
			timer.Stop()
			d.aborted.Add(1)
			return
		}
	}
}

func (r result) attrs(attempts int) []any {
	a := []any{"attempts", attempts}
	if r.status != 0 {
		a = append(a, "status", r.status)
	}
	if r.slackError != "" {
		a = append(a, "slack_error", r.slackError)
	}
	if r.err != nil {
		a = append(a, "err", redact.Error(r.err))
	}
	return a
}

// slackCode is what a Slack error answer looks like (invalid_payload,
// no_service, ...); anything else is not logged.
var slackCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// try makes one attempt. Its webhook-timestamp is this attempt's time, so
// the signature is computed afresh over the same id and body.
func (d *Dispatcher) try(t *target, m message) result {
	ctx, cancel := context.WithTimeout(d.life, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(m.body))
	if err != nil {
		return result{err: errors.New("cannot build request")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if !t.slack && d.key != nil {
		ts := strconv.FormatInt(d.now().Unix(), 10)
		req.Header.Set("webhook-id", m.id)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", sign(d.key, m.id, ts, m.body))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	r := result{status: resp.StatusCode}
	if t.slack && !r.ok() {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 65))
		if code := strings.TrimSpace(string(b)); slackCode.MatchString(code) {
			r.slackError = code
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	if r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable {
		r.retryAfter, _ = retry.After(resp.Header.Get("Retry-After"), d.now())
	}
	return r
}

// wait is the pause after the given failed attempt (1-based): exponential
// from d.backoff with equal jitter (half fixed, half random, so retries
// from several pods spread out), or Retry-After when that is longer, up to
// maxRetryAfter.
func (d *Dispatcher) wait(attempt int, retryAfter time.Duration) time.Duration {
	w := retry.Jitter(retry.Exponential(min(d.backoff, maxBackoff), maxBackoff, attempt-1))
	return max(w, min(retryAfter, maxRetryAfter))
}
