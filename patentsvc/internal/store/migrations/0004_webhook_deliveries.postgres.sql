-- Durable webhook deliveries (decisions.md, "durable webhooks"): one row
-- per (event, target URL), inserted in the transaction of the alert or job
-- end that causes it, sent from here by any replica. id is the delivery's
-- webhook-id; payload is the body, encoded once, so every attempt sends
-- the same bytes. url may carry a token: it is never logged or listed
-- (url_host is). A replica claims a due row (claimed_by, claimed_until,
-- FOR UPDATE SKIP LOCKED) for one attempt; a claim of a process that died
-- lapses at claimed_until and the row is due again.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    event            TEXT NOT NULL,
    url              TEXT NOT NULL,
    url_host         TEXT NOT NULL,
    payload          BYTEA NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT,
    next_attempt_at  TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    delivered_at     TIMESTAMPTZ,
    claimed_by       TEXT,
    claimed_until    TIMESTAMPTZ
);
-- The deliverer's query: pending rows by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- The admin listing, newest first, optionally of one status.
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_status_newest ON webhook_deliveries (status, created_at DESC, id DESC);
