// Package webhook delivers the patent analysis service's outbound webhook
// notifications (job completion and patent-count alerts) to the URLs of
// WEBHOOK_URLS, in the background.
//
// Wiring: New once in run(), Run in a background goroutine, Send from jobs
// and tracking (it never blocks them), Shutdown during shutdown, within
// SHUTDOWN_TIMEOUT and after the work that sends events has stopped.
//
// # Formats
//
//   - Slack incoming webhooks (host hooks.slack.com, path /services/...;
//     see IsSlack) get {"text", "blocks"}: a header, Event.Summary, the
//     Event.Fields ten to a section and a context line with the event id
//     and time. Slack's limits hold: section texts at most 3000
//     characters, field texts 2000, headers 150, at most 50 blocks (fields
//     that do not fit are counted in the context line). &, < and > are
//     escaped as Slack's mrkdwn requires. Slack URLs get no signature
//     headers: Slack ignores them and the URL is the credential.
//   - Every other URL, hooks.slack.com/triggers/ (Workflow Builder)
//     included, gets exactly {"event", "id", "timestamp", "data"}:
//     timestamp is RFC 3339 in UTC, data is Event.Data ({} when nil).
//   - With WEBHOOK_SECRET, generic deliveries carry the Standard Webhooks
//     headers webhook-id (the body's id, the same on every attempt),
//     webhook-timestamp (unix seconds of that attempt) and
//     webhook-signature ("v1," + base64 HMAC-SHA256 of id.timestamp.body,
//     recomputed per attempt). The key is the base64 after "whsec_" when
//     the secret has that prefix, the secret's bytes otherwise. Without a
//     secret none of these headers is sent; the body's id still lets
//     receivers drop repeats. Verify checks deliveries for Go receivers
//     and tests. A whsec_ secret that is not base64 is logged at ERROR by
//     New and the raw secret is used (Verify rejects such a secret).
//
// # Delivery
//
//   - Each URL has its own queue (New's queue argument is per URL) and
//     one worker, so a slow or dead URL only delays its own deliveries,
//     and deliveries to one URL keep the order of Send (except during
//     Shutdown, which adds a second worker per URL to flush faster).
//   - Attempts (4 in decisions.md) are retried on network errors,
//     per-attempt timeouts, 429 and 5xx, after an exponential wait with
//     equal jitter: backoff, 2*backoff, 4*backoff, each between half and
//     all of that. A Retry-After (seconds or HTTP date) on a 429 or 503
//     lengthens the wait, up to 30 s.
//   - Success is any 2xx. Redirects are not followed: a 3xx fails, like
//     other 4xx, without a retry. A 410 means the endpoint is gone (the
//     Standard Webhooks rule): it is not retried and is logged as such.
//     The URL stays configured; each later event costs it one request.
//   - Each delivery logs its outcome once: INFO "webhook delivered" or
//     WARN "webhook delivery failed" / "webhook endpoint is gone", with
//     event, event_id, target, entry (the URL's 1-based position in
//     WEBHOOK_URLS), attempts, status and err. target is only
//     scheme://host: Slack URLs carry their token in the path and other
//     URLs may carry one in the query or user info. Errors are stripped of
//     URLs and addresses. The secret is never logged. Slack's short error
//     codes (no_service, invalid_payload, ...) are logged as slack_error;
//     other answer bodies are not logged.
//   - Send never blocks: an event that does not fit a URL's queue is
//     dropped for that URL with an ERROR log naming it (event, event_id,
//     target). Send encodes the event at once, so later changes to Data
//     are not seen.
//   - URLs are the operator's configuration, not user input, so no SSRF
//     filtering is done; redirects are not followed in any case.
//
// # Caveats
//
//   - Pending deliveries are held in memory only, never persisted.
//     Shutdown stops accepting events and flushes what is queued or in
//     flight until its context ends (SHUTDOWN_TIMEOUT); what is still
//     pending then is dropped, and its count is logged at ERROR. A crash
//     loses the queue. This is accepted because webhooks are
//     notifications, not the record: callers store the job (GET
//     /jobs/{id}) or the alert (the alert list) in the database before
//     sending its event, so a receiver that missed one can read the state. Durable
//     delivery would need an outbox table with leases across replicas (and
//     the Standard Webhooks schedule of retries over days), which this
//     service does not promise.
//   - Run's context is not what cuts deliveries short: in run() the
//     signal ends Run's context before Shutdown is called, and the
//     deliveries then in flight are what Shutdown must flush. When Run's
//     context ends, its workers finish the delivery they are on and stop;
//     what is queued waits for Shutdown, which delivers it whether or not
//     Run still runs. Only Shutdown's deadline cuts a delivery.
//   - Delivery is at least once: a receiver that timed out but had
//     processed the request gets it again with the same id.
//   - With one worker per URL, a dead URL holds its queue for up to
//     attempts × timeout plus the waits per event; its queue then fills
//     and further events for it are dropped with a log, which bounds
//     memory.
package webhook
