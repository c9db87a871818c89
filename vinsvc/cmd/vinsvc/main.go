// Command vinsvc is the VIN decoding service: it decodes VINs through NHTSA
// vPIC, caches the answers in a bbolt file and serves them over HTTP.
//
// Usage:
//
//	vinsvc            serve, configured by environment variables (docs/config/vinsvc.md)
//	vinsvc version    print the version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewayapis/shared/graceful"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/cluster"
	"github.com/gatewayapis/vinsvc/internal/config"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpicdb"
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
		return command(args[1], stdout)
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
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	// The log goes out in batches, one write(2) per batch; Close writes the rest.
	out := observe.NewLogWriter(stdout, observe.LogBatchSize, observe.LogFlushInterval)
	defer out.Close()
	logger := newLogger(cfg, out)

	// Tracing (OTEL_*): flushed by waitForWork, or by the defer on a failed start.
	shutdownTracing, err := observe.SetupTracing(ctx, "vinsvc", version, getenv, logger)
	if err != nil {
		return err
	}
	defer flushTraces(context.Background(), cfg.ShutdownTimeout, shutdownTracing, logger)

	// The cache: this pod's bbolt file.
	local, err := cache.Open(cfg.CachePath, cfg.CacheTTL, logger, time.Now)
	if err != nil {
		return err
	}
	defer closeCache(local, logger)

	// State shared by the replicas (REDIS_URL); nil when there is none.
	reg := observe.NewRegistry()
	shared, err := openRedis(ctx, cfg, logger, reg)
	if err != nil {
		return err
	}
	defer shared.Close()

	// Clients and domain services.
	client := vpic.NewClient(cfg.VPICBaseURL, cfg.UpstreamTimeout, cfg.UpstreamRetries, cfg.UpstreamMaxRPS,
		logger, vpic.NewMetrics(reg), clientOptions(cfg, shared)...)
	tiers, upstream := sharedDecodes(cfg, shared, local, client)
	snapshots := decoding.NewSnapshots(nil, cfg.SnapshotMode, cfg.SnapshotCacheTTL, logger)
	decoder := decoding.Compose(tiers, upstream, snapshots, cfg.SnapshotAfter, client.MaxCallDuration(), logger, time.Now)
	defer loadSnapshot(ctx, cfg, snapshots, logger)()
	monitor := vpic.NewMonitor(client.Ping, min(client.MaxCallDuration(), cfg.UpstreamCheckInterval), logger, time.Now)
	limiter := newLimiter(cfg.RateLimits, shared)

	// HTTP server.
	var checks httpapi.UpstreamMonitor = monitor
	if cfg.SnapshotMode == vin.SnapshotOnly {
		checks = neverChecked{}
	}
	handler := httpapi.NewServer(logger,
		httpapi.Options{ProxySecrets: cfg.ProxySecrets(), Demo: cfg.Demo, Docs: cfg.DocsEnabled},
		httpapi.Deps{Decoder: decoder, Cache: local, Limiter: limiter, Upstream: checks, Shared: shared,
			Registry: reg, Started: time.Now(), Now: time.Now})
	ln, err := listen(cfg.Port)
	if err != nil {
		return err
	}
	srv := newHTTPServer(handler, logger, client.MaxCallDuration())

	// Background loops, on a context that ends with ctx or a serving failure.
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	loops := startLoops(bg, cfg, local, monitor, limiter)

	// Serve until SIGTERM/SIGINT, then shut down in reverse order, all
	// within SHUTDOWN_TIMEOUT of the signal: the HTTP server drains, the
	// background loops stop, upstream calls that outlived their requests
	// store their answers, the spans go out, the cache closes (deferred).
	drain, stopDrain, serveErr := graceful.Run(ctx, cfg.ShutdownTimeout, srv, ln, logger)
	defer stopDrain()
	stopBG()
	waitForWork(drain, loops, decoder, shutdownTracing, logger)
	if serveErr != nil {
		return serveErr
	}
	logger.Info("vinsvc stopped")
	return nil
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

// startLoops starts the background loops on bg: the cache sweeper, the
// upstream monitor (not with VPIC_SNAPSHOT_MODE=only: never call vPIC, not
// even to check it) and the rate limiter's janitor when there is one.
func startLoops(bg context.Context, cfg config.Config, local *cache.Cache, monitor *vpic.Monitor, limiter *ratelimit.Limiter) *sync.WaitGroup {
	var loops sync.WaitGroup
	loops.Go(func() { local.RunSweeper(bg, cfg.CacheSweepInterval) })
	if cfg.SnapshotMode != vin.SnapshotOnly {
		loops.Go(func() { monitor.Run(bg, cfg.UpstreamCheckInterval) })
	}
	if limiter != nil {
		loops.Go(func() { limiter.RunJanitor(bg, ratelimit.JanitorInterval) })
	}
	return &loops
}

