// Command patentsvc is the patent analysis service.
//
// Usage:
//
//	patentsvc                  serve, configured by environment variables (docs/config/patentsvc.md)
//	patentsvc extract FILE.pdf print the sections found in a patent PDF as JSON
//	patentsvc version          print the version
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/config"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/llm"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdfstore"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/serpapi"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/shared/graceful"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/redact"
)

// version is the build's version, set with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if len(args) > 1 {
		switch args[1] {
		case "version":
			fmt.Fprintln(stdout, version)
			return nil
		case "extract":
			if len(args) != 3 {
				return errors.New("usage: patentsvc extract FILE.pdf")
			}
			return extract(ctx, args[2], stdout)
		default:
			return fmt.Errorf("unknown command %q (usage: patentsvc [version | extract FILE.pdf])", args[1])
		}
	}

	// Configuration and logging.
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	logger.Info("starting patentsvc", "version", version, "config", cfg)
	if cfg.AppEnv == config.Development && cfg.JWTSecret.Reveal() == config.DefaultJWTSecret {
		logger.Warn("JWT_SECRET is the built-in development default; set a random secret outside development")
	}
	if missing := cfg.AnalyzerMissing(); len(missing) > 0 {
		logger.Warn("analyzer not configured; analysis endpoints will answer 503", "missing", missing)
	}

	// Stores.
	st, err := store.Open(ctx, cfg.DatabaseDSN(), store.Pool{
		MaxOpen: cfg.DBMaxOpenConns, MaxIdle: cfg.DBMaxIdleConns, MaxLifetime: cfg.DBConnMaxLife,
	}, logger, time.Now)
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			logger.Error("closing database failed", "err", err.Error())
		}
	}()
	logger.Info("database ready", "dialect", st.Dialect())

	// Domain services.
	var previous []byte
	if cfg.JWTSecretPrev != "" {
		previous = []byte(cfg.JWTSecretPrev.Reveal())
	}
	authn, err := auth.New(st, []byte(cfg.JWTSecret.Reveal()), previous, cfg.AccessTokenTTL, cfg.RefreshTokenTTL, cfg.BcryptCost, time.Now)
	if err != nil {
		return err
	}
	var blobs pdfstore.Backend
	if cfg.StorageBackend == "s3" {
		blobs, err = pdfstore.NewS3(ctx, cfg.S3Bucket, cfg.S3EndpointURL)
	} else {
		blobs, err = pdfstore.NewLocal(cfg.StorageDir)
	}
	if err != nil {
		return fmt.Errorf("pdf storage: %w", err)
	}
	checkStorage(ctx, blobs, cfg.StorageBackend, logger)
	analyzer := analysis.New(analysis.Config{
		UseCache:     cfg.UseCache,
		SearchTTL:    cfg.SerpCacheTTL,
		Lookback:     time.Duration(cfg.PatentLookbackDays) * 24 * time.Hour,
		MaxPatents:   cfg.MaxPatentsPerCompany,
		DefaultModel: cfg.Model,
		PromptBudget: cfg.PromptMaxChars,
		PDFWorkers:   cfg.PDFWorkers,
		MaxTokens:    cfg.LLMMaxTokens,
	},
		serpapi.NewClient(cfg.SerpAPIBaseURL, cfg.SerpAPIKey.Reveal(), cfg.UpstreamTimeout, cfg.UpstreamRetries, logger),
		llm.NewClient(cfg.LLMBaseURL, cfg.LLMAPIKey.Reveal(), cfg.LLMTimeout, cfg.UpstreamRetries, logger),
		pdfstore.NewDownloader(cfg.PDFAllowedHosts, cfg.PDFMaxBytes, cfg.UpstreamTimeout, cfg.UpstreamRetries, logger),
		blobs, st, logger, time.Now)
	hooks := webhook.New(cfg.WebhookURLs, cfg.WebhookSecret.Reveal(), 15*time.Second, 4, time.Second, 1000, logger)
	runner := jobs.NewRunner(st, analyzer, processID(), cfg.JobsMaxConcurrent,
		func(j patent.Job) { hooks.Send(jobEvent(j)) }, logger)
	schedulerState := func() string { return schedule.StateDisabled }
	var sched *schedule.Scheduler
	switch {
	case !cfg.SchedulerEnabled:
		logger.Info("scheduler disabled (SCHEDULER_ENABLED=false)")
	case len(cfg.AnalyzerMissing()) > 0:
		logger.Warn("scheduler disabled: the analyzer is not configured", "missing", cfg.AnalyzerMissing())
	default:
		sched, err = schedule.New(schedule.Config{Interval: cfg.ScheduleInterval, Threshold: cfg.ChangeThresholdPercent, StopTimeout: cfg.ShutdownTimeout},
			st, analyzer, st.Elector(), func(a patent.Alert) { hooks.Send(alertEvent(a)) }, logger, time.Now)
		if err != nil {
			return err
		}
		schedulerState = sched.State
	}
	limits := httpapi.Limits{
		Register: ratelimit.New("/auth/register", "5/minute", 5, time.Minute, time.Now),
		Login:    ratelimit.New("/auth/login", "10/minute", 10, time.Minute, time.Now),
	}

	// HTTP server.
	reg := observe.NewRegistry()
	handler := httpapi.NewServer(logger, httpapi.Options{
		RootPath:        cfg.RootPath,
		CORSOrigins:     cfg.CORSOrigins,
		TrustedProxies:  cfg.TrustedProxies,
		DefaultModel:    cfg.Model,
		AnalyzerMissing: cfg.AnalyzerMissing(),
		Scheduler:       schedulerState,
	}, authn, st, analyzer, runner, limits, reg, time.Now(), time.Now)
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", cfg.Port, err)
	}
	srv := graceful.NewServer(handler, logger, 5*time.Minute)

	// Background workers.
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	var workers sync.WaitGroup
	workers.Go(func() { ratelimit.RunJanitor(bg, time.Minute, limits.Register, limits.Login) })
	workers.Go(func() { pruneRefreshTokens(bg, st, logger) })
	workers.Go(func() { runner.Run(bg) })
	workers.Go(func() { hooks.Run(bg) })
	if sched != nil {
		sched.Start()
	}

	// Serve until SIGTERM/SIGINT, then shut down in reverse order: the HTTP
	// server drains, the scheduler and the jobs finish the companies they
	// are on, pending webhooks are delivered (each step within
	// SHUTDOWN_TIMEOUT of the signal, one deadline for all), the background
	// loops stop, the database closes.
	drain, stopDrain, serveErr := graceful.Run(ctx, cfg.ShutdownTimeout, srv, ln, logger)
	defer stopDrain()
	if sched != nil {
		if err := sched.Shutdown(drain); err != nil {
			logger.Warn("scheduler shutdown", "err", err.Error())
		}
	}
	if err := runner.Shutdown(drain); err != nil {
		logger.Warn("jobs still running at the shutdown deadline were cut short", "err", err.Error())
	}
	if err := hooks.Shutdown(drain); err != nil {
		logger.Warn("webhook deliveries still pending at the shutdown deadline were dropped", "err", err.Error())
	}
	stopBG()
	workers.Wait()
	if serveErr != nil {
		return serveErr
	}
	logger.Info("patentsvc stopped")
	return nil
}

