package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// Deliver makes the due attempt of a delivery, for its unit in the queue
// (decisions.md): 2xx delivered; 410 Gone failed at once; anything else
// attempted again after the schedule's next wait (the unit is run again
// then: a *patent.LaterError), failed when the schedule is spent. A
// delivery that is no longer pending (delivered, failed, pruned) is done;
// one whose next attempt is not due yet waits for it. An attempt cut short
// by the queue's context (a shutdown) records nothing and returns its
// error: the queue runs the unit again at once, elsewhere. The outcome
// not recorded is an error too, and the attempt is made again (at least
// once: a receiver may get it twice, with the same webhook-id).
func (d *Dispatcher) Deliver(ctx context.Context, u patent.DeliveryAttempt) error {
	del, err := d.store.Delivery(ctx, u.DeliveryID)
	switch {
	case errors.Is(err, patent.ErrNotFound):
		return nil
	case err != nil:
		return err
	case del.Status != patent.DeliveryPending:
		return nil
	}
	if del.NextAttemptAt != nil {
		if wait := del.NextAttemptAt.Sub(d.now()); wait > 0 {
			return patent.Later(wait)
		}
	}
	r := d.try(ctx, del)
	log := d.logger.With("event", del.Event, "event_id", del.ID, "target", del.URLHost, "attempt", del.Attempts+1)
	if ctx.Err() != nil && !r.ok() {
		return fmt.Errorf("webhook attempt cut short: %w", context.Cause(ctx))
	}
	a := d.outcome(del, r)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := d.store.RecordAttempt(wctx, del.ID, a); err != nil {
		if errors.Is(err, patent.ErrConflict) {
			return nil // an admin reset it, or a sweep failed it, meanwhile
		}
		log.Warn("recording a webhook attempt failed; it is made again", "status", r.status, "err", err.Error())
		return err
	}
	d.logOutcome(log, a, r)
	if a.Status == patent.DeliveryPending {
		return patent.Later(a.NextAttemptAt.Sub(d.now()))
	}
	return nil
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

// try makes one attempt, within the attempt timeout. Its
// webhook-timestamp is this attempt's time, so the signature is computed
// afresh over the same id and body.
func (d *Dispatcher) try(ctx context.Context, del patent.Delivery) result {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
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
