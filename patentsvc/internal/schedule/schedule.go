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
//   - RunNow starts a newly tracked company's first run at once on the
//     replica that tracked it, leader or not, instead of at the next tick:
//     it claims that company as the dispatcher would (ClaimTracked), so
//     whichever of the two claims it first runs it, and the other skips it.
//     RunNow's runs are one at a time, in a goroutine of their own.
//   - Scheduled runs bypass the search and LLM caches and store a normal,
//     non-cached analysis. The count compared is the search's recent-patent
//     count (total_results), not the number analysed.
//   - A failed run (the search failed, or the analysis did after it) is
//     retried after RetryDelay: RetryBase, doubled for each further failure
//     in a row, never more than the interval. The count of failures in a row
//     is kept in the database (consecutive_failures), so every replica and
//     the next leader back off alike; a run that succeeds resets it. A run
//     whose search failed records nothing else (no count, no alert); one
//     whose analysis failed after the search records the count and applies
//     the alert rule as a successful one does. A company without a recent
//     patent to analyse is a success (patent count 0), not a failure.
//   - Every run that reports back, failed or not, adds a row to the
//     company's history (tracking_runs: time, count or none, success,
//     alert) in the one transaction that records it, its alert and the
//     alert's webhook deliveries included (RecordRun, RecordFailure). A run
//     handed back unrun (shutdown) adds none.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

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
	// ClaimTracked claims one company as ClaimDue would, if it is due
	// (false otherwise).
	ClaimTracked(ctx context.Context, id int64, hold time.Duration) (patent.TrackedCompany, bool, error)
	// RecordRun records a run whose search answered, and its row in the
	// company's history; failures is 0 when it succeeded. When alert is
	// not nil, the alert and the webhook deliveries compose returns for it
	// (nil: none) are stored in the same transaction.
	RecordRun(ctx context.Context, id int64, count int, at time.Time, failures int, next time.Time,
		alert *patent.Alert, compose patent.Deliveries[patent.Alert]) error
	// RecordFailure records a run whose search failed, and its row in the
	// company's history.
	RecordFailure(ctx context.Context, id int64, at time.Time, failures int, next time.Time) error
	// Reschedule hands a claimed company back unrun.
	Reschedule(ctx context.Context, id int64, next time.Time) error
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
	// RetryBase is the wait before retrying a failed run (default 1 min);
	// see RetryDelay.
	RetryBase time.Duration
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
	// DefaultRetryBase is the wait before retrying a failed run.
	DefaultRetryBase = time.Minute
)

// RetryDelay is the wait before retrying a company whose last failures
// runs in a row failed (failures >= 1): base for the first failure,
// doubled for each further one, and never more than interval, so a company
// that keeps failing is still tried once an interval (1 min, 2, 4, ...
// 24 h with the defaults).
func RetryDelay(base, interval time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < interval; i++ {
		d *= 2
	}
	return min(d, interval)
}

// DefaultTick returns the dispatcher tick for an interval: a quarter of it,
// between 1 second and 1 minute.
func DefaultTick(interval time.Duration) time.Duration {
	return min(max(interval/4, time.Second), time.Minute)
}

// AlertFunc composes the webhook deliveries of an alert; the store keeps
// them in the transaction of the alert and its run (decisions.md: an alert is never
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

	// RunNow's queue: the ids asked for, and a wake-up for the goroutine
	// that runs them (started by Start, closing nowDone when it ends).
	nowMu   sync.Mutex
	nowIDs  []nowRun
	nowWake chan struct{}
	nowDone chan struct{}
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
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	s := &Scheduler{cfg: cfg, store: st, an: an, elector: elector, onAlert: onAlert, logger: logger, now: now,
		nowWake: make(chan struct{}, 1)}
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
		s.nowDone = make(chan struct{})
		go s.runNowLoop()
		s.sched.Start()
	}
}

// RunNow asks for the run of the tracked company id now, on this replica,
// without waiting for the dispatcher's next tick: decisions.md makes a
// company's first run due as soon as it is tracked, and the API calls
// RunNow once the company is stored. It returns at once; the run happens in
// the background, one at a time, on the scheduler's context. The company is
// claimed first (ClaimTracked), so it is run by RunNow or by a dispatcher,
// never by both: when a dispatcher claimed it first, or it is not due,
// RunNow does nothing. A nil or stopping scheduler ignores the call (the
// company stays due for the dispatcher).
//
// The run is a root span linked to the span in ctx (the request that
// tracked the company); only that span's identity is kept, never ctx
// itself or its cancellation.
func (s *Scheduler) RunNow(ctx context.Context, id int64) {
	if s == nil || s.stopping.Load() {
		return
	}
	s.nowMu.Lock()
	s.nowIDs = append(s.nowIDs, nowRun{id: id, link: trace.SpanContextFromContext(ctx)})
	s.nowMu.Unlock()
	select {
	case s.nowWake <- struct{}{}:
	default: // a wake-up is pending already; it takes every queued id
	}
}

