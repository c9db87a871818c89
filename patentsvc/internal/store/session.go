package store

// Liveness (decisions.md, "patentsvc: a dead replica's work resumes in
// seconds"): each replica holds, for its whole life, a PostgreSQL session
// of its own with a session-level advisory lock on a key of its own.
// PostgreSQL releases the lock the moment that session ends: the process
// was killed (its socket closes), its node was lost (TCP keepalives, set
// on both ends, end the session within about 20 s), or the connection was
// cut. Whether the replica that runs a unit is alive is then whether its
// key is locked (pg_locks), with no timeout and no table of our own. The
// replica's name in River (the client id that River records as a unit's
// runner, river_job.attempted_by) carries the key, so a unit's runner is
// known from the unit alone.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Advisory locks of the liveness sessions, in the two-key form (class,
// key), which no other lock of the service or of River uses: class names
// the deployment (its database schema: classOf), a replica holds
// (class, its key), keys from 1 up, and (class, startupKey) orders the
// start-ups (Session). pg_locks is one table for a whole database, so
// deployments in other schemas of it never count as this one's replicas.
const startupKey int32 = 0

// aloneGrace is how long a starting replica waits for the sessions it
// finds to end before it counts them as alive: the session of a process
// killed a moment ago ends when PostgreSQL reads its closed socket, a few
// milliseconds later, and a replica restarted at once must not take it
// for a live one (the start-up rule would not apply).
const aloneGrace = 1500 * time.Millisecond

// classOf is the lock class of the deployment in schema: 31 bits of a
// hash of its name.
func classOf(schema string) int32 {
	h := fnv.New32a()
	h.Write([]byte("patentsvc liveness/" + schema))
	return int32(h.Sum32() & 0x7fffffff)
}

// Keepalives of the session's connection, on both ends, so that a session
// whose peer is gone (a lost node, a cut network) ends within about
// keepIdle + keepCount*keepInterval.
const (
	keepIdle     = 5 * time.Second
	keepInterval = 5 * time.Second
	keepCount    = 3
	dialTimeout  = 10 * time.Second
)

// Reconnection after a lost session: the wait doubles from reconnectMin
// up to reconnectMax.
const (
	reconnectMin = 500 * time.Millisecond
	reconnectMax = 15 * time.Second
)

// ErrSessionLost is the cause of a session context's end: the database
// session that made this replica alive ended (the connection broke, or
// PostgreSQL ended it).
var ErrSessionLost = errors.New("store: this replica's database session ended")

// Session is this replica's liveness: on PostgreSQL, a connection of its
// own that holds the replica's advisory lock; on SQLite (one process), the
// process itself. It is safe for concurrent use.
type Session struct {
	id     string
	class  int32 // the deployment's lock class (classOf)
	key    int32
	alone  bool
	dsn    string
	logger *slog.Logger

	mu      sync.Mutex
	conn    *pgx.Conn // nil on SQLite, and while reconnecting
	current context.Context
	lose    context.CancelCauseFunc
	stop    context.CancelFunc
	done    chan struct{}
}

// OpenSession starts this replica's liveness session and returns it with
// the start-up lock held: on PostgreSQL a connection of its own (named
// "patentsvc liveness <id>" in pg_stat_activity, which keeps 63 bytes of
// it: a host name past about 25 characters is cut there; nothing but
// people and tests read that name) that takes the start-up
// lock (another replica starting at once waits for Started), then the
// replica's own lock, and tells whether any other replica is alive
// (Alone). The caller applies the start-up rule when it is alone, then
// calls Started. On SQLite the session is the process: it is always alone.
//
// The store's liveness reads (LostJobs, ReleaseDeadUnits) know the
// session from then on. Close ends it.
func (s *Store) OpenSession(ctx context.Context, logger *slog.Logger) (*Session, error) {
	se := &Session{dsn: s.dsn, logger: logger, done: make(chan struct{})}
	se.current, se.lose = context.WithCancelCause(context.Background())
	if s.dialect != Postgres {
		se.key = randomKey()
		se.id = sessionID(se.key)
		se.alone = true
		close(se.done)
		s.session = se
		return se, nil
	}
	conn, err := se.dial(ctx)
	if err != nil {
		return nil, err
	}
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("store: liveness session: %w", err)
	}
	se.class = classOf(schema)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", se.class, startupKey); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("store: liveness session: start-up lock: %w", err)
	}
	if err := se.lockNewKey(ctx, conn); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	if se.alone, err = se.aloneOn(ctx, conn); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("store: liveness session: %w", err)
	}
	se.conn = conn
	s.session = se
	logger.Info("liveness session open", "replica", se.id, "alone", se.alone)
	return se, nil
}

// dial opens the session's connection, with keepalives on both ends.
func (se *Session) dial(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(se.dsn)
	if err != nil {
		return nil, fmt.Errorf("store: liveness session: %w", err)
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepIdle, Interval: keepInterval, Count: keepCount}}
	cfg.DialFunc = d.DialContext
	cfg.RuntimeParams["tcp_keepalives_idle"] = strconv.Itoa(int(keepIdle.Seconds()))
	cfg.RuntimeParams["tcp_keepalives_interval"] = strconv.Itoa(int(keepInterval.Seconds()))
	cfg.RuntimeParams["tcp_keepalives_count"] = strconv.Itoa(keepCount)
	if se.id != "" {
		cfg.RuntimeParams["application_name"] = "patentsvc liveness " + se.id
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: liveness session: connect: %w", err)
	}
	return conn, nil
}

