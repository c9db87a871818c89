package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/riverqueue/river"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// Dialects.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Pool sets the connection pool.
type Pool struct {
	MaxOpen     int
	MaxIdle     int
	MaxLifetime time.Duration
}

// Store is the service's database. It is safe for concurrent use. Its
// tables are reached through its aggregates, one type each (Users,
// Tracking, Jobs, Analyses, Caches, Deliveries): a core takes the one it
// works on, through an interface of its own that names the few methods it
// calls; Store itself opens, pings and closes the database, and holds this
// replica's liveness session.
type Store struct{ *base }

// base is what every aggregate shares: the database, its dialect and
// clock, the queue's inserter and the liveness session.
type base struct {
	db      *gorm.DB
	dialect string
	dsn     string
	now     func() time.Time
	// units inserts the work queue's units in the store's transactions
	// (units.go).
	units *river.Client[*sql.Tx]
	// session is this replica's liveness session once OpenSession opened
	// it (session.go); nil before.
	session *Session
}

// Users are the user accounts and their refresh tokens (users.go).
type Users struct{ *base }

// Tracking is the tracked companies, their scheduled runs' history, the
// patents they saw and their alerts (tracking.go, history.go).
type Tracking struct{ *base }

// Jobs are the asynchronous batches (jobs.go).
type Jobs struct{ *base }

// Analyses are the stored analyses and patents, and what is counted of
// them (analyses.go, analytics.go, patents.go, history.go).
type Analyses struct{ *base }

// Caches are the search and LLM caches (caches.go).
type Caches struct{ *base }

// Deliveries are the webhook deliveries (webhooks.go).
type Deliveries struct{ *base }

// Users returns the user accounts.
func (s *Store) Users() Users { return Users{s.base} }

// Tracking returns the tracked companies.
func (s *Store) Tracking() Tracking { return Tracking{s.base} }

// Jobs returns the jobs.
func (s *Store) Jobs() Jobs { return Jobs{s.base} }

// Analyses returns the stored analyses.
func (s *Store) Analyses() Analyses { return Analyses{s.base} }

// Caches returns the search and LLM caches.
func (s *Store) Caches() Caches { return Caches{s.base} }

// Deliveries returns the webhook deliveries.
func (s *Store) Deliveries() Deliveries { return Deliveries{s.base} }

// Open connects to the database of dialect (Postgres: a postgres:// URL or
// a libpq key=value DSN; SQLite: a file path, with or without a sqlite: or
// file: prefix, whose directory is created if missing), applies pending
// migrations, its own and the work queue's (River's), and returns the
// store. The caller
// decides the dialect (config reads DATABASE_URL); Open never guesses it
// from the DSN. now is the clock for the timestamps the store writes.
func Open(ctx context.Context, dialect, dsn string, pool Pool, logger *slog.Logger, now func() time.Time) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                                   newGormLogger(logger),
		TranslateError:                           true,
		NowFunc:                                  func() time.Time { return utc(now()) },
		DisableForeignKeyConstraintWhenMigrating: true,
	}
	var dialector gorm.Dialector
	switch dialect {
	case Postgres:
		dialector = postgres.Open(dsn)
	case SQLite:
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("store: create directory: %w", err)
		}
		// No _time_format: the driver's default is already the sortable
		// "sqlite" layout, and setting it makes this driver version skip
		// _txlock (it returns early), which would leave transactions
		// DEFERRED and concurrent writers failing with SQLITE_BUSY.
		dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
			"&_pragma=synchronous(NORMAL)&_txlock=immediate"
		dialector = sqlite.Open(dsn)
	default:
		return nil, fmt.Errorf("store: unknown dialect %q", dialect)
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open %s database: %w", dialect, err)
	}
	if err := db.Use(newTracing(dialect)); err != nil {
		return nil, fmt.Errorf("store: tracing: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	sqlDB.SetMaxOpenConns(pool.MaxOpen)
	sqlDB.SetMaxIdleConns(pool.MaxIdle)
	sqlDB.SetConnMaxLifetime(pool.MaxLifetime)

	s := &Store{&base{db: db, dialect: dialect, dsn: dsn, now: now}}
	if err := s.Ping(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if err := s.migrate(ctx, logger); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if s.units, err = newInserter(dialect, sqlDB, logger); err != nil {
		sqlDB.Close()
		return nil, err
	}
	logger.Info("database ready", "dialect", dialect)
	return s, nil
}

// Dialect returns Postgres or SQLite.
func (s *Store) Dialect() string { return s.dialect }

// SQL is the store's connection pool, on which the work queue's workers
// run (its units are inserted in the store's transactions).
func (s *Store) SQL() (*sql.DB, error) { return s.db.DB() }

// Close closes the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction.
func (s *base) inTx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.db.WithContext(ctx).Transaction(fn)
}

// lockKey serialises a kind of change across transactions: a PostgreSQL
// transaction-scoped advisory lock. SQLite needs none: its IMMEDIATE
// transactions already run one writer at a time.
func (s *base) lockKey(tx *gorm.DB, key int64) error {
	if s.dialect != Postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock(?)", key).Error
}

// Advisory lock keys (arbitrary, fixed, distinct).
const (
	lockMigrations int64 = 0x7061_7465_6e74_0001
	lockAdmins     int64 = 0x7061_7465_6e74_0002
	// lockJobs orders the changes that count jobs: a submission against
	// its user's limit, a worker's pick of the fairest job, the sweeps.
	lockJobs int64 = 0x7061_7465_6e74_0004
)

// utc normalises a time as the store keeps it.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns this dialect's migrations in version order. Files are
// named NNNN_name.<dialect>.sql.
func (s *base) migrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), "."+s.dialect+".sql")
		if !ok {
			continue
		}
		num, name, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration file %s: bad version", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrate applies the migrations not yet recorded, each in its own