// runNowLoop runs RunNow's companies until the scheduler stops.
func (s *Scheduler) runNowLoop() {
	defer close(s.nowDone)
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.nowWake:
		}
		if s.stopping.Load() {
			return // Shutdown's wake-up; the companies not claimed stay due
		}
		s.nowMu.Lock()
		ids := s.nowIDs
		s.nowIDs = nil
		s.nowMu.Unlock()
		for _, r := range ids {
			id := r.id
			if s.stopping.Load() {
				return // the companies not claimed stay due
			}
			c, ok, err := s.store.ClaimTracked(s.ctx, id, s.cfg.Hold)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					s.logger.Warn("claiming a newly tracked company failed; the dispatcher runs it", "tracked_id", id, "err", err.Error())
				}
				continue
			}
			if ok {
				s.run(c, r.link)
			}
		}
	}
}

// nowRun is a run RunNow asked for: the company, and the span of the
// request that asked (invalid when none).
type nowRun struct {
	id   int64
	link trace.SpanContext
}

// tracerName names the tracer of the scheduled runs' spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/schedule"

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
	select {
	case s.nowWake <- struct{}{}: // RunNow's goroutine sees stopping and ends
	default: // a wake-up is pending already
	}
	stop := context.AfterFunc(ctx, func() {
		s.cancel()
		time.AfterFunc(writeGrace, s.stopWrites)
	})
	defer stop()
	err := s.sched.ShutdownWithContext(s.writes)
	if s.nowDone != nil {
		// RunNow's run in progress ends as a dispatch does: it finishes, or
		// is cut short when ctx ends and handed back within writeGrace.
		select {
		case <-s.nowDone:
		case <-s.writes.Done():
			err = errors.Join(err, context.Canceled)
		}
	}
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
			s.run(c, trace.SpanContext{})
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

// run analyses one claimed company and applies the alert rule, in a root
// span of its own: a scheduled run belongs to no request (decisions.md,
// "Tracing (issue 13)"); RunNow's runs link it to the request that
// tracked the company (link, when valid).
func (s *Scheduler) run(c patent.TrackedCompany, link trace.SpanContext) {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithAttributes(attribute.Int64("tracked_company.id", c.ID))}
	if link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
	}
	ctx, span := otel.Tracer(tracerName).Start(s.ctx, "scheduled run", opts...)
	defer span.End()
	s.analyse(ctx, c)
}

// analyse is run's work, in ctx (the scheduler's, with the run's span).
func (s *Scheduler) analyse(ctx context.Context, c patent.TrackedCompany) {
	log := s.logger.With("company", c.CompanyName)
	name, err := patent.ParseCompanyName(c.CompanyName)
	if err != nil {
		log.ErrorContext(ctx, "tracked company has an invalid name", "err", err.Error())
		return
	}
	res := s.an.AnalyzeCompany(ctx, name, patent.AnalyzeOptions{Fresh: true})
	if !res.Success && ctx.Err() != nil {
		// Cut short by shutdown, before or after the search: the next
		// leader runs it whole (count and analysis) at once.
		log.InfoContext(ctx, "scheduled analysis cut short by shutdown; the company is due again")
		s.release([]patent.TrackedCompany{c})
		return
	}
	// The analysis is done: its outcome is recorded even if shutdown has
	// begun meanwhile.
	wctx, cancel := s.writeContext()
	defer cancel()
	wctx = trace.ContextWithSpan(wctx, trace.SpanFromContext(ctx))
	at := s.now()
	next, failures := at.Add(s.cfg.Interval), 0
	// No recent patent with a PDF is an answer (count 0), not a failure.
	if failed := !res.Success && !(res.Searched && res.PatentCount == 0); failed {
		failures = c.ConsecutiveFailures + 1
		retry := RetryDelay(s.cfg.RetryBase, s.cfg.Interval, failures)
		next = at.Add(retry)
		log.WarnContext(ctx, "scheduled analysis failed; retrying", "err", errText(res.Error), "consecutive_failures", failures, "retry_in", retry.String())
	}
	if !res.Searched {
		if err := s.store.RecordFailure(wctx, c.ID, at, failures, next); err != nil {
			log.WarnContext(ctx, "recording the failed run failed", "err", err.Error())
		}
		return
	}
	// The alert is stored with the run, in its transaction: the run's
	// history row says whether it raised one, and neither is ever
	// committed without the other. The first run records the baseline
	// only.
	var alert *patent.Alert
	if c.LastAnalysisAt != nil {
		if a, ok := patent.CountChangeAlert(c.CompanyName, c.LastPatentCount, res.TotalResults, s.cfg.Threshold); ok {
			alert = &a
		}
	}
	if err := s.store.RecordRun(wctx, c.ID, res.TotalResults, at, failures, next, alert, s.onAlert); err != nil {
		if alert != nil {
			log.ErrorContext(ctx, "recording the run and its alert failed", "err", err.Error(), "alert", alert.Message)
		} else {
			log.WarnContext(ctx, "recording the run failed", "err", err.Error())
		}
		return
	}
	log.InfoContext(ctx, "scheduled analysis done", "patent_count", res.TotalResults, "previous", c.LastPatentCount,
		"success", res.Success, "baseline", c.LastAnalysisAt == nil)
	if alert != nil {
		log.InfoContext(ctx, "patent count alert", "message", alert.Message)
	}
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
