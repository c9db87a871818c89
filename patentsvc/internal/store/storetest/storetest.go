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
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
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
// It inserts units but runs none (see OpenQueue), and has no liveness
// session (every runner counts as alive) unless the test opens one.
func Open(tb testing.TB, dialect string, now func() time.Time) *store.Store {
	tb.Helper()
	return OpenAt(tb, dialect, DSN(tb, dialect), now)
}

// OpenAt is Open on the database at dsn (from DSN, shared by the stores of
// a test of replicas).
func OpenAt(tb testing.TB, dialect, dsn string, now func() time.Time) *store.Store {
	tb.Helper()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	s, err := store.Open(context.Background(), dialect, dsn, store.Pool{MaxOpen: 10, MaxIdle: 5, MaxLifetime: time.Minute}, logger, now)
	if err != nil {
		tb.Fatalf("open %s store: %v", dialect, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// NewQueue builds a work queue on s, the store of the database at dsn,
// that runs units when started (StartQueue): cfg's workers (its Dialect
// and timeouts are filled in when zero) run them with w, as a replica
// whose liveness session the store opened (its start-up done: the
// start-up rule is the test's to apply).
func NewQueue(tb testing.TB, s *store.Store, dsn string, cfg queue.Config, w queue.Workers) *queue.Queue {
	tb.Helper()
	sess := OpenSession(tb, s)
	db, err := s.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Dialect = s.Dialect()
	if s.Dialect() == store.Postgres && cfg.ListenDSN == "" {
		cfg.ListenDSN = dsn // units are taken up at once, as in production
	}
	cfg.ScheduledTimeout = cmpOr(cfg.ScheduledTimeout, time.Minute)
	cfg.JobTimeout = cmpOr(cfg.JobTimeout, time.Minute)
	cfg.DeliveryTimeout = cmpOr(cfg.DeliveryTimeout, time.Minute)
	q, err := queue.New(context.Background(), db, cfg, sess, w, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatalf("work queue: %v", err)
	}
	return q
}

// OpenSession opens s's liveness session and ends its start-up; it closes
// when the test ends (after the queue stops: StartQueue's cleanup runs
// first).
func OpenSession(tb testing.TB, s *store.Store) *store.Session {
	tb.Helper()
	ctx := context.Background()
	sess, err := s.OpenSession(ctx, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatalf("liveness session: %v", err)
	}
	tb.Cleanup(sess.Close)
	if err := sess.Started(ctx); err != nil {
		tb.Fatalf("liveness session: %v", err)
	}
	return sess
}

// StartQueue starts q's workers; they stop (within 10 s) when the test
// ends.
func StartQueue(tb testing.TB, q *queue.Queue) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := q.Start(ctx); err != nil {
		cancel()
		tb.Fatalf("start the work queue: %v", err)
	}
	tb.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		q.Shutdown(stop)
		cancel()
	})
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
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

// Unit is a row of the work queue's table, as tests look at it.
type Unit struct {
	ID    int64
	Kind  string
	State string
	Args  string // JSON
}

// Units lists the queue's units of kind ("" for every kind), oldest first.
func Units(tb testing.TB, s *store.Store, kind string) []Unit {
	tb.Helper()
	db, err := s.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	q := "SELECT id, kind, state, CAST(args AS TEXT) FROM river_job"
	if s.Dialect() == store.SQLite {
		q = "SELECT id, kind, state, json(args) FROM river_job" // args are jsonb blobs there
	}
	var args []any
	if kind != "" {
		q += " WHERE kind = " + map[string]string{store.SQLite: "?", store.Postgres: "$1"}[s.Dialect()]
		args = append(args, kind)
	}
	rows, err := db.QueryContext(context.Background(), q+" ORDER BY id", args...)
	if err != nil {
		tb.Fatalf("list units: %v", err)
	}
	defer rows.Close()
	var out []Unit
	for rows.Next() {
		var u Unit
		if err := rows.Scan(&u.ID, &u.Kind, &u.State, &u.Args); err != nil {
			tb.Fatal(err)
		}
		var compact bytes.Buffer // PostgreSQL's jsonb prints spaces
		if err := json.Compact(&compact, []byte(u.Args)); err == nil {
			u.Args = compact.String()
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// SetUnitState puts unit id in state, as River would (a unit given up is
// "discarded").
func SetUnitState(tb testing.TB, s *store.Store, id int64, state string) {
	tb.Helper()
	db, err := s.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	var finalized any // River keeps finalized_at on the final states only
	if state == "completed" || state == "cancelled" || state == "discarded" {
		finalized = time.Now().UTC()
		if s.Dialect() == store.SQLite {
			finalized = time.Now().UTC().Format("2006-01-02 15:04:05.000")
		}
	}
	q := map[string]string{store.SQLite: "UPDATE river_job SET state = ?, finalized_at = ? WHERE id = ?",
		store.Postgres: "UPDATE river_job SET state = $1, finalized_at = $2 WHERE id = $3"}[s.Dialect()]
	if _, err := db.ExecContext(context.Background(), q, state, finalized, id); err != nil {
		tb.Fatalf("set unit %d %s: %v", id, state, err)
	}
}

// SetUnitRunning puts unit id in state running, taken up last by runner
// (a liveness session's name, River's attempted_by), on its attempt-th
// run, as River's fetch does.
func SetUnitRunning(tb testing.TB, s *store.Store, id int64, runner string, attempt int) {
	tb.Helper()
	db, err := s.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	q := map[string]string{
		store.SQLite:   "UPDATE river_job SET state = 'running', attempted_by = json_array(?), attempt = ?, attempted_at = datetime('now', 'subsec') WHERE id = ?",
		store.Postgres: "UPDATE river_job SET state = 'running', attempted_by = ARRAY[$1::text], attempt = $2, attempted_at = now() WHERE id = $3",
	}[s.Dialect()]
	if _, err := db.ExecContext(context.Background(), q, runner, attempt, id); err != nil {
		tb.Fatalf("set unit %d running: %v", id, err)
	}
}

// Track starts tracking name on s as the tracking core does: its first run
// due at at, queued with it.
func Track(ctx context.Context, s *store.Store, name patent.CompanyName, at time.Time) (patent.TrackedCompany, error) {
	return s.Tracking().CreateTracked(ctx, name, patent.ScheduledRun{DueAt: at, CompanyName: name.String()})
}
