// Package store keeps the patent service's data in PostgreSQL (production)
// or an embedded SQLite file (development and the quick start), through
// GORM.
//
// Its tables are reached by aggregate, one type each, which Store hands
// out: Users (accounts, refresh tokens), Tracking (tracked companies,
// their runs, the patents they saw, alerts), Jobs, Analyses (analyses,
// patents, what is counted of them), Caches (search and LLM caches),
// Deliveries (webhook deliveries). Each core declares, beside itself, the
// few methods of one aggregate it calls. The store keeps the rows and
// their transactions; the rules that decide what to store are the cores'
// (the first run of a newly tracked company, the fair pick of a job).
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
//   - Queued work: a tracked company's run, a job's start and a webhook
//     delivery are inserted as units of the work queue (River, through an
//     insert-only client of the store's, units.go) in the transaction that
//     stores them, so neither commits without the other; River's tables
//     are migrated under the same lock, after ours. The rows keep the id
//     of their live unit (unit_id), and the store reads river_job's state
//     to tell whether a unit is still alive; the sweeps (LostJobs,
//     RefillJobStarts, SweepDeliveries, and QueueDue for tracked
//     companies) deal with rows whose unit is gone. package queue runs the
//     units.
//   - Liveness (session.go): OpenSession holds this replica's session, a
//     connection of its own with a session-level advisory lock on the
//     replica's key, named in River as the runner of its units. A unit's
//     runner is dead when its key is not locked (pg_locks; on SQLite, when
//     it is not this process): ReleaseDeadUnits makes its runs and
//     deliveries available again, LostJobs reports its jobs, which the
//     jobs core fails (FailJob) with their webhooks.
//   - Nothing the store stores is composed by a callback: the caller
//     composes the rows (a job's end, a run's outcome and alerts, their
//     webhook deliveries) and hands them over in one call. Webhook
//     deliveries (webhook_deliveries) are inserted only inside the
//     transaction that stores their alert (RecordRun, CreateAlert) or job
//     end (FinishJob, FailJob); an attempt is recorded only while the
//     delivery is pending (patent.ErrConflict otherwise). Alert ids are
//     reserved (ReserveAlertIDs; QueueDue and CreateTracked reserve a run's
//     in its unit, filling in the run the tracking core composed) so that deliveries can name their alert before it is
//     stored.
//   - Jobs are limited per user (CreateJob) under a lock (a
//     transaction-scoped advisory lock on PostgreSQL, SQLite's one
//     writer), so concurrent submissions cannot break the limit. The fair
//     pick of the next job to start is the jobs core's (patent.FairestJob
//     over PendingHeads); StartJob starts a job only while it is pending,
//     so two replicas that pick the same job start it once, and the loser
//     picks again.
//   - A scheduled run is recorded (RecordRun, RecordFailure) only while
//     the company's next_run_at is still the due time its unit was queued
//     for: a unit run twice records once.
//   - A tracked company's history (tracking_runs) is written only by
//     RecordRun and RecordFailure, in the transaction that records the run
//     on tracked_companies and, for a run that raised one, its alert and
//     the alert's deliveries; the rows belong to the tracked_companies row
//     (ON DELETE CASCADE), and PruneTrackingRuns deletes them past their
//     age in batches.
//   - The listings that carry stored text (ListAnalyses, ListJobs) end a
//     page at PageBytes of it as well as at its limit, sized before the
//     rows are loaded; a page may be short while more rows follow.
//   - Every method takes the context of the request or job it serves;
//     driver errors become the patent package's sentinels here (duplicate
//     key: patent.ErrConflict; no row: patent.ErrNotFound).
package store
