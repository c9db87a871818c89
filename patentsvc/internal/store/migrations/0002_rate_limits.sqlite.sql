-- The per-IP moving windows of the rate-limited endpoints
-- (store.RateWindows). run() uses them on PostgreSQL only; on SQLite, a
-- single process, the windows stay in memory, and the tables are here so
-- that the schema, and the tests of RateWindows, are the same on both.
CREATE TABLE rate_limit_hits (
    endpoint TEXT NOT NULL,
    client   TEXT NOT NULL,
    at       DATETIME NOT NULL
);
CREATE INDEX rate_limit_hits_window ON rate_limit_hits (endpoint, client, at);

CREATE TABLE rate_limit_counters (
    endpoint TEXT PRIMARY KEY,
    total    INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0
);
