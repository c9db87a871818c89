package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/retry"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

const (
	userAgent = "patentsvc/1.0 webhooks (+https://github.com/gatewayapis)"
	// maxRetryAfter caps how far a Retry-After can push the next attempt
	// beyond the schedule's wait.
	maxRetryAfter = time.Hour
	// maxDrain is how much of an answer is read (and thrown away) so that
	// the connection can be reused.
	maxDrain = 64 << 10
	// recordTimeout bounds the write of an attempt's outcome.
	recordTimeout = 10 * time.Second
)

// result is the outcome of one attempt.
type result struct {
	status     int           // 0 when there was no answer
	err        error         // network error or timeout
	retryAfter time.Duration // from a 429 or 503
	slackError string        // Slack's error code from a non-2xx answer
}

func (r result) ok() bool { return r.err == nil && r.status >= 200 && r.status < 300 }

// errorText is the redacted last_error of a failed attempt: no URL, no
// address, no answer body (Slack's short error codes excepted).
func (r result) errorText() string {
	switch {
	case r.err != nil:
		return redact.Error(r.err)
	case r.slackError != "":
		return "HTTP " + strconv.Itoa(r.status) + ": " + r.slackError
	}
	return "HTTP " + strconv.Itoa(r.status)
}

// deliver makes one attempt at a claimed delivery and records its outcome
// (decisions.md): 2xx delivered; 410 Gone failed at once; anything else
// retried after the schedule's next wait, failed when the schedule is
// spent. An attempt cut short by shutdown records nothing and hands the
// claim back.
func (d *Dispatcher) deliver(del patent.Delivery) {
	defer func() {
		<-d.slots
		d.inflight.Done()
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}()
	r := d.try(del)
	log := d.logger.With("event", del.Event, "event_id", del.ID, "target", del.URLHost, "attempt", del.Attempts+1)
	if d.life.Err() != nil && !r.ok() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.life), releaseTimeout)
		defer cancel()
		if err := d.store.ReleaseDelivery(ctx, del.ID, d.cfg.Owner); err != nil {
			log.Warn("handing back a webhook delivery at shutdown failed; it is retried when its claim lapses", "err", err.Error())
		}
		return
	}
	a := d.outcome(del, r)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.life), recordTimeout)
	defer cancel()
	if err := d.store.RecordAttempt(ctx, del.ID, d.cfg.Owner, a); err != nil {
		log.Warn("recording a webhook attempt failed", "status", r.status, "err", err.Error())
		return
	}
	d.logOutcome(log, a, r)
}

// outcome is what the attempt r at del means for the delivery.
func (d *Dispatcher) outcome(del patent.Delivery, r result) patent.Attempt {
	now := d.now()
	a := patent.Attempt{StatusCode: r.status, At: now}
	attempt := del.Attempts + 1 // this one, 1-based
	switch {
	case r.ok():
		a.Status = patent.DeliveryDelivered
		return a
	case r.status == http.StatusGone, attempt > len(d.cfg.Schedule):
		a.Status = patent.DeliveryFailed
	default:
		a.Status = patent.DeliveryPending
		wait := max(d.cfg.Schedule[attempt-1], min(r.retryAfter, maxRetryAfter))
		a.NextAttemptAt = now.Add(wait)
	}
	a.Error = r.errorText()
	return a
}

// logOutcome counts and logs a recorded attempt.
func (d *Dispatcher) logOutcome(log *slog.Logger, a patent.Attempt, r result) {
	switch {
	case a.Status == patent.DeliveryDelivered:
		d.outcomes.WithLabelValues("delivered").Inc()
		log.Info("webhook delivered", "status", r.status)
	case a.Status == patent.DeliveryPending:
		d.outcomes.WithLabelValues("retried").Inc()
		log.Warn("webhook attempt failed; retrying", "status", r.status, "err", a.Error, "next_attempt_at", a.NextAttemptAt)
	case r.status == http.StatusGone:
		d.outcomes.WithLabelValues("failed").Inc()
		log.Warn("webhook endpoint is gone", "status", r.status)
	default:
		d.outcomes.WithLabelValues("failed").Inc()
		log.Warn("webhook delivery failed", "status", r.status, "err", a.Error)
	}
}

// slackCode is what a Slack error answer looks like (invalid_payload,
// no_service, ...); anything else is not kept.
var slackCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// try makes one attempt. Its webhook-timestamp is this attempt's time, so
// the signature is computed afresh over the same id and body.
func (d *Dispatcher) try(del patent.Delivery) result {
	ctx, cancel := context.WithTimeout(d.life, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, del.URL, bytes.NewReader(del.Payload))
	if err != nil {
		return result{err: errors.New("cannot build request")}
	}
	slack := IsSlack(del.URL)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if !slack && d.key != nil {
		ts := strconv.FormatInt(d.now().Unix(), 10)
		req.Header.Set("webhook-id", del.ID)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", sign(d.key, del.ID, ts, del.Payload))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	r := result{status: resp.StatusCode}
	if slack && !r.ok() {
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
