// Package store keeps the patent service's data in PostgreSQL (production)
// or an embedded SQLite file (development and the quick start), through
// GORM.
//
// # Caveats
//
//   - The schema comes from the versioned SQL files in migrations/, one per
//     dialect, applied in order at Open and recorded in schema_migrations.
//     On PostgreSQL the runner holds an advisory lock on one connection, so
//     replicas starting together apply each migration once.
//   - Timestamps are stored in UTC with microsecond precision (PostgreSQL's),
//     so a value read back equals the value written, which keyset cursors
//     rely on.
//   - SQLite runs with WAL, foreign keys on, and IMMEDIATE transactions, so
//     writers queue instead of failing with "database is locked".
//   - RateWindows (the rate limiter's shared windows) serialises the checks
//     of one client with a transaction-scoped advisory lock on PostgreSQL,
//     so a limit is exact across replicas; its hits table is UNLOGGED
//     (short-lived rows; a crash empties it).
//   - Webhook deliveries (webhook_deliveries) are inserted only inside
//     the transaction that stores their alert (CreateAlert) or job end
//     (FinishJob), from the composer the caller passes; they are claimed
//     like tracked companies (FOR UPDATE SKIP LOCKED on PostgreSQL, a
//     claimed_until lease everywhere), and an attempt is recorded only by
//     the claim's holder (ErrClaimLost otherwise).
//   - A tracked company's history (tracking_runs) is written only by
//     RecordRun and RecordFailure, in the transaction that records the run
//     on tracked_companies and, for a run that raised one, its alert and
//     the alert's deliveries; the rows belong to the tracked_companies row
//     (ON DELETE CASCADE), and RunPruner deletes them past their age in
//     batches (PruneTrackingRuns).
//   - Every method takes the context of the request or job it serves;
//     driver errors become the patent package's sentinels here (duplicate
//     key: patent.ErrConflict; no row: patent.ErrNotFound).
package store
