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
	ClaimedBy      *string
	ClaimedUntil   *time.Time
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

// insertDeliveries stores new deliveries, pending and due now, in tx: the
// caller's transaction, which also stores the event that causes them.
func (s *Store) insertDeliveries(tx *gorm.DB, ds []patent.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	now := utc(s.now())
	rows := make([]deliveryRow, len(ds))
	for i, d := range ds {
		rows[i] = deliveryRow{ID: d.ID, Event: d.Event, URL: d.URL, URLHost: d.URLHost, Payload: d.Payload,
			Status: patent.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
	}
	if err := tx.Create(&rows).Error; err != nil {
		return fmt.Errorf("store webhook deliveries: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return nil
}

// withDeliveries composes the deliveries of a stored event and inserts
// them in tx. A nil compose stores none.
func withDeliveries[E any](s *Store, tx *gorm.DB, compose patent.Deliveries[E], event E) error {
	if compose == nil {
		return nil
	}
	ds, err := compose(event)
	if err != nil {
		return fmt.Errorf("compose webhook deliveries: %w", err)
	}
	return s.insertDeliveries(tx, ds)
}

// ClaimDeliveries claims up to limit pending deliveries that are due and
// not claimed by a live process, oldest due first, for owner until
// now+lease, and returns them. On PostgreSQL the rows are locked with FOR
// UPDATE SKIP LOCKED, so replicas claiming at once split the due rows;
// SQLite has one writer at a time (IMMEDIATE transactions). A claim of a
// process that stopped lapses at claimed_until, and the row is due again.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, limit int, lease time.Duration) ([]patent.Delivery, error) {
	now := utc(s.now())
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []deliveryRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Raw("SELECT * FROM webhook_deliveries WHERE status = ? AND next_attempt_at <= ?"+
			" AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY next_attempt_at, id LIMIT ?"+lock,
			patent.DeliveryPending, now, now, limit).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		return tx.Model(&deliveryRow{}).Where("id IN ?", ids).
			Updates(map[string]any{"claimed_by": owner, "claimed_until": now.Add(lease)}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	out := make([]patent.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// ErrClaimLost is returned by RecordAttempt when owner no longer holds the
// delivery's claim (it lapsed and another process took the row, or an
// admin reset it).
var ErrClaimLost = fmt.Errorf("webhook delivery claim lost: %w", patent.ErrConflict)

// RecordAttempt records the outcome of an attempt at delivery id made
// under owner's claim, and releases the claim. Returns ErrClaimLost when
// the claim is no longer owner's.
func (s *Store) RecordAttempt(ctx context.Context, id, owner string, a patent.Attempt) error {
	values := map[string]any{"status": a.Status, "attempts": gorm.Expr("attempts + 1"),
		"last_status_code": nil, "last_error": nil, "next_attempt_at": nil, "claimed_by": nil, "claimed_until": nil}
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
	res := s.db.WithContext(ctx).Model(&deliveryRow{}).
		Where("id = ? AND claimed_by = ? AND status = ?", id, owner, patent.DeliveryPending).Updates(values)
	if res.Error != nil {
		return fmt.Errorf("record webhook attempt %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("record webhook attempt %s: %w", id, ErrClaimLost)
	}
	return nil
}

// ReleaseDelivery hands a claimed delivery back unattempted (shutdown
// began before its attempt), due at once for the next process.
func (s *Store) ReleaseDelivery(ctx context.Context, id, owner string) error {
	err := s.db.WithContext(ctx).Model(&deliveryRow{}).Where("id = ? AND claimed_by = ?", id, owner).
		Updates(map[string]any{"claimed_by": nil, "claimed_until": nil}).Error
	if err != nil {
		return fmt.Errorf("release webhook delivery %s: %w", id, err)
	}
	return nil
}

// ListDeliveries returns a page of deliveries (f.Status, or all), newest
// first (ties broken by id, descending); next is empty on the last page.
// A cursor that does not decode starts from the newest.
func (s *Store) ListDeliveries(ctx context.Context, f patent.DeliveryFilter, limit int, after string) ([]patent.Delivery, string, error) {
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
// attempt). Returns patent.ErrNotFound for an unknown id and
// patent.ErrConflict for a delivery that is not failed (pending: it is
// retried already; delivered: it arrived, and sending it again would be a
// duplicate).
func (s *Store) RetryDelivery(ctx context.Context, id string) (patent.Delivery, error) {
	var row deliveryRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Take(&row, "id = ?", id).Error; err != nil {
			return translate(err, patent.NewKindError(patent.ErrNotFound, "Webhook delivery not found"), patent.ErrConflict)
		}
		if row.Status != patent.DeliveryFailed {
			return patent.NewKindError(patent.ErrConflict, "Webhook delivery is "+row.Status+"; only a failed delivery can be retried")
		}
		now := utc(s.now())
		row.Status, row.Attempts, row.NextAttemptAt, row.ClaimedBy, row.ClaimedUntil = patent.DeliveryPending, 0, &now, nil, nil
		return tx.Model(&deliveryRow{}).Where("id = ? AND status = ?", id, patent.DeliveryFailed).Updates(map[string]any{
			"status": row.Status, "attempts": 0, "next_attempt_at": now, "claimed_by": nil, "claimed_until": nil}).Error
	})
	if err != nil {
		// The sentinels' own messages are what a client sees.
		return patent.Delivery{}, err
	}
	return row.toDomain(), nil
}

// PendingDeliveries counts the deliveries not yet delivered or failed.
func (s *Store) PendingDeliveries(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&deliveryRow{}).Where("status = ?", patent.DeliveryPending).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count pending webhook deliveries: %w", err)
	}
	return n, nil
}

// PruneDeliveries deletes the deliveries delivered before delivered and
// those that failed (for good) and were created before failed, and returns
// how many.
func (s *Store) PruneDeliveries(ctx context.Context, delivered, failed time.Time) (int64, error) {
	res := s.db.WithContext(ctx).
		Where("(status = ? AND delivered_at < ?) OR (status = ? AND created_at < ?)",
			patent.DeliveryDelivered, utc(delivered), patent.DeliveryFailed, utc(failed)).
		Delete(&deliveryRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune webhook deliveries: %w", res.Error)
	}
	return res.RowsAffected, nil
}
