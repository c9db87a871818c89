package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Deliveries lists and retries the stored webhook deliveries;
// *webhook.Admin implements it.
type Deliveries interface {
	Deliveries(ctx context.Context, f patent.DeliveryFilter, limit int, after string) ([]patent.Delivery, string, error)
	// Retry returns patent.ErrNotFound for an unknown id and a kind of
	// patent.ErrConflict for a delivery that cannot be retried now.
	Retry(ctx context.Context, id string) (patent.Delivery, error)
}

// deliveryJSON is one item of GET /admin/webhooks/deliveries. The target
// shows as url_host only: webhook URLs often carry their token.
type deliveryJSON struct {
	ID             string     `json:"id"`
	Event          string     `json:"event"`
	URLHost        string     `json:"url_host"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      *string    `json:"last_error"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	CreatedAt      time.Time  `json:"created_at"`
}

func fromDelivery(d patent.Delivery) deliveryJSON {
	return deliveryJSON{ID: d.ID, Event: d.Event, URLHost: d.URLHost, Status: d.Status, Attempts: d.Attempts,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError, NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt}
}

// handleListDeliveries serves GET /admin/webhooks/deliveries: newest
// first, keyset-paged, optionally of one status.
func handleListDeliveries(d Deliveries) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		var f patent.DeliveryFilter
		switch f.Status = c.QueryParam("status"); f.Status {
		case "", patent.DeliveryPending, patent.DeliveryDelivered, patent.DeliveryFailed:
		default:
			return invalid("status", errors.New("status must be pending, delivered or failed"))
		}
		items, next, err := d.Deliveries(c.Request().Context(), f, limit, cursor)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, pageJSON[deliveryJSON]{Items: mapSlice(items, fromDelivery), NextCursor: nullable(next)})
	}
}

// handleRetryDelivery serves POST /admin/webhooks/deliveries/{id}/retry:
// a failed delivery goes back to pending, due at once, with a fresh
// attempt count (202 with the delivery). 404 for an unknown id; 409 for a
// delivery that is not failed: a pending one is being retried already,
// and a delivered one arrived (sending it again would be a duplicate).
func handleRetryDelivery(d Deliveries) echo.HandlerFunc {
	return func(c echo.Context) error {
		d, err := d.Retry(c.Request().Context(), c.Param("delivery_id"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, fromDelivery(d))
	}
}
