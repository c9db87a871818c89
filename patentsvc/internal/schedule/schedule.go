// Package schedule re-analyses tracked companies periodically and raises
// alerts when their patent counts change much.
//
// # Caveats
//
//   - Every replica runs a gocron scheduler with one job, a dispatcher that
//     ticks every few seconds; gocron asks the leader elector before each
//     run, so only the leader dispatches (on PostgreSQL the holder of an
//     advisory lock on a dedicated connection; on SQLite, the one process).
//   - The dispatcher claims due companies from the database (next_run_at,
//     FOR UPDATE SKIP LOCKED on PostgreSQL): a claim moves next_run_at past
//     a hold, so a company is never run twice, and a run that a crash or a
//     leader change cut short is retried when the hold passes, not skipped.
//     A newly tracked company is due at once; then every interval.
//   - Scheduled runs bypass the search and LLM caches and store a normal,
//     non-cached analysis. The count compared is the search's recent-patent
//     count (total_results), not the number analysed.
//   - A run whose search fails changes nothing but the next run time: no
//     count is recorded, no alert raised.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// States reported by health.
const (
	StateRunning  = "running"
	StateStandby  = "standby"
	StateDisabled = "disabled"
)

// Store is the tracked-company table and the alerts; *store.Store
// implements it.
type Store interface {
	ClaimDue(ctx context.Context, limit int, hold time.Duration) ([]patent.TrackedCompany, error)
	RecordRun(ctx context.Context, id int64, count int, at, next time.Time) error
	Reschedule(ctx context.Context, id int64, next time.Time) error
	// CreateAlert stores an alert and, in the same transaction, the
	// webhook deliveries compose returns for it (nil: none).
	CreateAlert(ctx context.Context, a patent.Alert, compose patent.Deliveries[patent.Alert]) (patent.Alert, error)
}

// Analyzer analyses a company; *analysis.Analyzer implements it.
type Analyzer interface {
	AnalyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis
}

// Elector tells whether this replica leads; *store.Elector implements it.
type Elector interface {
	IsLeader(ctx context.Context) error
	Leading() bool
	Resign()
}

// Config holds the schedule settings.
type Config struct {
	Interval  time.Duration // between runs of one company
	Threshold float64       // percent change that raises an alert
	// Tick is how often the dispatcher looks for due companies; Hold how
	// long a claimed company is held before it may be claimed again.
	Tick, Hold time.Duration
	// Batch is the most companies claimed at one tick.
	Batch int
	// StopTimeout bounds how long Shutdown waits for a dispatch in
	// progress (default 30 s), whatever its context says.
	StopTimeout time.Duration
}

// Defaults of the Config fields left zero.
const (
	// DefaultHold is how long a claimed company is held: longer than any
	// one analysis takes, so a claim is never taken over while it runs.
	DefaultHold = 30 * time.Minute
	// DefaultBatch is the most companies claimed at one tick.
	DefaultBatch = 5
	// DefaultStopTimeout bounds the wait for a dispatch in progress.
	DefaultStopTimeout = 30 * time.Second
)

// DefaultTick returns the dispatcher tick for an interval: a quarter of it,
// between 1 second and 1 minute.
func DefaultTick(interval time.Duration) time.Duration {
	return min(max(interval/4, time.Second), time.Minute)
}

// AlertFunc composes the webhook deliveries of an alert; the store keeps
// them in the alert's own transaction (decisions.md: an alert is never
// committed without its deliveries, nor a delivery without its alert). It
// may be nil (no webhooks). It is called before the alert commits.
type AlertFunc = patent.Deliveries[patent.Alert]

