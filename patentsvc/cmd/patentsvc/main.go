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
	"syscall"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/config"
	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/llm"
	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdfstore"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/reports"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/serpapi"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/tracking"
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

// run is what main does: it serves on PORT (serve) until ctx ends or
// SIGINT/SIGTERM arrives, or runs the subcommand args[1] names.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) > 1 {
		return command(ctx, args, getenv, stdout)
	}
	return serve(ctx, listenPort, getenv, stdout)
}

// serve is the service's wiring, top to bottom: it serves on the listener
// listen returns for PORT until ctx ends, shuts down within
// SHUTDOWN_TIMEOUT and returns nil, or returns the error that kept it from
// starting or serving. run passes listenPort; the tests pass a listener
// they opened, which no other process can take between choosing the port
// and binding it (issue 27).
func serve(ctx context.Context, listen func(port int) (net.Listener, error), getenv func(string) string, stdout io.Writer) error {
	// Configuration and logging.
	cfg, pdfFonts, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	// The log goes out in batches, one write(2) per batch; Close writes the rest.
	out := observe.NewLogWriter(stdout, observe.LogBatchSize, observe.LogFlushInterval)
	defer out.Close()
	logger := newLogger(cfg, out)
	// Tracing, before anything that makes spans or wraps a transport
	// (decisions.md, "Tracing (issue 13)"); off without an OTLP endpoint.
	stopTracing, err := observe.SetupTracing(ctx, "patentsvc", version, getenv, logger)
	if err != nil {
		return err
	}

	// Stores.
	st, err := store.Open(ctx, storeDialect(cfg.Database), cfg.Database.DSN.Reveal(), storePool(cfg), logger, time.Now)
	if err != nil {
		return err
	}
	defer closeStore(st, logger)
	blobs, err := openPDFStore(ctx, cfg, logger)
	if err != nil {
		return err
	}

	// Clients and domain services.
	authn, err := auth.New(st.Users(), []byte(cfg.JWTSecret.Reveal()), cfg.PreviousJWTSecret(), cfg.AccessTokenTTL, cfg.RefreshTokenTTL, cfg.BcryptCost, time.Now)
	if err != nil {
		return err
	}
	analyzer := newAnalyzer(cfg, st, blobs, newExtractor(ctx, cfg, logger), logger)
	hooks := newWebhooks(ctx, cfg, st, logger)
	defer hooks.Close()
	runner := jobs.NewRunner(jobs.Config{MaxPerUser: cfg.JobsMaxPerUser, Timeout: cfg.JobsTimeout, Attempts: cfg.JobsMaxAttempts}, st.Jobs(), st.Jobs(), analyzer, hooks, logger, time.Now)
	sched := newScheduler(cfg, st, analyzer, hooks, logger)
	limits := httpapi.NewLimits(time.Now, sharedLimits(st, logger))

	// This replica's liveness session and the spec's start-up rule, then
	// the work queue that runs the units as this replica, and the ticks.
	sess, err := startSession(ctx, st, runner, logger)
	if err != nil {
		return err
	}
	defer sess.Close()
	work, ticks, err := newWork(ctx, cfg, st, sess, tasks{sched: sched, runner: runner, hooks: hooks, authn: authn, limits: limits}, logger)
	if err != nil {
		return err
	}

	// HTTP server; then the queue's workers and the ticks start.
	reg := observe.NewRegistry()
	hooks.RegisterMetrics(reg)
	work.RegisterMetrics(ctx, reg)
	handler := httpapi.NewServer(logger, serverOptions(cfg, pdfFonts), serverDeps(st, authn, analyzer, runner, limits, reg))
	ln, err := listenAndWork(ctx, listen, cfg.Port, work, ticks)
	if err != nil {
		return err
	}
	srv := graceful.NewServer(handler, logger, httpapi.WriteTimeout)

	// Serve until SIGTERM/SIGINT, then shut down in reverse order, all
	// within SHUTDOWN_TIMEOUT of the signal: HTTP drains, the ticks stop,
	// the queue's work finishes (or is cut, to run again elsewhere), the
	// spans are exported, the liveness session and the database close
	// (deferred).
	drain, stopDrain, serveErr := graceful.Run(ctx, cfg.ShutdownTimeout, srv, ln, logger)
	defer stopDrain()
	waitForWork(drain, ticks, work, logger)
	flushTraces(drain, stopTracing, logger)
	if serveErr != nil {
		return serveErr
	}
	logger.Info("patentsvc stopped")
	return nil
}