// processID names this process in job leases: host, pid and a random
// suffix (a restarted container may reuse both).
func processID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

// extract prints the sections of a patent PDF as JSON.
func extract(ctx context.Context, path string, stdout io.Writer) error {
	s, err := pdf.ExtractFile(ctx, path)
	if err != nil {
		return fmt.Errorf("extract %s: %w", path, err)
	}
	type claim struct {
		Number      int    `json:"number"`
		Independent bool   `json:"independent"`
		Text        string `json:"text"`
	}
	out := struct {
		Pages       int     `json:"pages"`
		Abstract    string  `json:"abstract"`
		Claims      []claim `json:"claims"`
		Summary     string  `json:"summary"`
		Description string  `json:"description"`
	}{Pages: s.Pages, Abstract: s.Abstract, Summary: s.Summary, Description: s.Description, Claims: []claim{}}
	for _, c := range s.Claims {
		out.Claims = append(out.Claims, claim{Number: c.Number, Independent: c.Independent, Text: c.Text})
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// pruneRefreshTokens deletes expired refresh tokens hourly.
func pruneRefreshTokens(ctx context.Context, st *store.Store, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := st.PruneRefreshTokens(ctx); err != nil {
				logger.Warn("pruning refresh tokens failed", "err", err.Error())
			} else if n > 0 {
				logger.Info("pruned expired refresh tokens", "count", n)
			}
		}
	}
}

// checkStorage tells at start-up whether PDFs can be stored: a wrong bucket
// or missing permission otherwise shows only at the first analysis. It
// does not stop the start (readiness depends on the database alone, and an
// S3 outage should not take the API down); analyses report the failure
// per patent until the store answers.
func checkStorage(ctx context.Context, blobs pdfstore.Backend, backend string, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := blobs.Check(ctx); err != nil {
		logger.Warn("pdf storage check failed; PDFs cannot be stored until it answers", "backend", backend, "err", redact.Error(err))
		return
	}
	logger.Info("pdf storage ready", "backend", backend)
}
