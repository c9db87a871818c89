package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// deliveryRow is a row of webhook_deliveries (migration 0004).
type deliveryRow struct {
	ID             string `gorm:"primaryKey"`
	Event          string
	URL            string
	URLHost        string
	Payload        []byte
	Status         string
	Attempts       int
	LastStatusCode *int
	LastError      *string
	NextAttemptAt  *time.Time
	CreatedAt      time.Time
	DeliveredAt    *time.Time
	// UnitID is the unit that makes its attempts (migration 0009).
	UnitID *int64
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

func (r deliveryRow) toDomain() patent.Delivery {
	return patent.Delivery{ID: r.ID, Event: r.Event, URL: r.URL, URLHost: r.URLHost, Payload: r.Payload,
		Status: r.Status, Attempts: r.Attempts, LastStatusCode: r.LastStatusCode, LastError: r.LastError,
		NextAttemptAt: utcPtr(r.NextAttemptAt), CreatedAt: r.CreatedAt.UTC(), DeliveredAt: utcPtr(r.DeliveredAt)}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// insertDeliveries stores new deliveries, pending and due now, and queues
// the unit that attempts each, in tx: the caller's transaction, which also
// stores the event that causes them.
func (s *base) insertDeliveries(ctx context.Context, tx *gorm.DB, ds []patent.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	now := utc(s.now())
	units := make([]patent.Unit, len(ds))
	for i, d := range ds {
		units[i] = patent.DeliveryAttempt{DeliveryID: d.ID}
	}
	queued, err := s.enqueue(ctx, tx, 0, units...)
	if err != nil {
		return fmt.Errorf("queue webhook deliveries: %w", err)
	}
	rows := make([]deliveryRow, len(ds))
	for i, d := range ds {
		rows[i] = deliveryRow{ID: d.ID, Event: d.Event, URL: d.URL, URLHost: d.URLHost, Payload: d.Payload,
			Status: patent.DeliveryPending, NextAttemptAt: &now, CreatedAt: now, UnitID: &queued[i].id}
	}
	if err := tx.Create(&rows).Error; err != nil {
		return fmt.Errorf("store webhook deliveries: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return nil
}

// Delivery returns delivery id (its payload and URL included), or
// patent.ErrNotFound.
func (s Deliveries) Delivery(ctx context.Context, id string) (patent.Delivery, error) {
	var row deliveryRow
	if err := s.db.WithContext(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return patent.Delivery{}, fmt.Errorf("webhook delivery %s: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// ErrDeliveryEnded is returned by RecordAttempt when the delivery is no
// longer pending (an admin's retry reset it meanwhile, or a sweep failed
// it).
var ErrDeliveryEnded = fmt.Errorf("webhook delivery no longer pending: %w", patent.ErrConflict)

// RecordAttempt records the outcome of an attempt at pending delivery id.
// Returns ErrDeliveryEnded when it is no longer pending.
func (s Deliveries) RecordAttempt(ctx context.Context, id string, a patent.Attempt) error {
	values := map[string]any{"status": a.Status, "attempts": gorm.Expr("attempts + 1"),
		"last_status_code": nil, "last_error": nil, "next_attempt_at": nil}
	if a.StatusCode != 0 {
		values["last_status_code"] = a.StatusCode
	}
	if a.Error != "" {
		values["last_error"] = a.Error
	}
	switch a.Status {
	case patent.DeliveryPending:
		values["next_attempt_at"] = utc(a.NextAttemptAt)
	case patent.DeliveryDelivered:
		values["delivered_at"] = utc(a.At)
	}
	res := s.db.WithContext(ctx).Model(&deliveryRow{}).Where("id = ? AND status = ?", id, patent.DeliveryPending).Updates(values)
	if res.Error != nil {
		return fmt.Errorf("record webhook attempt %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("record webhook attempt %s: %w", id, ErrDeliveryEnded)
	}
	return nil
}

// SweepDeliveries gives every pending delivery a live unit: one without a
// unit (stored before the work queue existed) gets one queued; one whose
// unit is no longer alive (River gave it up after its runs' processes died
// or failed, or an operator cancelled it) fails with reason, so an admin
// can retry it. It returns how many it queued and failed.
func (s Deliveries) SweepDeliveries(ctx context.Context, reason string) (queued, failed int64, err error) {
	err = s.inTx(ctx, func(tx *gorm.DB) error {
		var ids []string
		if err := tx.Model(&deliveryRow{}).Where("status = ? AND unit_id IS NULL", patent.DeliveryPending).Pluck("id", &ids).Error; err != nil {
			return err
		}
		for _, id := range ids {
			unit, err := s.enqueue(ctx, tx, 0, patent.DeliveryAttempt{DeliveryID: id})
			if err != nil {
				return err
			}
			if err := tx.Model(&deliveryRow{}).Where("id = ?", id).Update("unit_id", unit[0].id).Error; err != nil {
				return err
			}
		}
		queued = int64(len(ids))
		res := tx.Model(&deliveryRow{}).Where("status = ? AND unit_id IS NOT NULL AND NOT "+unitAlive("webhook_deliveries.unit_id"), patent.DeliveryPending).
			Updates(map[string]any{"status": patent.DeliveryFailed, "last_error": reason, "next_attempt_at": nil})
		failed = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sweep webhook deliveries: %w", err)
	}
	return queued, failed, nil
}

// ListDeliveries returns a page of deliveries (f.Status, or all), newest
// first (ties broken by id, descending); next is empty on the last page.
// A cursor that does not decode starts from the newest.
func (s Deliveries) ListDeliveries(ctx context.Context, f patent.DeliveryFilter, limit int, after string) ([]patent.Delivery, string, error) {
	q := s.db.WithContext(ctx).Model(&deliveryRow{}).Omit("payload", "url")
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if c, ok := decodeCursor(after); ok {
		q = q.Where("(created_at, id) < (?, ?)", c.at, c.id)
	}
	var rows []deliveryRow
	err := q.Order(clause.OrderBy{Columns: []clause.OrderByColumn{
		{Column: clause.Column{Name: "created_at"}, Desc: true},
		{Column: clause.Column{Name: "id"}, Desc: true},
	}}).Limit(limit + 1).Find(&rows).Error
	if err != nil {
		return nil, "", fmt.Errorf("list webhook deliveries: %w", err)
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[len(rows)-1]
		next = encodeCursor(last.CreatedAt, last.ID)
	}
	out := make([]patent.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, next, nil
}

// RetryDelivery puts a failed delivery back to pending, due now, with a
// fresh attempt count (its last status and error are kept until the next
// attempt), and queues a unit to attempt it. Returns patent.ErrNotFound
// for an unknown id and patent.ErrConflict for a delivery that is not
// failed (pending: it is retried already; delivered: it arrived, and
// sending it again would be a duplicate) or whose last attempt's unit has
// not ended yet (a moment after the failure was recorded).
func (s Deliveries) RetryDelivery(ctx context.Context, id string) (patent.Delivery, error) {
	var row deliveryRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Take(&row, "id = ?", id).Error; err != nil {
			return translate(err, patent.NewKindError(patent.ErrNotFound, "Webhook delivery not found"), patent.ErrConflict)
		}
		if row.Status != patent.DeliveryFailed {
			return patent.NewKindError(patent.ErrConflict, "Webhook delivery is "+row.Status+"; only a failed delivery can be retried")
		}
		unit, err := s.enqueue(ctx, tx, 0, patent.DeliveryAttempt{DeliveryID: id})
		if err != nil {
			return err
		}
		if unit[0].duplicate {
			// The unit of its last attempt is still finishing (it has recorded
			// the failure, not yet ended): a new one cannot be queued beside it.
			return patent.NewKindError(patent.ErrConflict, "Webhook delivery's last attempt is still finishing; retry it in a few seconds")
		}
		now := utc(s.now())
		row.Status, row.Attempts, row.NextAttemptAt, row.UnitID = patent.DeliveryPending, 0, &now, &unit[0].id
		return tx.Model(&deliveryRow{}).Where("id = ? AND status = ?", id, patent.DeliveryFailed).Updates(map[string]any{
			"status": row.Status, "attempts": 0, "next_attempt_at": now, "unit_id": unit[0].id}).Error
	})
	if err != nil {
		// The sentinels' own messages are what a client sees.
		return patent.Delivery{}, err
	}
	return row.toDomain(), nil
}

// PendingDeliveries counts the deliveries not yet delivered or failed.
func (s Deliveries) PendingDeliveries(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&deliveryRow{}).Where("status = ?", patent.DeliveryPending).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count pending webhook deliveries: %w", err)
	}
	return n, nil
}

// PruneDeliveries deletes the deliveries delivered before delivered and
// those that failed (for good) and were created before failed, and returns
// how many.
func (s Deliveries) PruneDeliveries(ctx context.Context, delivered, failed time.Time) (int64, error) {
	res := s.db.WithContext(ctx).
		Where("(status = ? AND delivered_at < ?) OR (status = ? AND created_at < ?)",
			patent.DeliveryDelivered, utc(delivered), patent.DeliveryFailed, utc(failed)).
		Delete(&deliveryRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune webhook deliveries: %w", res.Error)
	}
	return res.RowsAffected, nil
}