// listenAndWork listens on port (listen), then starts the queue's workers,
// which run in a context of their own until its Shutdown, and the ticks
// (one scheduler, gocron, for every periodic task of the service); when
// either fails, the ticks are shut down and the error returned.
func listenAndWork(ctx context.Context, listen func(port int) (net.Listener, error), port int, work *queue.Queue,
	ticks gocron.Scheduler) (net.Listener, error) {
	ln, err := listen(port)
	if err != nil {
		_ = ticks.Shutdown()
		return nil, err
	}
	if err := work.Start(context.WithoutCancel(ctx)); err != nil {
		ln.Close()
		_ = ticks.Shutdown()
		return nil, err
	}
	ticks.Start()
	return ln, nil
}

// listenPort listens on port on every interface; port 0 takes a free port
// the kernel picks, which graceful.Serve's start-up line ("http server
// listening") names.
func listenPort(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on port %d: %w", port, err)
	}
	return ln, nil
}

// flushTraces exports the spans still queued and stops the tracer
// provider, within drain (SHUTDOWN_TIMEOUT from the signal).
func flushTraces(drain context.Context, stop func(context.Context) error, logger *slog.Logger) {
	if err := stop(drain); err != nil {
		logger.Warn("spans not exported at shutdown", "err", err.Error())
	}
}

// command runs the subcommand args[1].
func command(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	switch args[1] {
	case "version":
		fmt.Fprintln(stdout, version)
		return nil
	case "extract":
		if len(args) != 3 {
			return errors.New("usage: patentsvc extract FILE.pdf")
		}
		return extract(ctx, args[2], getenv, stdout)
	default:
		return fmt.Errorf("unknown command %q (usage: patentsvc [version | extract FILE.pdf])", args[1])
	}
}

// newLogger returns the JSON logger at LOG_LEVEL, having logged the
// effective configuration and what it leaves off.
func newLogger(cfg config.Config, stdout io.Writer) *slog.Logger {
	// JSON lines; those of a sampled request carry its trace_id and span_id.
	logger := slog.New(observe.NewLogHandler(stdout, cfg.LogLevel))
	if cfg.Demo { // every line says it comes from make demo
		logger = logger.With("demo", true)
	}
	logger.Info("starting patentsvc", "version", version, "config", cfg)
	if cfg.AppEnv != config.Development && cfg.Database.Dialect == config.SQLite {
		logger.Warn("DATABASE_URL names SQLite outside development: one process only, no replicas (docs/patentsvc.md)")
	}
	if cfg.AppEnv == config.Development && cfg.JWTSecret.Reveal() == config.DefaultJWTSecret {
		logger.Warn("JWT_SECRET is the built-in development default; set a random secret outside development")
	}
	if missing := cfg.AnalyzerMissing(); len(missing) > 0 {
		logger.Warn("analyzer not configured; analysis endpoints will answer 503", "missing", missing)
	}
	return logger
}

// storePool is the database pool the DB_* settings ask for.
func storePool(cfg config.Config) store.Pool {
	return store.Pool{MaxOpen: cfg.DBMaxOpenConns, MaxIdle: cfg.DBMaxIdleConns, MaxLifetime: cfg.DBConnMaxLife}
}

func closeStore(st *store.Store, logger *slog.Logger) {
	if err := st.Close(); err != nil {
		logger.Error("closing database failed", "err", err.Error())
	}
}

