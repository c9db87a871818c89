package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

type rateHitRow struct {
	Endpoint string
	Client   string
	At       time.Time
}

func (rateHitRow) TableName() string { return "rate_limit_hits" }

type rateCounterRow struct {
	Endpoint string `gorm:"primaryKey"`
	Total    int64
	Rejected int64
}

func (rateCounterRow) TableName() string { return "rate_limit_counters" }

// RateWindows keeps the rate limiter's moving windows and counters in the
// database, one for every replica sharing it; it implements
// ratelimit.Shared. run() uses it on PostgreSQL; it works on SQLite too
// (IMMEDIATE transactions serialise every Take there), which the tests use.
//
// The times are the callers' clocks (the replicas', assumed NTP-synced),
// stored with microsecond precision.
type RateWindows struct{ s *base }

// RateWindows returns the shared rate-limit windows.
func (s *Store) RateWindows() *RateWindows { return &RateWindows{s: s.base} }

// upsertCounter adds a request, and a refusal when the second parameter is
// 1, to an endpoint's counters (PostgreSQL and SQLite 3.24+ alike).
const upsertCounter = `INSERT INTO rate_limit_counters (endpoint, total, rejected) VALUES (?, 1, ?)
ON CONFLICT (endpoint) DO UPDATE SET total = rate_limit_counters.total + 1,
rejected = rate_limit_counters.rejected + excluded.rejected`

// Take counts a request from client to endpoint at now: allowed, and
// recorded, when fewer than limit of the client's requests are in the
// window (now-per, now]; otherwise refused with the time until the oldest
// of them leaves the window. The endpoint's counters grow either way, in
// the same transaction, so a failed Take records nothing.
//
// Exactness across replicas: the transaction first takes an advisory lock
// on (endpoint, client) (pg_advisory_xact_lock on a 64-bit hash of both,
// released at commit), so the count it reads next, in a fresh READ
// COMMITTED snapshot, includes every earlier Take of that client, whatever
// replica made it. Two clients whose keys collide merely wait for each
// other. Locks are always taken in the same order (window, then the
// endpoint's counter row), so Takes cannot deadlock.
func (r *RateWindows) Take(ctx context.Context, endpoint, client string, limit int, per time.Duration, now time.Time) (bool, time.Duration, error) {
	now = utc(now)
	var times []time.Time
	err := r.s.inTx(ctx, func(tx *gorm.DB) error {
		if err := r.s.lockWindow(tx, endpoint, client); err != nil {
			return err
		}
		// The oldest live requests, at most limit of them: enough to decide
		// and to know when a place frees.
		if err := tx.Model(&rateHitRow{}).Where("endpoint = ? AND client = ? AND at > ?", endpoint, client, now.Add(-per)).
			Order("at").Limit(limit).Pluck("at", &times).Error; err != nil {
			return err
		}
		refused := 0
		if len(times) >= limit {
			refused = 1
		} else if err := tx.Create(&rateHitRow{Endpoint: endpoint, Client: client, At: now}).Error; err != nil {
			return err
		}
		return tx.Exec(upsertCounter, endpoint, refused).Error
	})
	if err != nil {
		return false, 0, fmt.Errorf("rate-limit window %s: %w", endpoint, err)
	}
	if len(times) >= limit {
		return false, times[0].Add(per).Sub(now), nil
	}
	return true, 0, nil
}

// lockWindow serialises the Takes of one (endpoint, client) on
// PostgreSQL until the transaction ends. SQLite needs none.
func (s *base) lockWindow(tx *gorm.DB, endpoint, client string) error {
	if s.dialect != Postgres {
		return nil
	}
	// A space cannot occur in an endpoint path or an IP address.
	return tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", endpoint+" "+client).Error
}

// Counts returns the endpoint's total and rejected requests as every Take,
// on every replica, recorded them; zero for an endpoint never seen.
func (r *RateWindows) Counts(ctx context.Context, endpoint string) (total, rejected int64, err error) {
	var row rateCounterRow
	if err := r.s.db.WithContext(ctx).Where("endpoint = ?", endpoint).Limit(1).Find(&row).Error; err != nil {
		return 0, 0, fmt.Errorf("rate-limit counters %s: %w", endpoint, err)
	}
	return row.Total, row.Rejected, nil
}

// Prune deletes the endpoint's requests at or before before and returns
// how many.
func (r *RateWindows) Prune(ctx context.Context, endpoint string, before time.Time) (int64, error) {
	res := r.s.db.WithContext(ctx).Where("endpoint = ? AND at <= ?", endpoint, utc(before)).Delete(&rateHitRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune rate-limit window %s: %w", endpoint, res.Error)
	}
	return res.RowsAffected, nil
}