// Scheduler runs the schedule.
type Scheduler struct {
	cfg     Config
	store   Store
	an      Analyzer
	elector Elector
	onAlert AlertFunc
	logger  *slog.Logger
	now     func() time.Time
	sched   gocron.Scheduler
	ctx     context.Context
	cancel  context.CancelFunc
	// writes is the context of the store writes that record work already
	// done; it outlives ctx by writeGrace at shutdown.
	writes     context.Context
	stopWrites context.CancelFunc
	ticks      atomic.Int64
	// stopping makes the dispatcher hand back claimed companies it has not
	// started, so the next leader runs them at once.
	stopping atomic.Bool
}

// New builds a scheduler; Start starts it. Its analyses and store writes
// run in contexts derived from base: its values carry over, its
// cancellation does not (a dispatch in progress drains after the shutdown
// signal, until Shutdown's deadline).
func New(base context.Context, cfg Config, st Store, an Analyzer, elector Elector, onAlert AlertFunc, logger *slog.Logger, now func() time.Time) (*Scheduler, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick(cfg.Interval)
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	s := &Scheduler{cfg: cfg, store: st, an: an, elector: elector, onAlert: onAlert, logger: logger, now: now}
	base = context.WithoutCancel(base)
	s.ctx, s.cancel = context.WithCancel(base)
	s.writes, s.stopWrites = context.WithCancel(base)
	sched, err := gocron.NewScheduler(
		gocron.WithLocation(time.UTC),
		gocron.WithLogger(gocronLogger{logger}),
		gocron.WithDistributedElector(leaderOnly{s}),
		gocron.WithStopTimeout(cfg.StopTimeout),
	)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	_, err = sched.NewJob(gocron.DurationJob(cfg.Tick), gocron.NewTask(s.Dispatch),
		gocron.WithName("tracked-companies-dispatcher"),
		gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithStartAt(gocron.WithStartImmediately()),
	)
	if err != nil {
		_ = sched.Shutdown() // NewScheduler started its goroutines
		return nil, fmt.Errorf("schedule: %w", err)
	}
	s.sched = sched
	return s, nil
}

// Start starts the scheduler. A nil *Scheduler is a disabled one: Start
// and Shutdown do nothing, and State reports StateDisabled.
func (s *Scheduler) Start() {
	if s != nil {
		s.sched.Start()
	}
}

// writeGrace is how long after the shutdown deadline the store writes of
// a dispatch may still take: handing back the company whose analysis the
// deadline cut short.
const writeGrace = 2 * time.Second

// Shutdown stops the scheduler and gives up the leadership. A dispatch in
// progress finishes the analysis it is on; when ctx ends first, that
// analysis is cancelled and its company made due again, so the next leader
// runs it at once. Companies claimed but not started are handed back too.
// Shutdown returns at most writeGrace after ctx ends, whatever the store
// does; a company whose hand-back did not make it is due again when its
// claim's hold ends.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.stopping.Store(true)
	stop := context.AfterFunc(ctx, func() {
		s.cancel()
		time.AfterFunc(writeGrace, s.stopWrites)
	})
	defer stop()
	err := s.sched.ShutdownWithContext(s.writes)
	s.cancel()
	s.stopWrites()
	s.elector.Resign()
	if errors.Is(err, context.Canceled) {
		return errors.New("schedule: a dispatch was still running at the shutdown deadline")
	}
	return err
}

// State is "running" on the leader, "standby" elsewhere, and "disabled"
// for a nil (disabled) scheduler.
func (s *Scheduler) State() string {
	switch {
	case s == nil:
		return StateDisabled
	case s.elector.Leading():
		return StateRunning
	}
	return StateStandby
}

// leaderOnly adapts the elector to gocron and keeps the state fresh.
type leaderOnly struct{ s *Scheduler }

func (l leaderOnly) IsLeader(ctx context.Context) error { return l.s.elector.IsLeader(ctx) }

