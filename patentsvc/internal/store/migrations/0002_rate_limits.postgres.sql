-- The per-IP moving windows of the rate-limited endpoints, shared by every
-- replica (store.RateWindows): one row per request a window let through.
-- Rows live a few minutes (the janitor prunes them), so the table is
-- UNLOGGED: no WAL for a row written on every login, at the price of an
-- empty table after a crash or a failover, which only forgets who logged in
-- during the last minute.
CREATE UNLOGGED TABLE rate_limit_hits (
    endpoint TEXT NOT NULL,
    client   TEXT NOT NULL,
    at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX rate_limit_hits_window ON rate_limit_hits (endpoint, client, at);

-- Every request to a rate-limited endpoint and every refusal, for
-- GET /admin/rate-limits, counted by whichever replica answered.
CREATE TABLE rate_limit_counters (
    endpoint TEXT PRIMARY KEY,
    total    BIGINT NOT NULL DEFAULT 0,
    rejected BIGINT NOT NULL DEFAULT 0
);
