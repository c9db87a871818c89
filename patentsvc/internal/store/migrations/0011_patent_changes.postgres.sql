-- What tracking tells, and what the portfolio covers (decisions.md,
-- "patentsvc: what changed, and what the portfolio covers").
--
-- tracked_patents: every publication number the scheduled runs of a
-- tracked company's current tracking have seen, and whether the latest
-- run whose search answered returned it (in_last_run). A run's new patents
-- are those not in it; its dropped patents those in_last_run it no longer
-- returned. The rows belong to the tracking: untracking forgets them (ON
-- DELETE CASCADE). They are not pruned with tracking_runs, so a patent seen
-- long ago is never new again.
CREATE TABLE tracked_patents (
    tracked_company_id BIGINT NOT NULL REFERENCES tracked_companies (id) ON DELETE CASCADE,
    patent_id          TEXT NOT NULL,
    first_seen_at      TIMESTAMPTZ NOT NULL,
    in_last_run        BOOLEAN NOT NULL,
    PRIMARY KEY (tracked_company_id, patent_id)
);
-- seen_since: when the company's runs started keeping what they saw (its
-- baseline run: its first run whose search answered; for a company tracked
-- before this migration, its first such run since that returned patents).
-- NULL: the next such run is the baseline, which raises no new_patents
-- alert, so a company tracked before this migration is not told that its
-- whole portfolio is new.
ALTER TABLE tracked_companies ADD COLUMN seen_since TIMESTAMPTZ;
-- A run's new patents (JSON [{patent_id, title, publication_date,
-- pdf_link}], for GET /admin/changes; their ids alone, JSON [patent_id],
-- for the history) and dropped patents (JSON [patent_id]); NULL for none.
-- changed: it found either, the runs GET /admin/changes lists.
ALTER TABLE tracking_runs ADD COLUMN new_patents TEXT;
ALTER TABLE tracking_runs ADD COLUMN new_patent_ids TEXT;
ALTER TABLE tracking_runs ADD COLUMN dropped_patents TEXT;
ALTER TABLE tracking_runs ADD COLUMN changed BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX tracking_runs_changes ON tracking_runs (run_at, id) WHERE changed;
-- A new_patents alert's patents (JSON as tracking_runs.new_patents).
ALTER TABLE alerts ADD COLUMN patents TEXT;
-- A portfolio analysis's facts (JSON Portfolio) and the patents it
-- analysed (JSON [{patent_id, title, publication_date, pdf_link, read,
-- error}]); NULL for single-patent analyses and older ones.
ALTER TABLE analyses ADD COLUMN portfolio TEXT;
ALTER TABLE analyses ADD COLUMN patents TEXT;
