package webhook

import (
	"context"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// AdminStore is what admins read and change of the stored deliveries;
// store.Deliveries implements it.
type AdminStore interface {
	// ListDeliveries returns a page of the deliveries f selects, newest
	// first, and the next page's cursor ("" on the last).
	ListDeliveries(ctx context.Context, f patent.DeliveryFilter, limit int, after string) ([]patent.Delivery, string, error)
	// RetryDelivery puts a failed delivery back to pending, due now, with
	// a fresh attempt count, and queues its unit, in one transaction;
	// patent.ErrNotFound for an unknown id, a kind of patent.ErrConflict
	// for one that is not failed or whose last attempt's unit has not
	// ended yet.
	RetryDelivery(ctx context.Context, id string) (patent.Delivery, error)
}

// Admin is the deliveries as admins see them: listed, and a failed one
// sent again. It needs no webhook URL: deliveries stored under an earlier
// configuration are listed and retried alike. It is safe for concurrent
// use.
type Admin struct {
	store AdminStore
}

// NewAdmin returns the admins' view of the deliveries in st.
func NewAdmin(st AdminStore) *Admin { return &Admin{store: st} }

// Deliveries returns a page of the deliveries f selects, newest first,
// and the next page's cursor ("" on the last): GET
// /admin/webhooks/deliveries.
func (a *Admin) Deliveries(ctx context.Context, f patent.DeliveryFilter, limit int, after string) ([]patent.Delivery, string, error) {
	return a.store.ListDeliveries(ctx, f, limit, after)
}

// Retry sends a failed delivery again, from its first attempt, on
// whichever replica takes its unit up (POST
// /admin/webhooks/deliveries/{id}/retry). Returns patent.ErrNotFound for
// an unknown id and a kind of patent.ErrConflict for a delivery that is
// not failed (pending: it is retried already; delivered: sending it again
// would be a duplicate) or whose last attempt has not ended yet.
func (a *Admin) Retry(ctx context.Context, id string) (patent.Delivery, error) {
	return a.store.RetryDelivery(ctx, id)
}
