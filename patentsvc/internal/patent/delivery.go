package patent

import "time"

// Webhook delivery statuses (decisions.md, "durable webhooks").
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Delivery is one webhook event for one target URL, stored in the same
// transaction as the alert or job end that causes it and sent from that
// row, so it survives restarts and replica loss.
type Delivery struct {
	// ID is the webhook-id, the same on every attempt ("msg_" + a
	// time-ordered suffix); one per (event, URL).
	ID string
	// Event is the event type (alert.patent_count_change, job.completed).
	Event string
	// URL is the target. It may carry a token: never log it, show URLHost.
	URL string
	// URLHost is scheme://host of URL, what listings and logs show.
	URLHost string
	// Payload is the request body, encoded once when the event happened,
	// so that every attempt sends the same bytes.
	Payload []byte

	Status         string // DeliveryPending, DeliveryDelivered or DeliveryFailed
	Attempts       int    // attempts made
	LastStatusCode *int   // the last answer's status; nil when none came
	LastError      *string
	NextAttemptAt  *time.Time // nil once delivered or failed
	CreatedAt      time.Time
	DeliveredAt    *time.Time
}

// Attempt is the outcome of one delivery attempt as the store records it.
type Attempt struct {
	// Status is the delivery's status after the attempt: DeliveryDelivered,
	// DeliveryPending (a retry is due at NextAttemptAt) or DeliveryFailed.
	Status        string
	StatusCode    int    // 0 when no answer came
	Error         string // redacted; "" on success
	NextAttemptAt time.Time
	At            time.Time
}

// DeliveryFilter selects deliveries in the admin listing.
type DeliveryFilter struct {
	Status string // "" for every status
}
