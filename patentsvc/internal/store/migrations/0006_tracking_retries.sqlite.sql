-- Consecutive failed scheduled runs of a tracked company: a failed run is
-- retried after SCHEDULE_RETRY_BASE, doubled for each further failure and
-- capped at SCHEDULE_INTERVAL_HOURS; a successful run resets it to 0. Kept
-- in the database so that every replica, and the next leader, backs off
-- from the same count.
ALTER TABLE tracked_companies ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