// openPDFStore opens the PDF store STORAGE_BACKEND names and tells at
// start-up whether PDFs can be stored: a wrong bucket or a missing
// permission otherwise shows only at the first analysis. A failed check
// does not stop the start (readiness depends on the database alone, and an
// S3 outage should not take the API down); analyses report the failure per
// patent until the store answers.
func openPDFStore(ctx context.Context, cfg config.Config, logger *slog.Logger) (pdfstore.Backend, error) {
	var (
		blobs pdfstore.Backend
		err   error
	)
	if cfg.StorageBackend == "s3" {
		blobs, err = pdfstore.NewS3(ctx, cfg.S3Bucket, cfg.S3EndpointURL)
	} else {
		blobs, err = pdfstore.NewLocal(cfg.StorageDir)
	}
	if err != nil {
		return nil, fmt.Errorf("pdf storage: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, pdfstore.CheckTimeout)
	defer cancel()
	if err := blobs.Check(ctx); err != nil {
		logger.Warn("pdf storage check failed; PDFs cannot be stored until it answers", "backend", cfg.StorageBackend, "err", redact.Error(err))
	} else {
		logger.Info("pdf storage ready", "backend", cfg.StorageBackend)
	}
	return blobs, nil
}

// newAnalyzer builds the analysis pipeline on its upstream clients, the
// search and the model each behind its cache.
func newAnalyzer(cfg config.Config, st *store.Store, blobs pdfstore.Backend, extractor *pdf.Extractor, logger *slog.Logger) *analysis.Analyzer {
	caches := analysis.CacheConfig{Read: cfg.UseCache, SearchTTL: cfg.SerpCacheTTL,
		// LLM_MAX_ANSWER_KB: the client cuts fresh answers, the cache
		// cached ones.
		MaxAnswerBytes: cfg.LLMMaxAnswerBytes}
	search := serpapi.NewClient(cfg.SerpAPIBaseURL, cfg.SerpAPIKey.Reveal(), cfg.UpstreamTimeout, cfg.UpstreamRetries, logger)
	model := llm.NewClient(cfg.LLMBaseURL, cfg.LLMAPIKey.Reveal(), cfg.LLMTimeout, cfg.UpstreamRetries, cfg.LLMMaxAnswerBytes, logger)
	return analysis.New(analysis.Config{
		Lookback:     time.Duration(cfg.PatentLookbackDays) * 24 * time.Hour,
		MaxPatents:   cfg.MaxPatentsPerCompany,
		DefaultModel: cfg.Model,
		PromptBudget: cfg.PromptMaxChars,
		PDFWorkers:   cfg.PDFWorkers,
		MaxTokens:    cfg.LLMMaxTokens,
		PDFLimits:    extractor.Limits().String(),
	},
		analysis.CachedSearch(search, st.Caches(), caches, logger), analysis.CachedCompletions(model, st.Caches(), caches, logger),
		pdfstore.NewDownloader(cfg.PDFAllowedHosts, cfg.PDFMaxBytes, cfg.UpstreamTimeout, cfg.UpstreamRetries, logger),
		blobs, extractor.Extract, st.Analyses(), logger, time.Now)
}

// newExtractor returns the PDF section extractor, and logs whether its
// engine is installed: with PDF_OCR=auto it
// reads PDFs without a text layer by OCR when tesseract and its English
// data are installed. Otherwise such PDFs are reported as scans, with the
// reason.
func newExtractor(ctx context.Context, cfg config.Config, logger *slog.Logger) *pdf.Extractor {
	limits := pdfLimits(cfg)
	// The engine (poppler's programs) reads every PDF: without it each
	// patent's entry says so, and the service still answers.
	if err := pdf.CheckEngine(); err != nil {
		logger.Warn("pdf engine unavailable; no pdf is read", "reason", err.Error())
	} else {
		logger.Info("pdf engine ready", "engine", "poppler", "memory_ceiling_mb", (limits.MaxDecoded+pdf.EngineBase)>>20)
	}
	if cfg.PDFOCR == "off" {
		logger.Info("pdf ocr off (PDF_OCR=off)")
		return pdf.NewExtractor(nil, "PDF_OCR is off", limits)
	}
	tess, err := pdf.FindTesseract(ctx, "eng", pdf.PageTimeout)
	if err != nil {
		logger.Info("pdf ocr unavailable; scanned PDFs without a text layer are not read", "reason", err.Error())
		return pdf.NewExtractor(nil, err.Error(), limits)
	}
	logger.Info("pdf ocr ready", "page_timeout", pdf.PageTimeout.String())
	return pdf.NewExtractor(tess, "", limits)
}

// pdfLimits are the bounds on reading one document: PDF_EXTRACT_TIMEOUT,
// PDF_MAX_PAGES, PDF_MAX_DECODED_MB.
func pdfLimits(cfg config.Config) pdf.Limits {
	return pdf.Limits{Timeout: cfg.PDFExtractTimeout, MaxPages: cfg.PDFMaxPages, MaxDecoded: cfg.PDFMaxDecodedBytes}
}

// newWebhooks builds the webhook dispatcher: it composes the deliveries
// that the store keeps with their alert or job end, and makes the attempts
// their units in the queue ask for.
func newWebhooks(ctx context.Context, cfg config.Config, st *store.Store, logger *slog.Logger) *webhook.Dispatcher {
	return webhook.New(ctx, webhook.Config{URLs: cfg.WebhookURLs, Secret: cfg.WebhookSecret.Reveal(), Timeout: cfg.WebhookTimeout,
		Schedule: cfg.WebhookRetrySchedule}, st.Deliveries(), logger)
}

// startSession opens this replica's liveness session (store.Session: on
// PostgreSQL a connection of its own holding the replica's advisory
// lock) and applies the spec's start-up rule: when no other replica is
// alive (always on SQLite), the jobs left pending or running fail, each
// with its job.completed webhook. It returns with the start-up done, so
// a replica starting next sees this one.
func startSession(ctx context.Context, st *store.Store, runner *jobs.Runner, logger *slog.Logger) (*store.Session, error) {
	sess, err := st.OpenSession(ctx, logger)
	if err != nil {
		return nil, err
	}
	if sess.Alone() {
		err = runner.FailUnfinished(ctx)
	}
	if err == nil {
		err = sess.Started(ctx)
	}
	if err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// newWork builds the work queue (newQueue) and the ticks (newTicks).
func newWork(ctx context.Context, cfg config.Config, st *store.Store, sess *store.Session, t tasks, logger *slog.Logger) (*queue.Queue, gocron.Scheduler, error) {
	work, err := newQueue(ctx, cfg, st, sess, t.runner, t.sched, t.hooks, logger)
	if err != nil {
		return nil, nil, err
	}
	ticks, err := newTicks(ctx, cfg, t, logger)
	if err != nil {
		return nil, nil, err
	}
	return work, ticks, nil
}

// newQueue builds the work queue's workers on the store's pool, as the
// replica sess names: every replica works the webhook deliveries; the
// jobs when the analyzer is configured, up to JOBS_MAX_CONCURRENT; the
// scheduled runs when the scheduler is enabled, up to
// SCHEDULE_MAX_CONCURRENT. Each unit's timeout is its work's own with a
// margin, so the work ends (and is recorded) first.
func newQueue(ctx context.Context, cfg config.Config, st *store.Store, sess *store.Session, runner *jobs.Runner, sched *schedule.Scheduler,
	hooks *webhook.Dispatcher, logger *slog.Logger) (*queue.Queue, error) {
	db, err := st.SQL()
	if err != nil {
		return nil, err
	}
	qc := queue.Config{Dialect: queue.SQLite, DeliveryWorkers: webhook.Workers,
		ScheduledTimeout: cfg.ScheduleRunTimeout + schedule.EndGrace, JobTimeout: cfg.JobsTimeout + jobs.EndGrace,
		DeliveryTimeout: cfg.WebhookTimeout + webhook.UnitMargin}
	if st.Dialect() == store.Postgres {
		qc.Dialect, qc.ListenDSN = queue.Postgres, cfg.Database.DSN.Reveal()
	}
	w := queue.Workers{Deliveries: hooks}
	if len(cfg.AnalyzerMissing()) == 0 {
		qc.JobWorkers, w.Jobs = cfg.JobsMaxConcurrent, runner
	}
	if schedulerState(cfg) == schedule.StateRunning {
		qc.ScheduledWorkers, w.Runs = cfg.ScheduleMaxConcurrent, sched
	}
	return queue.New(ctx, db, qc, sess, w, logger)
}

// newScheduler builds the tracked-company scheduler; its runs are queued
// and worked only when it is running (schedulerState).
func newScheduler(cfg config.Config, st *store.Store, an *analysis.Analyzer, hooks *webhook.Dispatcher, logger *slog.Logger) *schedule.Scheduler {
	switch {
	case !cfg.SchedulerEnabled:
		logger.Info("scheduler disabled (SCHEDULER_ENABLED=false)")
	case len(cfg.AnalyzerMissing()) > 0:
		logger.Warn("scheduler disabled: the analyzer is not configured", "missing", cfg.AnalyzerMissing())
	}
	return schedule.New(schedule.Config{Interval: cfg.ScheduleInterval, Threshold: cfg.ChangeThresholdPercent, NewPatentAlerts: cfg.NewPatentAlerts,
		RetryBase: cfg.ScheduleRetryBase, Timeout: cfg.ScheduleRunTimeout, History: cfg.TrackingHistory},
		st.Tracking(), an, hooks, logger, time.Now)
}

// schedulerState is "disabled" when SCHEDULER_ENABLED is false or the
// analyzer lacks its keys, "running" otherwise.
func schedulerState(cfg config.Config) string {
	if !cfg.SchedulerEnabled || len(cfg.AnalyzerMissing()) > 0 {
		return schedule.StateDisabled
	}
	return schedule.StateRunning
}

// sharedLimits returns the store of the rate-limit windows: the database on
// PostgreSQL, so the per-IP limits hold across replicas (decisions.md,
// "Across replicas"); nil on SQLite, a single process whose windows stay in
// memory.
func sharedLimits(st *store.Store, logger *slog.Logger) *ratelimit.Cluster {
	if st.Dialect() != store.Postgres {
		return nil
	}
	logger.Info("rate-limit windows kept in the database, shared across replicas")
	return ratelimit.NewCluster(st.RateWindows(), ratelimit.StoreTimeout, logger, time.Now)
}

// storeDialect is the store's name for DATABASE_URL's dialect.
func storeDialect(db config.Database) string {
	if db.Dialect == config.Postgres {
		return store.Postgres
	}
	return store.SQLite
}

// serverDeps are the cores the HTTP layer calls, on st: the ones run
// builds for its background work too, and those only requests use.
func serverDeps(st *store.Store, authn *auth.Service, an *analysis.Analyzer, runner *jobs.Runner, limits httpapi.Limits,
	reg *prometheus.Registry) httpapi.Deps {
	return httpapi.Deps{
		Users: authn, Analyses: an, Jobs: runner, Tracking: tracking.New(st.Tracking(), time.Now), Reports: reports.New(st.Analyses(), st.Tracking(), time.Now),
		Deliveries: webhook.NewAdmin(st.Deliveries()), Database: st, Limits: limits, Registry: reg, Started: time.Now(), Now: time.Now,
	}
}

// serverOptions are the settings the HTTP layer needs.
func serverOptions(cfg config.Config, pdfFonts *export.Fonts) httpapi.Options {
	return httpapi.Options{
		Version:         version,
		RootPath:        cfg.RootPath,
		CORSOrigins:     cfg.CORSOrigins,
		TrustedProxies:  cfg.TrustedProxies,
		DefaultModel:    cfg.Model,
		AnalyzerMissing: cfg.AnalyzerMissing(),
		Demo:            cfg.Demo,
		Docs:            cfg.DocsEnabled,
		Scheduler:       schedulerState(cfg),
		PDF:             export.PDFOptions{Fonts: pdfFonts},
	}
}

// loadConfig reads the configuration and loads the files it names: the
// PDF report's fonts, read once, so that a bad PDF_FONT_PATH stops
// start-up.
func loadConfig(getenv func(string) string) (config.Config, *export.Fonts, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return config.Config{}, nil, err
	}
	fonts, err := loadPDFFonts(cfg)
	if err != nil {
		return config.Config{}, nil, err
	}
	return cfg, fonts, nil
}

// loadPDFFonts reads and parses the PDF report's fonts: the Go fonts and,
// when PDF_FONT_PATH is set, the fallback font (with PDF_FONT_BOLD_PATH as
// its bold).
func loadPDFFonts(cfg config.Config) (*export.Fonts, error) {
	var regular, bold []byte
	var err error
	if cfg.PDFFontPath != "" {
		if regular, err = os.ReadFile(cfg.PDFFontPath); err != nil {
			return nil, fmt.Errorf("PDF_FONT_PATH: %w", err)
		}
	}
	if cfg.PDFFontBoldPath != "" {
		if bold, err = os.ReadFile(cfg.PDFFontBoldPath); err != nil {
			return nil, fmt.Errorf("PDF_FONT_BOLD_PATH: %w", err)
		}
	}
	fonts, err := export.NewFonts(regular, bold)
	if err != nil {
		return nil, fmt.Errorf("PDF_FONT_PATH %s, PDF_FONT_BOLD_PATH %s: %w", orNone(cfg.PDFFontPath), orNone(cfg.PDFFontBoldPath), err)
	}
	return fonts, nil
}

func orNone(path string) string {
	if path == "" {
		return "(not set)"
	}
	return strconv.Quote(path)
}

// waitForWork stops the ticks and lets the queue's work in progress
// finish within drain; what the deadline cuts short, the queue runs again
// at once on another replica (or this service's next start).
func waitForWork(drain context.Context, ticks gocron.Scheduler, work *queue.Queue, logger *slog.Logger) {
	if err := shutdownTicks(drain, ticks); err != nil {
		logger.Warn("periodic work still running at the shutdown deadline was cut short", "err", err.Error())
	}
	if err := work.Shutdown(drain); err != nil {
		logger.Warn("work still running at the shutdown deadline was cut short; it runs again", "err", err.Error())
	}
}

// extract prints the sections of a patent PDF as JSON, reading a scan by
// OCR as the service would (PDF_OCR).
func extract(ctx context.Context, path string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("extract %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("extract %s: %w", path, err)
	}
	s, err := newExtractor(ctx, cfg, slog.New(slog.DiscardHandler)).Extract(ctx, f, fi.Size())
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
