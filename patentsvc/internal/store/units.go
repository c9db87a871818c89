package store

// The work queue's units in the store's database. River (riverqueue/river)
// keeps them in its own tables beside the service's; the store inserts
// them in the transactions that store their work (an insert-only River
// client on the store's pool: River's transactional enqueueing), applies
// River's migrations after its own, and reads and writes river_job where
// River has no API for what the service needs: whether a unit is alive,
// and the units of a replica that died (session.go). The workers that run
// the units are package queue's.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Runs of one unit before River gives it up (discards it): a run that
// fails or panics, or whose replica dies, counts; a shutdown's
// interruption and a *patent.LaterError do not. The sweeps deal with the
// work of a unit given up (a job fails, a delivery fails, a tracked
// company is queued again). A job start's are the caller's
// (JOBS_MAX_ATTEMPTS).
const (
	ScheduledRunAttempts = 3
	DeliveryAttempts     = 5
)

// liveUnitStates are River's states of a unit that may still run (the
// others, completed, cancelled and discarded, are final; River's cleaner
// deletes final units after a while, and a missing unit counts as final).
var liveUnitStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// liveStatesSQL is liveUnitStates as an SQL list.
const liveStatesSQL = "('available', 'pending', 'running', 'retryable', 'scheduled')"

// unitAlive is an SQL condition: the unit whose id is in column col (of
// the row being selected) is alive.
func unitAlive(col string) string {
	return "EXISTS (SELECT 1 FROM river_job r WHERE r.id = " + col + " AND r.state IN " + liveStatesSQL + ")"
}

// newInserter is the store's River client: it inserts units in the
// store's transactions and never runs one (no queues, never started).
func newInserter(dialect string, db *sql.DB, logger *slog.Logger) (*river.Client[*sql.Tx], error) {
	var driver riverdriver.Driver[*sql.Tx]
	if dialect == Postgres {
		driver = riverdatabasesql.New(db)
	} else {
		driver = riversqlite.New(db)
	}
	c, err := river.NewClient(driver, &river.Config{Logger: logger.With("component", "river")})
	if err != nil {
		return nil, fmt.Errorf("store: work queue: %w", err)
	}
	return c, nil
}

// queued is a unit as the queue stored it: its id, and whether it was
// queued already (a scheduled run of the same company and due time, or a
// delivery's attempts still alive), in which case id is the one queued
// before.
type queued struct {
	id        int64
	duplicate bool
}

// enqueue queues units in tx, the GORM transaction that stores their work,
// and returns them as stored, in order. A job start gets jobAttempts runs
// (0: DefaultJobAttempts).
func (s *base) enqueue(ctx context.Context, tx *gorm.DB, jobAttempts int, units ...patent.Unit) ([]queued, error) {
	if len(units) == 0 {
		return nil, nil
	}
	sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("store: enqueue outside a transaction (%T)", tx.Statement.ConnPool)
	}
	params := make([]river.InsertManyParams, len(units))
	for i, u := range units {
		params[i] = insertParams(u, jobAttempts)
	}
	res, err := s.units.InsertManyTx(ctx, sqlTx, params)
	if err != nil {
		return nil, fmt.Errorf("queue units: %w", err)
	}
	return inOrder(params, res)
}

// DefaultJobAttempts is a job start's runs when the caller gives none.
const DefaultJobAttempts = 3

// insertParams are River's arguments and options for a unit: its kind's
// queue, its runs, and its identity.
func insertParams(u patent.Unit, jobAttempts int) river.InsertManyParams {
	opts := &river.InsertOpts{Queue: u.Queue()}
	switch u.(type) {
	case patent.ScheduledRun:
		// One unit per due time, also once it completed: a due time runs
		// once (until River's cleaner drops the completed unit, a day
		// later, when the company has long been due again).
		opts.MaxAttempts, opts.UniqueOpts = ScheduledRunAttempts, river.UniqueOpts{ByArgs: true}
	case patent.JobStart:
		// Not unique: a job start takes up the fairest pending job, not
		// necessarily its own, and one with none left to take ends at once.
		opts.MaxAttempts = jobAttempts
		if jobAttempts <= 0 {
			opts.MaxAttempts = DefaultJobAttempts
		}
	case patent.DeliveryAttempt:
		opts.MaxAttempts, opts.UniqueOpts = DeliveryAttempts, river.UniqueOpts{ByArgs: true, ByState: liveUnitStates}
	}
	return river.InsertManyParams{Args: u, InsertOpts: opts}
}

