-- The work queue (decisions.md, "patentsvc: work every replica shares,
-- bounded and fair"): jobs, scheduled runs and webhook deliveries are
-- units in River's tables (river_job, migrated by the queue package after
-- this file), which every replica's workers drain. Each row names the unit
-- it runs under (unit_id = river_job.id); the leases and claims they
-- replace go.

-- A job is held by the unit that took it up (a JobStart), from when it
-- started; a unit run again after its process died takes it up again.
DROP INDEX jobs_lease;
ALTER TABLE jobs DROP COLUMN lease_owner;
ALTER TABLE jobs DROP COLUMN lease_expires_at;
ALTER TABLE jobs ADD COLUMN unit_id BIGINT;
ALTER TABLE jobs ADD COLUMN started_at DATETIME;
-- A user's unfinished jobs (JOBS_MAX_PER_USER) and running ones (the fair
-- pick of the next job to start).
CREATE INDEX jobs_user_status ON jobs (user_id, status);

-- A tracked company's unit of its current due time (a ScheduledRun).
ALTER TABLE tracked_companies ADD COLUMN unit_id BIGINT;

-- A delivery's unit (a DeliveryAttempt), which makes its attempts.
DROP INDEX webhook_deliveries_due;
ALTER TABLE webhook_deliveries DROP COLUMN claimed_by;
ALTER TABLE webhook_deliveries DROP COLUMN claimed_until;
ALTER TABLE webhook_deliveries ADD COLUMN unit_id BIGINT;
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (status, unit_id);
