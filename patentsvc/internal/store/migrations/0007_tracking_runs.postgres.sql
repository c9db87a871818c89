-- The history of each tracked company (decisions.md, "The analyst's
-- report"): one row per scheduled run, inserted in the transaction that
-- records the run on tracked_companies (RecordRun, RecordFailure) and, when
-- the run raised one, its alert. patent_count is NULL when the search
-- failed; success is false for any failed run; alert tells whether the run
-- raised an alert. The rows belong to the tracking, not to the name:
-- untracking a company deletes its history (ON DELETE CASCADE), and a
-- company tracked again starts a new one, as it starts a new baseline for
-- the alert rule. Rows older than TRACKING_HISTORY_DAYS are pruned.
CREATE TABLE tracking_runs (
    id                 BIGSERIAL PRIMARY KEY,
    tracked_company_id BIGINT NOT NULL REFERENCES tracked_companies (id) ON DELETE CASCADE,
    run_at             TIMESTAMPTZ NOT NULL,
    patent_count       INTEGER,
    success            BOOLEAN NOT NULL,
    alert              BOOLEAN NOT NULL DEFAULT FALSE
);
-- A company's history, oldest first (and the cascade's lookup).
CREATE INDEX tracking_runs_company_time ON tracking_runs (tracked_company_id, run_at, id);
-- The pruner's query.
CREATE INDEX tracking_runs_time ON tracking_runs (run_at);
