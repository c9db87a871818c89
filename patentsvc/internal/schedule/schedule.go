// Package schedule re-analyses tracked companies periodically and raises
// alerts when their patent counts change much, or when they have patents
// no earlier run saw.
//
// # Caveats
//
//   - gocron triggers, the work queue runs (decisions.md, "patentsvc: work
//     every replica shares, bounded and fair"): every replica's gocron
//     ticks every Tick and queues the scheduled run of each company that is
//     due and has no unit alive (Store.QueueDue), one unit per company and
//     due time; every replica's workers run them, SCHEDULE_MAX_CONCURRENT
//     at once. No replica leads: the queue makes a due time run once
//     whoever queues it, and its rows are locked by whoever takes them.
//   - A newly tracked company's first run is queued with it (the store's
//     CreateTracked), so any replica runs it at once; then it is due every
//     interval.
//   - A run records its outcome only while the company is still due at
//     the unit's due time (RecordRun, RecordFailure): a due time is
//     recorded once, however often its unit runs. A unit whose process
//     died is run again by the queue once SCHEDULE_RUN_TIMEOUT has passed;
//     one cut short by a shutdown, at once, on another replica. A run is a
//     company's only unit alive, so a company is never analysed twice at
//     once.
//   - A run is cut at SCHEDULE_RUN_TIMEOUT and then counts as failed.
//   - Scheduled runs bypass the search and LLM caches and store a normal,
//     non-cached analysis. The count compared is the search's recent-patent
//     count (total_results), not the number analysed.
//   - A failed run (the search failed, or the analysis did after it) is
//     retried after RetryDelay: RetryBase, doubled for each further failure
//     in a row, never more than the interval. The count of failures in a row
//     is kept in the database (consecutive_failures), so every replica backs
//     off alike; a run that succeeds resets it. A run whose search failed
//     records nothing else (no count, no alert); one whose analysis failed
//     after the search records the count and applies the alert rule as a
//     successful one does. A company without a recent patent to analyse is
//     a success (patent count 0), not a failure.
//   - A run whose search answered keeps the publication numbers it
//     returned (the store's tracked_patents) and compares them with the
//     company's earlier runs (patent.DiffPublications): patents none of
//     them saw are new, those of the latest earlier run no longer returned
//     are dropped; both go into the run's history row (and GET
//     /admin/changes). New patents raise a new_patents alert when
//     NewPatentAlerts is set. The run that starts keeping them (a company's
//     first, or its first since migration 0011) is the baseline: nothing
//     is new on it.
//   - Every run that reports back, failed or not, adds a row to the
//     company's history (tracking_runs: time, count or none, success,
//     alert) in the one transaction that records it, its alert and the
//     alert's webhook deliveries included (RecordRun, RecordFailure). A run
//     cut short by a shutdown adds none.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-co-op/gocron/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
)

// States reported by health. Every replica with the scheduler enabled
// runs scheduled work; "standby" (a replica waiting for the leadership)
// is no longer reported.
const (
	StateRunning  = "running"
	StateDisabled = "disabled"
)

// Store is the tracked-company table and the alerts; *store.Store
// implements it.
type Store interface {
	// QueueDue queues the runs of up to limit due companies without a
	// unit alive; it returns how many it looked at and how many it queued.
	QueueDue(ctx context.Context, limit int) (seen, queued int, err error)
	// TrackedCompany returns a tracked company, or patent.ErrNotFound.
	TrackedCompany(ctx context.Context, id int64) (patent.TrackedCompany, error)
	// SeenPatents returns what the company's earlier runs saw of ids, or
	// patent.ErrNotFound.
	SeenPatents(ctx context.Context, id int64, ids []string) (patent.SeenPatents, error)
	// RecordRun records a run whose search answered, what it saw, and its
	// row in the company's history, while the company is still due at
	// due. The run's alerts and the webhook deliveries compose returns for
	// each (nil: none) are stored in the same transaction.
	RecordRun(ctx context.Context, id int64, due time.Time, out patent.RunOutcome, compose patent.Deliveries[patent.Alert]) (bool, error)
	// RecordFailure records a run whose search failed, and its row in the
	// company's history, while the company is still due at due.
	RecordFailure(ctx context.Context, id int64, due, at time.Time, failures int, next time.Time) (bool, error)
}

