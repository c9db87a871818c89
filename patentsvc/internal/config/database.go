package config

import (
	"errors"
	"net/url"
	"strings"
)

// Dialects of Database, as package store names them.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Database is DATABASE_URL read: which database, and the DSN to open it
// with (a password in it is only ever passed to the driver).
type Database struct {
	Dialect string
	DSN     Secret
}

// libpqKeywords are the connection parameters of libpq's key=value form
// (PostgreSQL documentation, "Parameter Key Words"); a DSN whose first
// word is one of them is PostgreSQL.
var libpqKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "connect_timeout": true, "options": true, "application_name": true,
	"sslmode": true, "sslcert": true, "sslkey": true, "sslrootcert": true, "sslpassword": true,
	"target_session_attrs": true, "service": true, "channel_binding": true, "krbsrvname": true,
	"gssencmode": true, "requiressl": true, "sslcompression": true, "sslcrl": true,
	"keepalives": true, "keepalives_idle": true, "keepalives_interval": true, "keepalives_count": true,
	"tcp_user_timeout": true, "fallback_application_name": true, "client_encoding": true,
}

// ParseDatabase reads a DATABASE_URL value. Schemes are case-insensitive
// (and passed on in lower case, as the driver wants them); a libpq
// key=value DSN is PostgreSQL. SQLite is a sqlite: or file: URL, or, in
// development only, a bare path or nothing (the default file). Errors
// never quote the value: it may hold a password.
func ParseDatabase(v string, development bool) (Database, error) {
	switch {
	case v == "":
		if !development {
			return Database{}, errors.New("required outside APP_ENV=development (SQLite is for development only): a postgres:// URL or a key=value DSN")
		}
		return Database{Dialect: SQLite, DSN: DefaultSQLitePath}, nil
	case isKeyValueDSN(v):
		return Database{Dialect: Postgres, DSN: Secret(v)}, nil
	}
	scheme, rest, ok := strings.Cut(v, ":")
	switch lower := strings.ToLower(scheme); {
	case ok && (lower == "postgres" || lower == "postgresql") && strings.HasPrefix(rest, "//"):
		if _, err := url.Parse(lower + ":" + rest); err != nil {
			return Database{}, errors.New("not a valid postgres:// URL")
		}
		return Database{Dialect: Postgres, DSN: Secret(lower + ":" + rest)}, nil
	case ok && (lower == "sqlite" || lower == "file"):
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return Database{}, errors.New("sqlite: names no file")
		}
		return Database{Dialect: SQLite, DSN: Secret(path)}, nil
	case strings.Contains(v, "://") || strings.Contains(v, "="):
		return Database{}, errors.New("not recognised: want a postgres:// or postgresql:// URL, a libpq key=value DSN, or sqlite:<path>")
	case !development:
		return Database{}, errors.New("a bare file path (SQLite) is accepted only with APP_ENV=development; write sqlite:<path> to mean it, or give a postgres:// URL")
	}
	return Database{Dialect: SQLite, DSN: Secret(v)}, nil
}

// isKeyValueDSN reports whether v is libpq's key=value form: its first
// word is a known keyword followed by '='.
func isKeyValueDSN(v string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(v), " ")
	key, _, ok := strings.Cut(word, "=")
	return ok && libpqKeywords[strings.ToLower(strings.TrimSpace(key))]
}

// String describes the database for the log: the dialect and where it is,
// never a password.
func (d Database) String() string {
	dsn := d.DSN.Reveal()
	switch {
	case d.Dialect == SQLite:
		return "sqlite:" + dsn
	case isKeyValueDSN(dsn):
		return "postgres (" + keyValueWithout(dsn, "password", "sslpassword") + ")"
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres"
	}
	u.User = userOnly(u.User)
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "redacted")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func userOnly(u *url.Userinfo) *url.Userinfo {
	if u == nil {
		return nil
	}
	return url.User(u.Username())
}

// keyValueWithout returns the key=value DSN's words without the named
// keys. A value in single quotes may hold spaces; such words are dropped
// whole when their key is named.
func keyValueWithout(dsn string, drop ...string) string {
	var out []string
	words := strings.Fields(dsn)
	for i := 0; i < len(words); i++ {
		key, val, _ := strings.Cut(words[i], "=")
		skip := false
		for _, d := range drop {
			skip = skip || strings.EqualFold(key, d)
		}
		// A quoted value runs to the word that closes the quote.
		for strings.HasPrefix(val, "'") && !closesQuote(val) && i+1 < len(words) {
			i++
			val += " " + words[i]
		}
		if !skip {
			out = append(out, key+"="+val)
		}
	}
	return strings.Join(out, " ")
}

// closesQuote reports whether a value that opens with ' also closes it.
func closesQuote(val string) bool {
	rest := strings.ReplaceAll(val[1:], `\'`, "")
	return strings.HasSuffix(rest, "'")
}