// command runs a subcommand instead of serving.
func command(name string, stdout io.Writer) error {
	if name != "version" {
		return fmt.Errorf("unknown command %q (usage: vinsvc [version])", name)
	}
	fmt.Fprintln(stdout, version)
	return nil
}

// newHTTPServer returns the server for handler: graceful's timeouts, with
// writes allowed the longest upstream call plus httpapi.WriteSlack. A
// request is headers and at most a 64 KiB body: it is read whole within
// the header timeout. With the two deadlines equal, net/http sets the read
// deadline once per request instead of twice (a timer update under a
// lock, 2% of a cache hit's CPU under wrk).
func newHTTPServer(handler http.Handler, logger *slog.Logger, maxCall time.Duration) *http.Server {
	srv := graceful.NewServer(handler, logger, maxCall+httpapi.WriteSlack)
	srv.ReadTimeout = srv.ReadHeaderTimeout
	return srv
}

// newLogger returns the service's JSON logger on stdout and logs the
// effective configuration once.
func newLogger(cfg config.Config, stdout io.Writer) *slog.Logger {
	// JSON lines; those of a sampled request carry its trace_id and span_id.
	logger := slog.New(observe.NewLogHandler(stdout, cfg.LogLevel))
	if cfg.Demo { // every line says it comes from make demo
		logger = logger.With("demo", true)
	}
	logger.Info("starting vinsvc", "version", version, "config", cfg)
	if cfg.ProxySecretDefaulted {
		logger.Warn("PROXY_SECRET is not set; using the development secret " + config.DevProxySecret + " (APP_ENV=development only)")
	}
	return logger
}

// newLimiter returns the rate limiter for plans, nil when RATE_LIMITS is
// off (plans is nil). With Redis the budgets are the cluster's.
func newLimiter(plans ratelimit.Plans, shared *cluster.Redis) *ratelimit.Limiter {
	if plans == nil {
		return nil
	}
	if shared == nil {
		return ratelimit.New(plans, time.Now)
	}
	return ratelimit.New(plans, time.Now, ratelimit.WithShared(shared.Limits()))
}

// openRedis connects to REDIS_URL, or returns nil when it is empty. A Redis
// that does not answer is no reason not to start (cluster.Open logs it).
func openRedis(ctx context.Context, cfg config.Config, logger *slog.Logger, reg *prometheus.Registry) (*cluster.Redis, error) {
	if cfg.RedisURL == "" {
		logger.Info("REDIS_URL not set: limits, vPIC pacing and the cache are this process's own")
		return nil, nil
	}
	return cluster.Open(ctx, cfg.RedisURL.Reveal(), cfg.RedisKeyPrefix, cfg.RedisTimeout, logger, cluster.NewMetrics(reg))
}

// clientOptions makes every vPIC attempt a client span (when tracing is
// on) and paces vPIC calls for the whole cluster when there is Redis.
func clientOptions(cfg config.Config, shared *cluster.Redis) []vpic.Option {
	opts := []vpic.Option{vpic.WithTransport(func(rt http.RoundTripper) http.RoundTripper { return observe.TracingTransport(rt) })}
	if shared == nil {
		return opts
	}
	return append(opts, vpic.WithPacer(shared.Pacer(cfg.UpstreamMaxRPS)))
}

// flushTraces sends the spans still queued and stops the exporter, by
// ctx's deadline and at most timeout from now. A failure is logged:
// nothing is left to return it to.
func flushTraces(ctx context.Context, timeout time.Duration, shutdown func(context.Context) error, logger *slog.Logger) {
	flush, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := shutdown(flush); err != nil {
		logger.Warn("flushing traces failed", "err", err.Error())
	}
}

// sharedDecodes returns the decoder's cache and upstream: the pod's own
// cache and vPIC, or with Redis the two-tier cache and vPIC behind the
// per-VIN locks. A replica waits for another's call at most one attempt's
// timeout; a lock outlives a dead holder by at most the longest call.
func sharedDecodes(cfg config.Config, shared *cluster.Redis, local *cache.Cache, client *vpic.Client) (decoding.Cache, decoding.Upstream) {
	if shared == nil {
		return local, client
	}
	tiers := shared.Cache(local, cfg.CacheTTL)
	return tiers, shared.Upstream(client, tiers, client.MaxCallDuration(), cfg.UpstreamTimeout)
}