// transaction, then the work queue's (River's, migrateUnits), on one
// connection that holds the migration lock.
func (s *base) migrate(ctx context.Context, logger *slog.Logger) error {
	ms, err := s.migrations()
	if err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	err = s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		if s.dialect == Postgres {
			if err := conn.Exec("SELECT pg_advisory_lock(?)", lockMigrations).Error; err != nil {
				return err
			}
			defer conn.Exec("SELECT pg_advisory_unlock(?)", lockMigrations)
		}
		if err := conn.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TEXT NOT NULL)`).Error; err != nil {
			return err
		}
		for _, m := range ms {
			applied := false
			err := conn.Transaction(func(tx *gorm.DB) error {
				// Checked inside the migration's own transaction: SQLite
				// serialises these transactions, PostgreSQL also holds the
				// advisory lock, so a migration is never applied twice.
				var n int64
				if err := tx.Raw("SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n).Error; err != nil {
					return err
				}
				if n > 0 {
					return nil
				}
				for _, stmt := range splitStatements(m.sql) {
					if err := tx.Exec(stmt).Error; err != nil {
						return fmt.Errorf("%.80q: %w", stmt, err)
					}
				}
				applied = true
				return tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
					m.version, m.name, utc(s.now()).Format(time.RFC3339Nano)).Error
			})
			if err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
			if !applied {
				continue
			}
			logger.Info("database migrated", "version", m.version, "name", m.name, "dialect", s.dialect)
		}
		return migrateUnits(ctx, conn, s.dialect)
	})
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// splitStatements splits a migration file at semicolons that end a line;
// comments are dropped. Migration files keep one statement per such
// semicolon and no semicolons inside statements.
func splitStatements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

// translate maps driver errors to the patent package's sentinels.
func translate(err error, notFound, conflict error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return notFound
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return conflict
	}
	return err
}

// gormLogger routes GORM's logs into slog: failed statements at ERROR
// (except "record not found", which callers handle), slow ones at WARN,
// all at DEBUG. Statements are logged with placeholders, never values, so
// password hashes and tokens stay out of the logs.
type gormLogger struct {
	logger *slog.Logger
	slow   time.Duration
}

func newGormLogger(l *slog.Logger) gormlogger.Interface {
	return gormLogger{logger: l, slow: 200 * time.Millisecond}
}

func (g gormLogger) LogMode(gormlogger.LogLevel) gormlogger.Interface { return g }
func (g gormLogger) Info(ctx context.Context, msg string, args ...any) {
	g.logger.InfoContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}
func (g gormLogger) Warn(ctx context.Context, msg string, args ...any) {
	g.logger.WarnContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}
func (g gormLogger) Error(ctx context.Context, msg string, args ...any) {
	g.logger.ErrorContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// ParamsFilter keeps statement values out of the SQL GORM hands to Trace.
func (g gormLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

func (g gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	elapsed := time.Since(begin)
	switch {
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound) && !errors.Is(err, gorm.ErrDuplicatedKey):
		sql, rows := fc()
		g.logger.ErrorContext(ctx, "database statement failed", "sql", sql, "rows", rows, "ms", elapsed.Milliseconds(), "err", err.Error())
	case elapsed > g.slow:
		sql, rows := fc()
		g.logger.WarnContext(ctx, "slow database statement", "sql", sql, "rows", rows, "ms", elapsed.Milliseconds())
	case g.logger.Enabled(ctx, slog.LevelDebug):
		sql, rows := fc()
		g.logger.DebugContext(ctx, "database statement", "sql", sql, "rows", rows, "ms", elapsed.Milliseconds())
	}
}
