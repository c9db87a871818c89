package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/config"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/webhook"
)

// tasks are the cores whose periodic work the ticks call.
type tasks struct {
	sched  *schedule.Scheduler
	runner *jobs.Runner
	hooks  *webhook.Dispatcher
	authn  *auth.Service
	limits httpapi.Limits
}

// Names of the ticks, as gocron's logs and the tests know them.
const (
	tickQueueDue       = "queue-due-companies"
	tickSweep          = "sweep-units"
	tickPruneHistory   = "prune-tracking-history"
	tickPruneWebhooks  = "prune-webhook-deliveries"
	tickPruneTokens    = "prune-refresh-tokens"
	tickRateLimitSweep = "sweep-rate-limit-windows"
)

// newTicks builds the service's one scheduler of periodic work, gocron
// (the design card's scheduler; STYLE.md item 18): every tick of every
// replica is a named job on it, run once at start and then at its
// interval, never two runs of one job at once (a run past the interval
// skips the next), each calling one or more core methods in a context
// derived from ctx that Shutdown cancels:
//
//   - queue-due-companies, every schedule.DefaultTick: the due tracked
//     companies' runs (when the scheduler runs);
//   - sweep-units, every queue.SweepEvery: the units of dead replicas
//     (jobs fail, scheduled runs and webhook attempts run again), the
//     deliveries and job starts the queue gave up or lacks;
//   - prune-tracking-history, prune-webhook-deliveries and
//     prune-refresh-tokens, hourly;
//   - sweep-rate-limit-windows, every minute.
//
// Start starts them.
func newTicks(ctx context.Context, cfg config.Config, t tasks, logger *slog.Logger) (gocron.Scheduler, error) {
	s, err := gocron.NewScheduler(
		gocron.WithLocation(time.UTC),
		gocron.WithLogger(gocronLogger{logger}),
		gocron.WithStopTimeout(cfg.ShutdownTimeout),
		gocron.WithGlobalJobOptions(
			gocron.WithSingletonMode(gocron.LimitModeReschedule),
			gocron.WithStartAt(gocron.WithStartImmediately()),
			gocron.WithContext(context.WithoutCancel(ctx)),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("ticks: %w", err)
	}
	add := func(name string, every time.Duration, task func(ctx context.Context)) {
		if err == nil {
			_, err = s.NewJob(gocron.DurationJob(every), gocron.NewTask(task), gocron.WithName(name))
		}
	}
	if schedulerState(cfg) == schedule.StateRunning {
		add(tickQueueDue, schedule.DefaultTick(cfg.ScheduleInterval), t.sched.QueueDue)
	}
	add(tickSweep, queue.SweepEvery, func(ctx context.Context) {
		t.runner.Sweep(ctx)
		t.sched.Sweep(ctx)
		t.hooks.Sweep(ctx)
	})
	add(tickPruneHistory, schedule.PruneEvery, t.sched.Prune)
	add(tickPruneWebhooks, webhook.PruneEvery, t.hooks.Prune)
	add(tickPruneTokens, auth.PruneEvery, func(ctx context.Context) {
		n, err := t.authn.PruneTokens(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("pruning refresh tokens failed", "err", err.Error())
		case n > 0:
			logger.Info("pruned expired refresh tokens", "count", n)
		}
	})
	add(tickRateLimitSweep, ratelimit.JanitorInterval, func(ctx context.Context) { ratelimit.Sweep(ctx, t.limits.Windows()...) })
	if err != nil {
		_ = s.Shutdown()
		return nil, fmt.Errorf("ticks: %w", err)
	}
	return s, nil
}

// shutdownTicks stops the ticks: it cancels the runs in progress and
// waits for them within ctx.
func shutdownTicks(ctx context.Context, s gocron.Scheduler) error {
	if err := s.ShutdownWithContext(ctx); err != nil {
		return fmt.Errorf("ticks: %w", err)
	}
	return nil
}

// gocronLogger routes gocron's logs into slog (its messages start with
// "gocron: "); its INFO lines go to DEBUG.
type gocronLogger struct{ l *slog.Logger }

func (g gocronLogger) Debug(msg string, args ...any) { g.l.Debug(msg, args...) }
func (g gocronLogger) Error(msg string, args ...any) { g.l.Error(msg, args...) }
func (g gocronLogger) Info(msg string, args ...any)  { g.l.Debug(msg, args...) }
func (g gocronLogger) Warn(msg string, args ...any)  { g.l.Warn(msg, args...) }
