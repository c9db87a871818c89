// Package storetest opens the databases store-backed tests run against:
// always an SQLite file in a temporary directory, and PostgreSQL when
// TEST_DATABASE_URL is set, in a schema of its own that is dropped when the
// test ends (so test packages can run in parallel against one database).
//
// Without TEST_DATABASE_URL the PostgreSQL subtests skip with a visible
// message; with REQUIRE_POSTGRES=1 (set by .ci/run) they fail instead, so
// CI always runs them.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/gatewayapis/patentsvc/internal/store"
)

// Dialects lists the databases in the order Each runs them.
var Dialects = []string{store.SQLite, store.Postgres}

// Each runs fn once per dialect as a subtest named after it.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) { fn(t, Open(t, d, time.Now)) })
	}
}

// Open opens a fresh, migrated store of the dialect, closed (and, on
// PostgreSQL, dropped) when the test ends. It logs which database it used.
func Open(tb testing.TB, dialect string, now func() time.Time) *store.Store {
	tb.Helper()
	dsn := DSN(tb, dialect)
	s, err := store.Open(context.Background(), dialect, dsn, store.Pool{MaxOpen: 10, MaxIdle: 5, MaxLifetime: time.Minute},
		slog.New(slog.NewJSONHandler(io.Discard, nil)), now)
	if err != nil {
		tb.Fatalf("open %s store: %v", dialect, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// DSN returns a DSN for a fresh, empty database of the dialect.
func DSN(tb testing.TB, dialect string) string {
	tb.Helper()
	if dialect == store.SQLite {
		path := filepath.Join(tb.TempDir(), "patentsvc.db")
		tb.Logf("database: sqlite file %s", path)
		return path
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			tb.Fatal("REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set")
		}
		tb.Skip("database: postgres skipped, TEST_DATABASE_URL is not set")
	}
	schema := "t_" + randomHex(8)
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		tb.Fatalf("connect to TEST_DATABASE_URL: %v", err)
	}
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		if db, err := admin.DB(); err == nil {
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	tb.Logf("database: postgres %s schema %s", u.Host, schema)
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
