-- A user's token version: raised to revoke every access token the user
-- holds (a detected refresh-token replay); access tokens carry the version
-- they were issued under. Tokens issued before this column carry none,
-- which reads as 0, the default.
ALTER TABLE users ADD COLUMN token_version INTEGER NOT NULL DEFAULT 0;
