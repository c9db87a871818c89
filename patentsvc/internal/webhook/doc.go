// Package webhook composes and delivers the patent analysis service's
// outbound webhook notifications (job.completed, alert.patent_count_change
// and alert.new_patents) to the URLs of WEBHOOK_URLS. Deliveries are durable (decisions.md,
// issue 10): they are rows of the store, written with the event, each with
// a unit of the work queue (package queue) that makes its attempts.
//
// Wiring: New once in run(); the scheduler and the job runner call
// AlertDeliveries and JobDeliveries (their Notifier) to compose an
// event's deliveries, then hand them to the store with the alert or the
// job end, which stores them in that one transaction, with their units;
// Deliver is what queue.DeliveryWorker calls for those units, on every
// replica; Sweep and Prune are gocron ticks on every replica.
//
// # Formats
//
//   - Slack incoming webhooks (host hooks.slack.com, path /services/...;
//     see IsSlack) get {"text", "blocks"}: a header, Event.Summary, the
//     Event.Fields ten to a section and a context line with the event id
//     and time. Slack's limits hold: section texts at most 3000
//     characters, field texts 2000, headers 150, at most 50 blocks (fields
//     that do not fit are counted in the context line). Text from an
//     upstream (titles, ids, company names, messages) cannot change the
//     message's structure (decisions.md, "Both services: ... identities
//     that cannot pose as others"): it shows on one line (line breaks and
//     control characters become spaces), without bidirectional controls,
//     with &, < and > escaped as Slack's mrkdwn requires, backticks shown
//     as U+02CB (no code span or fence), a zero-width space before a
//     "&gt;" that would start a line (no quote), and every mrkdwn text
//     object has verbatim: true (no bare URL or mention becomes a link).
//     Slack URLs get no signature headers: Slack ignores them and the URL
//     is the credential.
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
//   - One delivery per (event, URL), each with a webhook-id of its own
//     ("msg_" + a time-ordered suffix), the body's id too. The body is
//     encoded once, when the event is stored, so every attempt sends the
//     same bytes; each attempt gets its own webhook-timestamp and
//     signature.
//   - The queue runs a delivery's unit on any replica, Workers at a time
//     per replica, each run for at most Timeout + UnitMargin; Deliver makes
//     the due attempt. 2xx: delivered. 410: failed at once (Standard
//     Webhooks: the endpoint is gone). Anything else (network error,
//     timeout, 3xx: redirects are not followed, 4xx, 5xx): pending again
//     after the schedule's next wait (Config.Schedule,
//     WEBHOOK_RETRY_SCHEDULE), or longer when a 429 or 503 says
//     Retry-After (up to an hour), the unit snoozing until then (a
//     *patent.LaterError, not a failed run); failed once the schedule is
//     spent.
//   - Sweep (every few seconds): an attempt a dead replica was making is
//     made again at once (its session ended); a pending delivery without a
//     unit (stored before the queue, or its unit cancelled) gets one; one
//     whose unit the queue gave up (its runs failed, or their replicas
//     died, store.DeliveryAttempts times) fails, and an admin may retry it.
//   - Each attempt logs one line: INFO "webhook delivered", WARN "webhook
//     attempt failed; retrying", "webhook delivery failed" or "webhook
//     endpoint is gone", with event, event_id, target (scheme://host only:
//     Slack URLs carry their token in the path, others may in the query
//     or user info) and attempt. Errors are stripped of URLs and
//     addresses; answer bodies are not kept, except Slack's short error
//     codes (no_service, invalid_payload, ...). The secret is never
//     logged.
//   - Prune deletes delivered rows after DeliveredRetention and failed
//     ones FailedRetention after their creation (hourly).
//   - URLs are the operator's configuration, not user input, so no SSRF
//     filtering is done; redirects are not followed in any case.
//
// # Caveats
//
//   - Delivery is at least once: a receiver that timed out but had
//     processed the request, or a replica killed during an attempt (its
//     unit is run again within seconds of its session's end, by another
//     replica or the restarted process), gets it again with the same id.
//   - Attempts run concurrently, so deliveries to one URL may arrive out
//     of order.
//   - On shutdown the queue takes no new unit; attempts in flight go on
//     until SHUTDOWN_TIMEOUT, which cancels them: nothing is recorded of a
//     cut attempt, and its unit is available again at once. What was not
//     attempted stays queued for the other replicas or the next process.
//   - A row keeps its URL: removing a URL from WEBHOOK_URLS does not stop
//     the deliveries already stored for it.
package webhook