// inOrder returns River's answer to a batch insert in the order of the
// units inserted, matched by kind and identity (the arguments tagged
// river:"unique", or all of them for a kind without): River does not
// promise its rows come back in order (SQLite's RETURNING has none), and
// a unit taken for another would point a row at the wrong unit. A unit
// queued already comes back as the one queued before, whose other
// arguments may differ (another replica's reserved alert ids).
func inOrder(params []river.InsertManyParams, res []*rivertype.JobInsertResult) ([]queued, error) {
	fields := map[string][]string{}
	for _, p := range params {
		fields[p.Args.Kind()] = identity(p.Args)
	}
	byKey := make(map[string][]*rivertype.JobInsertResult, len(res))
	for _, r := range res {
		k, err := unitKey(r.Job.Kind, r.Job.EncodedArgs, fields[r.Job.Kind])
		if err != nil {
			return nil, err
		}
		byKey[k] = append(byKey[k], r)
	}
	out := make([]queued, len(params))
	for i, p := range params {
		args, err := json.Marshal(p.Args)
		if err != nil {
			return nil, fmt.Errorf("queue units: %w", err)
		}
		k, err := unitKey(p.Args.Kind(), args, fields[p.Args.Kind()])
		if err != nil {
			return nil, err
		}
		rs := byKey[k]
		if len(rs) == 0 {
			return nil, fmt.Errorf("queue units: no unit came back for a %s", p.Args.Kind())
		}
		out[i] = queued{id: rs[0].Job.ID, duplicate: rs[0].UniqueSkippedAsDuplicate}
		byKey[k] = rs[1:]
	}
	return out, nil
}

// identity names the JSON fields of a unit's arguments that make its
// identity (tagged river:"unique"); nil for a kind without, whose every
// argument counts.
func identity(args any) []string {
	t := reflect.TypeOf(args)
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("river") != "unique" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// unitKey is a unit's kind and identity (fields; every argument when
// empty) in one canonical form (the database may re-encode JSON:
// PostgreSQL's jsonb orders keys and drops spaces).
func unitKey(kind string, args []byte, fields []string) (string, error) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("queue units: a unit's arguments: %w", err)
	}
	if len(fields) > 0 {
		id := make(map[string]any, len(fields))
		for _, f := range fields {
			id[f] = v[f]
		}
		v = id
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("queue units: a unit's arguments: %w", err)
	}
	return kind + " " + string(canon), nil
}

// migrateUnits applies River's migrations, each version in a transaction
// of its own (a PostgreSQL enum value added by one version cannot be used
// in its transaction), on conn, which holds the store's migration lock,
// after the store's own migrations: replicas starting at once apply each
// version once.
func migrateUnits(ctx context.Context, conn *gorm.DB, dialect string) error {
	var driver riverdriver.Driver[*sql.Tx]
	if dialect == Postgres {
		driver = riverdatabasesql.New(nil)
	} else {
		driver = riversqlite.New(nil)
	}
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	for _, v := range m.AllVersions() {
		err := conn.Transaction(func(tx *gorm.DB) error {
			sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
			if !ok {
				return fmt.Errorf("not a transaction (%T)", tx.Statement.ConnPool)
			}
			// MigrateTx is deprecated because several versions in one
			// transaction can fail; here each transaction holds one version,
			// and it must be ours (under the store's migration lock).
			//lint:ignore SA1019 one version per transaction, the case the deprecation allows
			_, err := m.MigrateTx(ctx, sqlTx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: v.Version})
			return err
		})
		if err != nil {
			return fmt.Errorf("work queue migration %d: %w", v.Version, err)
		}
	}
	return nil
}

// cancelUnit ends unit id in tx, whoever was running it, as River's
// cancellation does: a unit not running is cancelled at once by River; a
// running one is ended here too, for its runner is gone (its job was
// failed in tx). A unit already final is left as it is.
func (s *base) cancelUnit(ctx context.Context, tx *gorm.DB, id int64) error {
	if id == 0 {
		return nil
	}
	err := tx.Exec("UPDATE river_job SET state = 'cancelled', finalized_at = "+s.sqlNow()+" WHERE id = ? AND state = 'running'", id).Error
	if err != nil {
		return err
	}
	sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		return fmt.Errorf("store: cancel a unit outside a transaction (%T)", tx.Statement.ConnPool)
	}
	if _, err := s.units.JobCancelTx(ctx, sqlTx, id); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
		return fmt.Errorf("cancel unit %d: %w", id, err)
	}
	return nil
}

// unitState is expr, an SQL expression of a state's name, as River's state
// column takes it (PostgreSQL: its enum type).
func (s *base) unitState(expr string) string {
	if s.dialect == Postgres {
		return "(" + expr + ")::river_job_state"
	}
	return expr
}

// sqlNow is the database's own clock as River writes its timestamps.
func (s *base) sqlNow() string {
	if s.dialect == Postgres {
		return "now()"
	}
	return "datetime('now', 'subsec')"
}

// runningUnit is a unit running, as the liveness reads see it.
type runningUnit struct {
	ID      int64
	Attempt int
	Runner  string // the replica that took it up last (river_job.attempted_by)
}

