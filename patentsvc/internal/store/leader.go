package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// ErrNotLeader is returned by Elector.IsLeader on an instance that does not
// hold the leadership.
var ErrNotLeader = errors.New("not the scheduler leader")

// lockScheduler is the advisory lock whose holder runs the schedule.
const lockScheduler int64 = 0x7061_7465_6e74_0003

// Elector decides which replica runs the schedule: on PostgreSQL the holder
// of a session advisory lock taken on a connection kept for that purpose
// (the lock dies with the session, so a crashed leader frees it at once);
// on SQLite, a single process, always this one. It implements gocron's
// Elector.
type Elector struct {
	s    *Store
	mu   sync.Mutex
	conn *sql.Conn // holds the lock while we lead
}

// Elector returns the store's leader elector.
func (s *Store) Elector() *Elector { return &Elector{s: s} }

// IsLeader returns nil when this instance leads, taking the leadership if
// it is free, and ErrNotLeader otherwise.
func (e *Elector) IsLeader(ctx context.Context) error {
	if e.s.dialect != Postgres {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		// Still leading while the session lives.
		if err := e.conn.PingContext(ctx); err == nil {
			return nil
		}
		e.conn.Close()
		e.conn = nil
	}
	sqlDB, err := e.s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", lockScheduler).Scan(&got); err != nil {
		conn.Close()
		return fmt.Errorf("leader election: %w", err)
	}
	if !got {
		conn.Close()
		return ErrNotLeader
	}
	e.conn = conn
	return nil
}

// Leading reports whether this instance held the leadership at its last
// IsLeader call.
func (e *Elector) Leading() bool {
	if e.s.dialect != Postgres {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conn != nil
}

// Resign gives the leadership up (closing the session releases the lock).
func (e *Elector) Resign() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		e.conn.Close()
		e.conn = nil
	}
}
