-- Jobs belong to the user who submitted them (decisions.md, "patentsvc:
-- ownership, durable webhooks, hardening"). user_id has no foreign key on
-- purpose: a user deleted by an admin keeps their jobs, which admins still
-- see, and the row keeps the id (ids are never reused, so the jobs never
-- pass to another user). Jobs submitted before this migration have no
-- owner (NULL): only admins see them.
ALTER TABLE jobs ADD COLUMN user_id BIGINT;
CREATE INDEX jobs_user_newest ON jobs (user_id, created_at DESC, id DESC);

-- Stored analyses stay shared; each records who asked for it: the user's
-- id as text, NULL for scheduled runs (and analyses stored before this
-- migration).
ALTER TABLE analyses ADD COLUMN requested_by TEXT;