// lockNewKey takes the lock of a key no live replica holds, and names the
// session after it.
func (se *Session) lockNewKey(ctx context.Context, conn *pgx.Conn) error {
	for range 100 {
		key := randomKey()
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", se.class, key).Scan(&ok); err != nil {
			return fmt.Errorf("store: liveness session: lock: %w", err)
		}
		if ok {
			se.key, se.id = key, sessionID(key)
			_, err := conn.Exec(ctx, "SELECT set_config('application_name', $1, false)", "patentsvc liveness "+se.id)
			return err
		}
	}
	return errors.New("store: liveness session: no free key")
}

// aloneOn tells whether no replica but this one is alive: no other
// replica's lock is held (waiting up to aloneGrace for those held to go),
// and no River client of a version without liveness sessions (a name River
// records that is not a session's) leads River's maintenance now (a
// rolling update from such a version).
func (se *Session) aloneOn(ctx context.Context, conn *pgx.Conn) (bool, error) {
	deadline := time.Now().Add(aloneGrace)
	for {
		var others int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid
			AND objsubid = 2 AND granted AND objid NOT IN ($2::bigint::oid, $3::bigint::oid)
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, se.class, se.key, startupKey).Scan(&others)
		if err != nil {
			return false, err
		}
		if others == 0 {
			break
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	rows, err := conn.Query(ctx, "SELECT leader_id FROM river_leader WHERE expires_at > now()")
	if err != nil {
		return false, err
	}
	leaders, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, err
	}
	for _, l := range leaders {
		if _, ok := sessionKey(l); !ok {
			return false, nil
		}
	}
	return true, nil
}

// ID names this replica: the client id River records as the runner of the
// units it takes ("<host>/<pid>/<key>").
func (se *Session) ID() string { return se.id }

// Alone tells whether no other replica was alive when the session opened
// (always on SQLite): then the start-up rule applies.
func (se *Session) Alone() bool { return se.alone }

// Started ends the start-up: it releases the start-up lock, so the next
// replica starting sees this one, and watches the session from then on:
// when it ends, the context Context returned ends with ErrSessionLost,
// and the session is opened again, under the same key, as soon as the
// database answers (the units cut meanwhile are the sweeps' to resolve).
func (se *Session) Started(ctx context.Context) error {
	if se.conn == nil {
		return nil
	}
	if _, err := se.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", se.class, startupKey); err != nil {
		return fmt.Errorf("store: liveness session: %w", err)
	}
	watch, stop := context.WithCancel(context.WithoutCancel(ctx))
	se.stop = stop
	go se.watch(watch)
	return nil
}

// Context is a context of the session in force: it ends, with cause
// ErrSessionLost, when that session ends. Work that must stop when this
// replica is no longer known alive runs in it. It is already ended while
// the session is being opened again.
func (se *Session) Context() context.Context {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.current
}

// watch waits on the session's connection until it breaks, then ends the
// session's context and opens it again; it returns when ctx ends.
func (se *Session) watch(ctx context.Context) {
	defer close(se.done)
	for {
		conn := se.conn
		_, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			closeQuietly(conn)
			return
		}
		if err == nil {
			continue // a notification (the session listens to none): still alive
		}
		se.mu.Lock()
		se.lose(ErrSessionLost)
		se.conn = nil
		se.mu.Unlock()
		closeQuietly(conn)
		se.logger.Warn("liveness session lost; this replica's running work is stopped, and the sweeps resolve it", "replica", se.id, "err", err.Error())
		if !se.reopen(ctx) {
			return
		}
	}
}

// reopen opens the session again under the same key, waiting longer after
// each failure, until it holds the key or ctx ends (false). The key stays
// locked by the old session until PostgreSQL ends it.
func (se *Session) reopen(ctx context.Context) bool {
	wait := reconnectMin
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(wait*2, reconnectMax)
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		conn, err := se.dial(dctx)
		if err != nil {
			cancel()
			se.logger.Warn("liveness session: reconnecting", "replica", se.id, "err", err.Error())
			continue
		}
		var ok bool
		err = conn.QueryRow(dctx, "SELECT pg_try_advisory_lock($1, $2)", se.class, se.key).Scan(&ok)
		cancel()
		if err != nil || !ok {
			closeQuietly(conn)
			continue
		}
		se.mu.Lock()
		se.conn = conn
		se.current, se.lose = context.WithCancelCause(context.Background())
		se.mu.Unlock()
		se.logger.Info("liveness session open again", "replica", se.id)
		return true
	}
}

// Close ends the session: its lock is released with its connection.
func (se *Session) Close() {
	if se.stop != nil {
		se.stop()
		<-se.done
	} else if se.conn != nil {
		closeQuietly(se.conn)
	}
	se.mu.Lock()
	se.lose(ErrSessionLost)
	se.mu.Unlock()
}

func closeQuietly(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// randomKey is a key in 1..2^31-1 (pg_locks shows keys as unsigned oids).
func randomKey() int32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int32(binary.BigEndian.Uint32(b[:])&0x7fffffff) | 1
}

// sessionID is the name of the replica holding key: "<host>/<pid>/<key in
// 8 hex digits>". Host names never hold a slash, so no name of another
// form parses as one (sessionKey).
func sessionID(key int32) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s/%d/%08x", host, os.Getpid(), uint32(key))
}

// sessionKey is the key in a replica's name, ok false for a name that is
// not a session's (a River client of an older version).
func sessionKey(id string) (int32, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || len(parts[2]) != 8 {
		return 0, false
	}
	k, err := strconv.ParseUint(parts[2], 16, 32)
	if err != nil || k == 0 || k > 0x7fffffff {
		return 0, false
	}
	return int32(k), true
}
