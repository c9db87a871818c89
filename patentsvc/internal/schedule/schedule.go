// Package schedule re-analyses tracked companies periodically and raises
// alerts when their patent counts change much, or when they have patents
// no earlier run saw.
//
// # Caveats
//
//   - gocron triggers, the work queue runs (decisions.md, "patentsvc: work
//     every replica shares, bounded and fair"): every replica's gocron
//     (built in main, with every periodic task of the service) calls
//     QueueDue every DefaultTick, which queues the scheduled run of each
//     company that is due and has no unit alive (Store.QueueDue), one unit
//     per company and due time; every replica's workers run them
//     (queue.ScheduledRunWorker calls Run), SCHEDULE_MAX_CONCURRENT at
//     once. No replica leads: the queue makes a due time run once whoever
//     queues it, and its rows are locked by whoever takes them.
//   - A run is composed before it is stored: its unit carries the company's
//     name and the ids its alerts will have (reserved when it was queued),
//     so a run reads the store once (SeenPatents, after the analysis), then
//     composes its outcome, its alerts and their webhook deliveries as
//     data, and stores them in one call (RecordRun).
//   - A newly tracked company's first run is queued with it (the store's
//     CreateTracked), so any replica runs it at once; then it is due every
//     interval.
//   - A run records its outcome only while the company is still due at
//     the unit's due time (RecordRun, RecordFailure): a due time is
//     recorded once, however often its unit runs. A unit whose replica
//     died is run again as soon as a live replica's sweep sees that
//     replica's session has ended (Sweep, every few seconds); one cut short
//     by a shutdown, at once, on another replica. A unit run again reads
//     the company first, so a due time recorded just before its replica
//     died is not analysed twice. A run is a company's only unit alive, so
//     a company is never analysed twice at once; untracking a company
//     cancels its unit.
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

// Store is the tracked-company table and the alerts; store.Tracking
// implements it.
type Store interface {
	// QueueDue queues the runs of up to limit due companies without a
	// unit alive; it returns how many it looked at and how many it queued.
	QueueDue(ctx context.Context, limit int) (seen, queued int, err error)
	// TrackedCompany returns a tracked company, or patent.ErrNotFound.
	TrackedCompany(ctx context.Context, id int64) (patent.TrackedCompany, error)
	// ReserveAlertIDs reserves n alert ids.
	ReserveAlertIDs(ctx context.Context, n int) ([]int64, error)
	// SeenPatents returns the company as it stands and what its earlier
	// runs saw of ids, or patent.ErrNotFound.
	SeenPatents(ctx context.Context, id int64, ids []string) (patent.SeenPatents, error)
	// RecordRun records a run whose search answered, what it saw, its row
	// in the company's history, its alerts and their webhook deliveries,
	// in one transaction, while the company is still due at due.
	RecordRun(ctx context.Context, id int64, due time.Time, out patent.RunOutcome, deliveries []patent.Delivery) (bool, error)
	// RecordFailure records a run whose search failed, and its row in the
	// company's history, while the company is still due at due.
	RecordFailure(ctx context.Context, id int64, due, at time.Time, failures int, next time.Time) (bool, error)
	// ReleaseDeadUnits makes the units of its kind that dead replicas were
	// running available again.
	ReleaseDeadUnits(ctx context.Context) (int64, error)
	// PruneTrackingRuns deletes the history rows older than before.
	PruneTrackingRuns(ctx context.Context, before time.Time) (int64, error)
}

// Analyzer analyses a company; *analysis.Analyzer implements it.
type Analyzer interface {
	AnalyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis
}

// Notifier composes the webhook deliveries of an alert, which the store
// keeps in the transaction of the alert and its run (decisions.md: an
// alert is never committed without its deliveries, nor a delivery without
// its alert); *webhook.Dispatcher implements it. Without webhooks it
// composes none.
type Notifier interface {
	AlertDeliveries(a patent.Alert) ([]patent.Delivery, error)
}

// Config holds the schedule settings.
type Config struct {
	Interval  time.Duration // between runs of one company
	Threshold float64       // percent change that raises an alert
	// NewPatentAlerts (NEW_PATENT_ALERTS) raises a new_patents alert for a
	// run that found patents no earlier run saw; off, the runs still
	// record their new and dropped patents.
	NewPatentAlerts bool
	// Batch is the most companies queued in one transaction.
	Batch int
	// Timeout is SCHEDULE_RUN_TIMEOUT, the longest one run takes.
	Timeout time.Duration
	// RetryBase is the wait before retrying a failed run (default 1 min);
	// see RetryDelay.
	RetryBase time.Duration
	// History is TRACKING_HISTORY_DAYS: how long a company's history rows
	// are kept (Prune); 0 keeps them.
	History time.Duration
}