// Analyzer analyses a company; *analysis.Analyzer implements it.
type Analyzer interface {
	AnalyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis
}

// Config holds the schedule settings.
type Config struct {
	Interval  time.Duration // between runs of one company
	Threshold float64       // percent change that raises an alert
	// NewPatentAlerts (NEW_PATENT_ALERTS) raises a new_patents alert for a
	// run that found patents no earlier run saw; off, the runs still
	// record their new and dropped patents.
	NewPatentAlerts bool
	// Tick is how often due companies are queued (DefaultTick).
	Tick time.Duration
	// Batch is the most companies queued in one transaction.
	Batch int
	// Timeout is SCHEDULE_RUN_TIMEOUT, the longest one run takes.
	Timeout time.Duration
	// StopTimeout bounds how long Shutdown waits for a tick in progress
	// (default 30 s), whatever its context says.
	StopTimeout time.Duration
	// RetryBase is the wait before retrying a failed run (default 1 min);
	// see RetryDelay.
	RetryBase time.Duration
}

// Defaults of the Config fields left zero.
const (
	// DefaultBatch is the most companies queued in one transaction.
	DefaultBatch = 500
	// DefaultTimeout is SCHEDULE_RUN_TIMEOUT's default.
	DefaultTimeout = 15 * time.Minute
	// DefaultStopTimeout bounds the wait for a tick in progress.
	DefaultStopTimeout = 30 * time.Second
	// DefaultRetryBase is the wait before retrying a failed run.
	DefaultRetryBase = time.Minute
)

// EndGrace is how much longer than SCHEDULE_RUN_TIMEOUT the queue lets a
// run's unit go on: the run's own deadline passes first and its outcome
// is recorded.
const EndGrace = 5 * time.Second

// writeTimeout bounds the write that records a run.
const writeTimeout = 10 * time.Second

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

// DefaultTick returns the queueing tick for an interval: a quarter of it,
// between 1 second and 1 minute.
func DefaultTick(interval time.Duration) time.Duration {
	return min(max(interval/4, time.Second), time.Minute)
}

// AlertFunc composes the webhook deliveries of an alert; the store keeps
// them in the transaction of the alert and its run (decisions.md: an alert is never
// committed without its deliveries, nor a delivery without its alert). It
// may be nil (no webhooks). It is called before the alert commits.
type AlertFunc = patent.Deliveries[patent.Alert]

// Scheduler queues the due runs and runs the units.
type Scheduler struct {
	cfg     Config
	store   Store
	an      Analyzer
	onAlert AlertFunc
	logger  *slog.Logger
	now     func() time.Time
	sched   gocron.Scheduler
	// ticks is the context of the queueing ticks; Shutdown cancels it.
	ticks      context.Context
	cancelTick context.CancelFunc
}

