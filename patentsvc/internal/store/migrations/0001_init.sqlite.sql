CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT NOT NULL,
    password_hash BLOB NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);

-- One row, inserted by the first registration: whoever inserts it is the
-- first admin. It is never deleted, so a later registration never becomes
-- admin again.
CREATE TABLE admin_claim (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    claimed_at DATETIME NOT NULL
);

CREATE TABLE refresh_tokens (
    jti        TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME,
    created_at DATETIME NOT NULL
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);

CREATE TABLE tracked_companies (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    company_name      TEXT NOT NULL,
    last_patent_count INTEGER NOT NULL DEFAULT 0,
    last_analysis_at  DATETIME,
    next_run_at       DATETIME NOT NULL,
    created_at        DATETIME NOT NULL
);
CREATE UNIQUE INDEX tracked_companies_name_ci ON tracked_companies (lower(company_name));
CREATE INDEX tracked_companies_due ON tracked_companies (next_run_at);

CREATE TABLE alerts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    company_name TEXT NOT NULL,
    alert_type   TEXT NOT NULL,
    message      TEXT NOT NULL,
    old_value    REAL NOT NULL,
    new_value    REAL NOT NULL,
    created_at   DATETIME NOT NULL
);
CREATE INDEX alerts_newest ON alerts (created_at DESC, id DESC);

CREATE TABLE analyses (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    company_name      TEXT,
    analysis_type     TEXT NOT NULL,
    patent_id         TEXT,
    model             TEXT,
    response          TEXT,
    cached            BOOLEAN NOT NULL DEFAULT FALSE,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    analyzed_at       DATETIME NOT NULL
);
-- Listings, exports and trends read non-cached analyses newest first.
CREATE INDEX analyses_newest ON analyses (analyzed_at DESC, id DESC) WHERE NOT cached;
CREATE INDEX analyses_company_newest ON analyses (lower(company_name), analyzed_at DESC, id DESC) WHERE NOT cached;

CREATE TABLE patents (
    patent_id        TEXT PRIMARY KEY,
    company_name     TEXT,
    title            TEXT,
    publication_date TEXT,
    pdf_link         TEXT,
    summary          TEXT,
    pdf_path         TEXT,
    updated_at       DATETIME NOT NULL
);

CREATE TABLE search_cache (
    cache_key  TEXT PRIMARY KEY,
    response   TEXT NOT NULL,
    created_at DATETIME NOT NULL
);

CREATE TABLE llm_cache (
    cache_key         TEXT PRIMARY KEY,
    model             TEXT NOT NULL,
    answered_model    TEXT,
    response          TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        DATETIME NOT NULL
);

CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    total            INTEGER NOT NULL,
    completed        INTEGER NOT NULL DEFAULT 0,
    model            TEXT,
    request          TEXT NOT NULL,
    result           TEXT,
    error            TEXT,
    lease_owner      TEXT,
    lease_expires_at DATETIME,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL
);
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);
CREATE INDEX jobs_status_newest ON jobs (status, created_at DESC, id DESC);
CREATE INDEX jobs_lease ON jobs (status, lease_expires_at);