// lastRunner is the SQL expression of the replica that took a unit up
// last.
func (s *base) lastRunner() string {
	if s.dialect == Postgres {
		return "attempted_by[array_length(attempted_by, 1)]"
	}
	return "json_extract(attempted_by, '$[#-1]')"
}

// aliveFunc tells, from the liveness sessions, whether the replica a unit
// names as its runner is alive: on PostgreSQL, whether its session's lock
// is held (a runner of a version without sessions counts as alive, left to
// River's timeouts, unless this replica started alone); on SQLite, whether
// it is this process. Without a session (OpenSession), every runner counts
// as alive.
func (s *base) aliveFunc(db *gorm.DB) (func(runner string) bool, error) {
	se := s.session
	if se == nil {
		return func(string) bool { return true }, nil
	}
	if s.dialect != Postgres {
		return func(r string) bool { return r == se.id }, nil
	}
	var keys []int64
	err := db.Raw(`SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND classid = ?::bigint::oid
		AND objsubid = 2 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, se.class).
		Scan(&keys).Error
	if err != nil {
		return nil, err
	}
	live := make(map[int32]bool, len(keys))
	for _, k := range keys {
		live[int32(k)] = true
	}
	return func(r string) bool {
		k, ok := sessionKey(r)
		if !ok {
			return !se.alone
		}
		return live[k]
	}, nil
}

// releaseDeadUnits makes the units of kind that a dead replica was
// running (its session ended: it asks the database, not a timeout) available again at once, for any replica's worker, as River's
// rescuer would after their timeout: each dead run counts as an attempt,
// and a unit past its attempts is discarded (the kind's sweep then deals
// with its work). Job starts that hold a running job are left to LostJobs
// (the job fails). It returns how many units it released. A unit taken up
// again meanwhile is left alone.
func (s *base) releaseDeadUnits(ctx context.Context, kind string) (int64, error) {
	db := s.db.WithContext(ctx)
	alive, err := s.aliveFunc(db)
	if err != nil {
		return 0, fmt.Errorf("release dead units: %w", err)
	}
	q := "SELECT id, attempt, " + s.lastRunner() + " AS runner FROM river_job WHERE state = 'running' AND kind = ?"
	if kind == patent.KindJobStart {
		q += " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.unit_id = river_job.id AND j.status = 'running')"
	}
	var running []runningUnit
	if err := db.Raw(q, kind).Scan(&running).Error; err != nil {
		return 0, fmt.Errorf("release dead units: %w", err)
	}
	var n int64
	for _, u := range running {
		if alive(u.Runner) {
			continue
		}
		res := db.Exec("UPDATE river_job SET state = "+s.unitState("CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END")+", "+
			"finalized_at = CASE WHEN attempt >= max_attempts THEN "+s.sqlNow()+" ELSE NULL END, scheduled_at = "+s.sqlNow()+", "+
			"errors = "+s.appendUnitError()+" WHERE id = ? AND state = 'running' AND attempt = ?", reasonRunnerDead, u.ID, u.Attempt)
		if res.Error != nil {
			return n, fmt.Errorf("release dead unit %d: %w", u.ID, res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}

// reasonRunnerDead is the error River keeps for a unit's run cut by its
// replica's death (riverui shows it).
const reasonRunnerDead = "the replica running the unit stopped (its database session ended)"

// appendUnitError is the SQL that appends an error record, as River keeps
// them (at, attempt, error, trace), with the error as the first parameter.
func (s *base) appendUnitError() string {
	if s.dialect == Postgres {
		return "array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', ?::text, 'trace', ''))"
	}
	return "jsonb(json_insert(json(coalesce(errors, jsonb('[]'))), '$[#]', " +
		"json_object('at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'attempt', attempt, 'error', ?, 'trace', '')))"
}

// ReleaseDeadUnits makes the job starts that a dead replica was running
// available again, but those that hold a running job, which LostJobs
// finds (releaseDeadUnits); it returns how many it released.
func (s Jobs) ReleaseDeadUnits(ctx context.Context) (int64, error) {
	return s.releaseDeadUnits(ctx, patent.KindJobStart)
}

// ReleaseDeadUnits makes the scheduled runs that a dead replica was
// running available again (releaseDeadUnits); it returns how many it
// released.
func (s Tracking) ReleaseDeadUnits(ctx context.Context) (int64, error) {
	return s.releaseDeadUnits(ctx, patent.KindScheduledRun)
}

// ReleaseDeadUnits makes the delivery attempts that a dead replica was
// running available again (releaseDeadUnits); it returns how many it
// released.
func (s Deliveries) ReleaseDeadUnits(ctx context.Context) (int64, error) {
	return s.releaseDeadUnits(ctx, patent.KindDelivery)
}