// New builds a scheduler; Start starts its ticks. The ticks' store writes
// run in a context derived from base (its values carry over, its
// cancellation does not; Shutdown ends it).
func New(base context.Context, cfg Config, st Store, an Analyzer, onAlert AlertFunc, logger *slog.Logger, now func() time.Time) (*Scheduler, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick(cfg.Interval)
	}
	cfg.Batch = cmpOr(cfg.Batch, DefaultBatch)
	cfg.Timeout = cmpOr(cfg.Timeout, DefaultTimeout)
	cfg.StopTimeout = cmpOr(cfg.StopTimeout, DefaultStopTimeout)
	cfg.RetryBase = cmpOr(cfg.RetryBase, DefaultRetryBase)
	s := &Scheduler{cfg: cfg, store: st, an: an, onAlert: onAlert, logger: logger, now: now}
	s.ticks, s.cancelTick = context.WithCancel(context.WithoutCancel(base))
	sched, err := gocron.NewScheduler(
		gocron.WithLocation(time.UTC),
		gocron.WithLogger(gocronLogger{logger}),
		gocron.WithStopTimeout(cfg.StopTimeout),
	)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	_, err = sched.NewJob(gocron.DurationJob(cfg.Tick), gocron.NewTask(s.QueueDue),
		gocron.WithName("tracked-companies-queuer"),
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

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Start starts the ticks. A nil *Scheduler is a disabled one: Start and
// Shutdown do nothing, and State reports StateDisabled.
func (s *Scheduler) Start() {
	if s != nil {
		s.sched.Start()
	}
}

// Shutdown stops the ticks, cancelling one in progress when ctx ends. The
// runs themselves are the queue's (its Shutdown).
func (s *Scheduler) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	stop := context.AfterFunc(ctx, s.cancelTick)
	defer stop()
	err := s.sched.ShutdownWithContext(ctx)
	s.cancelTick()
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	return nil
}

// State is "running", or "disabled" for a nil (disabled) scheduler.
func (s *Scheduler) State() string {
	if s == nil {
		return StateDisabled
	}
	return StateRunning
}

// QueueDue queues the runs of every due company without a unit alive, a
// batch per transaction (gocron calls it every tick; tests call it
// directly).
func (s *Scheduler) QueueDue() {
	if s == nil {
		return
	}
	total := 0
	for s.ticks.Err() == nil {
		seen, queued, err := s.store.QueueDue(s.ticks, s.cfg.Batch)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.logger.Warn("queueing due companies failed", "err", err.Error())
			}
			return
		}
		total += queued
		// A short batch is the last; one that queued nothing new (every
		// run queued already) would only be read again.
		if seen < s.cfg.Batch || queued == 0 {
			break
		}
	}
	if total > 0 {
		s.logger.Debug("queued due companies", "count", total)
	}
}

// tracerName names the tracer of the scheduled runs' spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/schedule"

// Run runs a scheduled run's unit (the queue calls it on any replica): the
// company's analysis and the alert rule, in a root span of its own (a
// scheduled run belongs to no request; decisions.md, "Tracing (issue
// 13)"), linked to the request that tracked the company for its first
// run. A company no longer tracked, or no longer due at the unit's due
// time (its run was recorded), is done at once. It returns an error when
// the run must be done again: its outcome could not be recorded, or the
// queue's context ended (a shutdown).
func (s *Scheduler) Run(ctx context.Context, u patent.ScheduledRun) error {
	// SCHEDULE_RUN_TIMEOUT runs from the unit's start, so that it always
	// ends EndGrace before the unit's own deadline.
	deadline := time.Now().Add(s.cfg.Timeout)
	c, err := s.store.TrackedCompany(ctx, u.TrackedID)
	switch {
	case errors.Is(err, patent.ErrNotFound):
		return nil
	case err != nil:
		return err
	case !c.NextRunAt.Equal(u.DueAt):
		return nil
	}
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithAttributes(attribute.Int64("tracked_company.id", c.ID))}
	if link, ok := observe.LinkTo(u.TraceParent); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, "scheduled run", opts...)
	defer span.End()
	return s.analyse(ctx, c, u.DueAt, deadline)
}

// errRunTimedOut is the cause of a run cut at SCHEDULE_RUN_TIMEOUT.
var errRunTimedOut = errors.New("the scheduled run took longer than SCHEDULE_RUN_TIMEOUT")