// loadSnapshot opens the vPIC snapshot VPIC_SNAPSHOT_PATH names, unless
// VPIC_SNAPSHOT_MODE is off, in the background: loading takes seconds (more
// under the race detector). Meanwhile /readyz answers 503 "loading", so
// Kubernetes sends no traffic yet; a request that comes anyway gets cache
// hits and vPIC's answers, or in only mode waits for the load (at most
// UPSTREAM_TIMEOUT). When it is loaded the decoder gets it. A missing,
// corrupt or wrong-schema file is logged with the reason and the service
// runs without it (health: available false); a snapshot older than
// vin.SnapshotMaxAge is a warning. The returned func waits for the load
// (cut short by ctx) and closes the snapshot: call it once nothing decodes
// any more.
func loadSnapshot(ctx context.Context, cfg config.Config, snapshots *decoding.Snapshots, logger *slog.Logger) func() {
	if cfg.SnapshotMode == vin.SnapshotOff {
		logger.Info("vPIC snapshot off (VPIC_SNAPSHOT_MODE=off)")
		return func() {}
	}
	var db *vpicdb.DB
	done := make(chan struct{})
	// Not ready while loading; in only mode a decode waits for the load
	// (decisions.md, "vinsvc: snapshot answers as vPIC gives them").
	snapshots.Expect(cfg.UpstreamTimeout)
	go func() {
		defer close(done)
		var err error
		db, err = vpicdb.Open(ctx, cfg.SnapshotPath, logger)
		if err != nil {
			db = nil
			snapshots.Loaded(nil)
			msg := "vPIC snapshot not available; decoding without it"
			if errors.Is(err, vpicdb.ErrMissing) {
				msg += " (run make vpic-snapshot to fetch it)"
			}
			logger.Warn(msg, "path", cfg.SnapshotPath, "mode", cfg.SnapshotMode, "err", err.Error())
			return
		}
		date := db.Date()
		logger.Info("vPIC snapshot ready", "path", cfg.SnapshotPath, "mode", cfg.SnapshotMode, "date", date.Format(time.DateOnly))
		if vin.SnapshotStale(date, time.Now()) {
			logger.Warn("vPIC snapshot is stale: refresh it (docs/operations.md)", "date", date.Format(time.DateOnly),
				"age_days", int(time.Since(date).Hours()/24))
		}
		snapshots.Loaded(db)
	}()
	return func() {
		<-done
		if db == nil {
			return
		}
		if err := db.Close(); err != nil {
			logger.Warn("closing the vPIC snapshot failed", "err", err.Error())
		}
	}
}

// neverChecked is the upstream state with VPIC_SNAPSHOT_MODE=only, where
// vPIC is never called, not even by the health check: unreachable, never
// checked (no last_check), rather than a "reachable" nobody verified.
type neverChecked struct{}

func (neverChecked) State() vin.UpstreamState { return vin.UpstreamState{} }

// closeCache closes the cache file, logging a failure: by then the service
// has stopped serving and nothing is left to return it to.
func closeCache(local *cache.Cache, logger *slog.Logger) {
	if err := local.Close(); err != nil {
		logger.Error("closing cache failed", "err", err.Error())
	}
}

// waitForWork waits, until drain ends, for the background loops (already
// told to stop) and then for the upstream calls that outlived their
// requests, so that their answers are cached before the cache closes. What
// is still running at the deadline is logged and left behind. Then every
// span has ended: flushTraces sends them, by the same deadline.
func waitForWork(drain context.Context, loops *sync.WaitGroup, decoder *decoding.Service, shutdownTracing func(context.Context) error, logger *slog.Logger) {
	if err := waitGroup(drain, loops); err != nil {
		logger.Warn("background loops still running at the shutdown deadline", "err", err.Error())
	}
	if err := decoder.Wait(drain); err != nil {
		logger.Warn("upstream calls still running at the shutdown deadline; their answers are not cached", "err", err.Error())
	}
	flushTraces(drain, time.Hour, shutdownTracing, logger) // drain's deadline comes first
}

// waitGroup waits for wg until ctx ends; it returns ctx's error when the
// wait was cut short.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