// Dispatch claims the due companies and runs them (gocron calls it on the
// leader; tests call it directly).
func (s *Scheduler) Dispatch() {
	if s == nil {
		return
	}
	s.ticks.Add(1)
	for s.ctx.Err() == nil {
		due, err := s.store.ClaimDue(s.ctx, s.cfg.Batch, s.cfg.Hold)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.logger.Warn("claiming due companies failed", "err", err.Error())
			}
			return
		}
		for i, c := range due {
			if s.stopping.Load() {
				s.release(due[i:])
				return
			}
			s.run(c)
		}
		if len(due) < s.cfg.Batch || s.stopping.Load() {
			return
		}
	}
}

// release makes claimed but unstarted companies due again.
func (s *Scheduler) release(cs []patent.TrackedCompany) {
	for _, c := range cs {
		ctx, cancel := s.writeContext()
		err := s.store.Reschedule(ctx, c.ID, s.now())
		cancel()
		if err != nil {
			s.logger.Warn("releasing a claimed company failed", "company", c.CompanyName, "err", err.Error())
		}
	}
}

// writeTimeout bounds a store write that must outlive a shutdown signal.
const writeTimeout = 10 * time.Second

// writeContext is the context of a store write that records work already
// done: it survives the scheduler's cancellation by writeGrace, so an
// analysis that ended is not lost to shutdown, and it never waits long on
// a database that stopped answering.
func (s *Scheduler) writeContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.writes, writeTimeout)
}

// run analyses one claimed company and applies the alert rule.
func (s *Scheduler) run(c patent.TrackedCompany) {
	log := s.logger.With("company", c.CompanyName)
	name, err := patent.ParseCompanyName(c.CompanyName)
	if err != nil {
		log.Error("tracked company has an invalid name", "err", err.Error())
		return
	}
	res := s.an.AnalyzeCompany(s.ctx, name, patent.AnalyzeOptions{Fresh: true})
	if !res.Success && s.ctx.Err() != nil {
		// Cut short by shutdown, before or after the search: the next
		// leader runs it whole (count and analysis) at once.
		log.Info("scheduled analysis cut short by shutdown; the company is due again")
		s.release([]patent.TrackedCompany{c})
		return
	}
	// The analysis is done: its outcome is recorded even if shutdown has
	// begun meanwhile.
	wctx, cancel := s.writeContext()
	defer cancel()
	at := s.now()
	next := at.Add(s.cfg.Interval)
	if !res.Searched {
		log.Warn("scheduled analysis failed; retrying next interval", "err", errText(res.Error))
		if err := s.store.Reschedule(wctx, c.ID, next); err != nil {
			log.Warn("rescheduling failed", "err", err.Error())
		}
		return
	}
	if err := s.store.RecordRun(wctx, c.ID, res.TotalResults, at, next); err != nil {
		log.Warn("recording the run failed", "err", err.Error())
		return
	}
	log.Info("scheduled analysis done", "patent_count", res.TotalResults, "previous", c.LastPatentCount,
		"success", res.Success, "baseline", c.LastAnalysisAt == nil)
	if c.LastAnalysisAt == nil {
		return // the first run records the baseline only
	}
	alert, ok := patent.CountChangeAlert(c.CompanyName, c.LastPatentCount, res.TotalResults, s.cfg.Threshold)
	if !ok {
		return
	}
	stored, err := s.store.CreateAlert(wctx, alert, s.onAlert)
	if err != nil {
		log.Error("storing an alert failed", "err", err.Error())
		return
	}
	log.Info("patent count alert", "message", stored.Message)
}

func errText(e *string) string {
	if e == nil {
		return ""
	}
	return *e
}

// gocronLogger routes gocron's logs into slog.
type gocronLogger struct{ l *slog.Logger }

func (g gocronLogger) Debug(msg string, args ...any) { g.l.Debug("gocron: "+msg, args...) }
func (g gocronLogger) Error(msg string, args ...any) { g.l.Error("gocron: "+msg, args...) }
func (g gocronLogger) Info(msg string, args ...any)  { g.l.Debug("gocron: "+msg, args...) }
func (g gocronLogger) Warn(msg string, args ...any)  { g.l.Warn("gocron: "+msg, args...) }