// analyse is Run's work, in ctx (the queue's, with the run's span), the
// analysis until deadline.
func (s *Scheduler) analyse(ctx context.Context, c patent.TrackedCompany, due, deadline time.Time) error {
	log := s.logger.With("company", c.CompanyName)
	runCtx, cancel := context.WithDeadlineCause(ctx, deadline, errRunTimedOut)
	defer cancel()
	res := s.an.AnalyzeCompany(runCtx, patent.CompanyName(c.CompanyName), patent.AnalyzeOptions{Fresh: true})
	if ctx.Err() != nil {
		// Cut short by shutdown (or the unit's own deadline, EndGrace after
		// the run's): the queue runs it again, whole.
		log.InfoContext(ctx, "scheduled analysis cut short; it runs again", "cause", context.Cause(ctx).Error())
		return fmt.Errorf("scheduled run of %s: %w", c.CompanyName, context.Cause(ctx))
	}
	wctx, cancelWrite := context.WithTimeout(ctx, writeTimeout)
	defer cancelWrite()
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
		_, err := s.store.RecordFailure(wctx, c.ID, due, at, failures, next)
		return s.recorded(ctx, log, err, nil)
	}
	ids := make([]string, len(res.Publications))
	for i, p := range res.Publications {
		ids[i] = p.PatentID
	}
	seen, err := s.store.SeenPatents(wctx, c.ID, ids)
	if errors.Is(err, patent.ErrNotFound) {
		return nil // untracked meanwhile: nothing to record
	}
	if err != nil {
		return s.recorded(ctx, log, err, nil)
	}
	out := s.outcome(c, seen, res, ids)
	out.At, out.Failures, out.Next = at, failures, next
	recorded, err := s.store.RecordRun(wctx, c.ID, due, out, s.onAlert)
	if err == nil && recorded {
		log.InfoContext(ctx, "scheduled analysis done", "patent_count", res.TotalResults, "previous", c.LastPatentCount,
			"success", res.Success, "baseline", out.Baseline, "new_patents", len(out.Changes.New),
			"dropped_patents", len(out.Changes.Dropped))
		for _, a := range out.Alerts {
			log.InfoContext(ctx, "tracking alert", "alert_type", a.AlertType, "message", a.Message)
		}
	}
	return s.recorded(ctx, log, err, out.Alerts)
}

// outcome applies the tracking rules to a run whose search answered: what
// changed since the earlier runs (patent.DiffPublications; nothing on the
// run that starts keeping what runs see, the baseline), the count rule
// (patent.CountChangeAlert; not on the company's first run) and the new
// patents rule (patent.NewPatentsAlert, when NewPatentAlerts). The alerts
// are stored with the run, in its transaction: the run's history row says
// whether it raised one, and neither is ever committed without the other.
func (s *Scheduler) outcome(c patent.TrackedCompany, seen patent.SeenPatents, res patent.CompanyAnalysis, ids []string) patent.RunOutcome {
	out := patent.RunOutcome{Count: res.TotalResults, Seen: ids}
	if seen.Since != nil {
		out.Changes = patent.DiffPublications(func(id string) bool { return seen.Known[id] }, seen.Last, res.Publications)
	}
	out.Baseline = patent.StartsBaseline(seen.Since, c.LastAnalysisAt != nil, len(ids))
	if c.LastAnalysisAt != nil {
		if a, ok := patent.CountChangeAlert(c.CompanyName, c.LastPatentCount, res.TotalResults, s.cfg.Threshold); ok {
			out.Alerts = append(out.Alerts, a)
		}
	}
	if s.cfg.NewPatentAlerts {
		if a, ok := patent.NewPatentsAlert(c.CompanyName, c.LastPatentCount, out.Changes); ok {
			out.Alerts = append(out.Alerts, a)
		}
	}
	return out
}

// recorded reports a failed write of a run's outcome, which the queue
// retries (the run is done again).
func (s *Scheduler) recorded(ctx context.Context, log *slog.Logger, err error, alerts []patent.Alert) error {
	if err == nil {
		return nil
	}
	if len(alerts) > 0 {
		log.WarnContext(ctx, "recording the run and its alerts failed; the run is done again", "err", err.Error(), "alert", alerts[0].Message)
	} else {
		log.WarnContext(ctx, "recording the run failed; the run is done again", "err", err.Error())
	}
	return err
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