// Defaults of the Config fields left zero.
const (
	// DefaultBatch is the most companies queued in one transaction.
	DefaultBatch = 500
	// DefaultTimeout is SCHEDULE_RUN_TIMEOUT's default.
	DefaultTimeout = 15 * time.Minute
	// DefaultRetryBase is the wait before retrying a failed run.
	DefaultRetryBase = time.Minute
)

// EndGrace is how much longer than SCHEDULE_RUN_TIMEOUT the queue lets a
// run's unit go on: the run's own deadline passes first and its outcome
// is recorded.
const EndGrace = 5 * time.Second

// writeTimeout bounds the write that records a run.
const writeTimeout = 10 * time.Second

// PruneEvery is how often gocron has Prune delete old history rows.
const PruneEvery = time.Hour

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

// DefaultTick returns how often the due companies are queued for an
// interval: a quarter of it, between 1 second and 1 minute.
func DefaultTick(interval time.Duration) time.Duration {
	return min(max(interval/4, time.Second), time.Minute)
}

// Scheduler queues the due runs and runs their units. It is safe for
// concurrent use.
type Scheduler struct {
	cfg    Config
	store  Store
	an     Analyzer
	notify Notifier
	logger *slog.Logger
	now    func() time.Time
}

// New returns a Scheduler. notify may be nil (no webhooks).
func New(cfg Config, st Store, an Analyzer, notify Notifier, logger *slog.Logger, now func() time.Time) *Scheduler {
	cfg.Batch = cmpOr(cfg.Batch, DefaultBatch)
	cfg.Timeout = cmpOr(cfg.Timeout, DefaultTimeout)
	cfg.RetryBase = cmpOr(cfg.RetryBase, DefaultRetryBase)
	return &Scheduler{cfg: cfg, store: st, an: an, notify: notify, logger: logger, now: now}
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// QueueDue queues the runs of every due company without a unit alive, a
// batch per transaction (gocron calls it every tick; tests call it
// directly).
func (s *Scheduler) QueueDue(ctx context.Context) {
	total := 0
	for ctx.Err() == nil {
		seen, queued, err := s.store.QueueDue(ctx, s.cfg.Batch)
		if err != nil {
			if ctx.Err() == nil {
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

// Sweep runs again, at once, the scheduled runs that a replica which died
// was running (gocron calls it every few seconds on every replica; its
// session ended, so they are known dead).
func (s *Scheduler) Sweep(ctx context.Context) {
	n, err := s.store.ReleaseDeadUnits(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.Warn("releasing the scheduled runs of dead replicas failed", "err", err.Error())
	case n > 0:
		s.logger.Warn("scheduled runs of dead replicas released to run again", "count", n)
	}
}

// Prune deletes the history rows older than Config.History (gocron calls
// it every PruneEvery; every replica does, and prunes of the same rows by
// several are harmless).
func (s *Scheduler) Prune(ctx context.Context) {
	if s.cfg.History <= 0 {
		return
	}
	n, err := s.store.PruneTrackingRuns(ctx, s.now().Add(-s.cfg.History))
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.Warn("pruning tracking runs failed", "err", err.Error(), "count", n)
	case n > 0:
		s.logger.Info("pruned old tracking runs", "count", n)
	}
}

// tracerName names the tracer of the scheduled runs' spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/schedule"

// Run runs a scheduled run's unit (queue.ScheduledRunWorker calls it, on
// any replica): the company's analysis and the tracking rules, in a root
// span of its own (a scheduled run belongs to no request; decisions.md,
// "Tracing (issue 13)"), linked to the request that tracked the company for
// its first run. A company no longer tracked, or no longer due at the
// unit's due time (its run was recorded), is done at once. It returns an
// error when the run must be done again: its outcome could not be
// recorded, or the queue's context ended (a shutdown, the replica's lost
// session).
func (s *Scheduler) Run(ctx context.Context, u patent.ScheduledRun) error {
	// SCHEDULE_RUN_TIMEOUT runs from the unit's start, so that it always
	// ends EndGrace before the unit's own deadline.
	deadline := time.Now().Add(s.cfg.Timeout)
	// A unit run again (its replica died, or a shutdown cut it) may have
	// recorded its due time already; a unit queued without the company's
	// name (by an older version) does not know it.
	if u.Attempt > 1 || u.CompanyName == "" {
		c, err := s.store.TrackedCompany(ctx, u.TrackedID)
		switch {
		case errors.Is(err, patent.ErrNotFound):
			return nil
		case err != nil:
			return err
		case !c.NextRunAt.Equal(u.DueAt):
			return nil
		}
		u.CompanyName = c.CompanyName
	}
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithAttributes(attribute.Int64("tracked_company.id", u.TrackedID))}
	if link, ok := observe.LinkTo(u.TraceParent); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, "scheduled run", opts...)
	defer span.End()
	return s.analyse(ctx, u, deadline)
}

// errRunTimedOut is the cause of a run cut at SCHEDULE_RUN_TIMEOUT.
var errRunTimedOut = errors.New("the scheduled run took longer than SCHEDULE_RUN_TIMEOUT")

// analyse is Run's work, in ctx (the queue's, with the run's span), the
// analysis until deadline.
func (s *Scheduler) analyse(ctx context.Context, u patent.ScheduledRun, deadline time.Time) error {
	log := s.logger.With("company", u.CompanyName)
	runCtx, cancel := context.WithDeadlineCause(ctx, deadline, errRunTimedOut)
	defer cancel()
	res := s.an.AnalyzeCompany(runCtx, patent.CompanyName(u.CompanyName), patent.AnalyzeOptions{Fresh: true})
	if ctx.Err() != nil {
		// Cut short by shutdown, the replica's lost session (or the unit's
		// own deadline, EndGrace after the run's): the queue runs it again,
		// whole.
		log.InfoContext(ctx, "scheduled analysis cut short; it runs again", "cause", context.Cause(ctx).Error())
		return fmt.Errorf("scheduled run of %s: %w", u.CompanyName, context.Cause(ctx))
	}
	wctx, cancelWrite := context.WithTimeout(ctx, writeTimeout)
	defer cancelWrite()
	ids := make([]string, len(res.Publications))
	for i, p := range res.Publications {
		ids[i] = p.PatentID
	}
	seen, err := s.store.SeenPatents(wctx, u.TrackedID, ids)
	switch {
	case errors.Is(err, patent.ErrNotFound):
		return nil // untracked meanwhile: nothing to record
	case err != nil:
		return s.recorded(ctx, log, err, nil)
	case !seen.Company.NextRunAt.Equal(u.DueAt):
		return nil // recorded already
	}
	c, at := seen.Company, s.now()
	next, failures := at.Add(s.cfg.Interval), 0
	// No recent patent with a PDF is an answer (count 0), not a failure.
	if failed := !res.Success && !(res.Searched && res.PatentCount == 0); failed {
		failures = c.ConsecutiveFailures + 1
		retry := RetryDelay(s.cfg.RetryBase, s.cfg.Interval, failures)
		next = at.Add(retry)
		log.WarnContext(ctx, "scheduled analysis failed; retrying", "err", errText(res.Error), "consecutive_failures", failures, "retry_in", retry.String())
	}
	if !res.Searched {
		_, err := s.store.RecordFailure(wctx, c.ID, u.DueAt, at, failures, next)
		return s.recorded(ctx, log, err, nil)
	}
	out := s.outcome(c, seen, res, ids)
	out.At, out.Failures, out.Next = at, failures, next
	deliveries, err := s.alerts(wctx, u, &out)
	if err != nil {
		return s.recorded(ctx, log, err, out.Alerts)
	}
	recorded, err := s.store.RecordRun(wctx, c.ID, u.DueAt, out, deliveries)
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

// alerts gives the run's alerts their ids (reserved when the run was
// queued; reserved now for a unit queued without them) and time, and
// composes their webhook deliveries, to be stored with them.
func (s *Scheduler) alerts(ctx context.Context, u patent.ScheduledRun, out *patent.RunOutcome) ([]patent.Delivery, error) {
	if len(out.Alerts) == 0 {
		return nil, nil
	}
	ids := u.AlertIDs
	if len(ids) < len(out.Alerts) {
		var err error
		if ids, err = s.store.ReserveAlertIDs(ctx, len(out.Alerts)); err != nil {
			return nil, err
		}
	}
	var deliveries []patent.Delivery
	for i := range out.Alerts {
		a := &out.Alerts[i]
		a.ID, a.CreatedAt = ids[i], out.At.UTC().Truncate(time.Microsecond)
		if s.notify == nil {
			continue
		}
		ds, err := s.notify.AlertDeliveries(*a)
		if err != nil {
			return nil, fmt.Errorf("compose the alert's webhook deliveries: %w", err)
		}
		deliveries = append(deliveries, ds...)
	}
	return deliveries, nil
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
