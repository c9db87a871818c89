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

	"github.com/gatewayapis/shared/graceful"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/config"
	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
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
		default:
			return fmt.Errorf("unknown command %q (usage: vinsvc [version])", args[1])
		}
	}

	// Configuration and logging.
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	logger.Info("starting vinsvc", "version", version, "config", cfg)
	if cfg.ProxySecretDefaulted {
		logger.Warn("PROXY_SECRET is not set; using the development secret " + config.DevProxySecret + " (APP_ENV=development only)")
	}

	// Stores.
	store, err := cache.Open(cfg.CachePath, cfg.CacheTTL, logger, time.Now)
	if err != nil {
		return err
	}
	defer func() {
		if err := store.Close(); err != nil {
			logger.Error("closing cache failed", "err", err.Error())
		}
	}()

	// Clients and domain services.
	reg := observe.NewRegistry()
	client := vpic.NewClient(cfg.VPICBaseURL, cfg.UpstreamTimeout, cfg.UpstreamRetries, cfg.UpstreamMaxRPS,
		logger, vpic.NewMetrics(reg))
	decoder := vin.NewDecoder(store, client, client.MaxCallDuration(), logger, time.Now)
	monitor := vpic.NewMonitor(client.Ping, min(client.MaxCallDuration(), cfg.UpstreamCheckInterval), logger, time.Now)
	var limiter *ratelimit.Limiter
	if cfg.RateLimits != nil {
		limiter = ratelimit.New(cfg.RateLimits, time.Now)
	}

	// HTTP server.
	handler := httpapi.NewServer(logger, cfg.ProxySecrets(), decoder, store, limiter, monitor, reg, time.Now(), time.Now)
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", cfg.Port, err)
	}
	srv := graceful.NewServer(handler, logger, client.MaxCallDuration()+10*time.Second)

	// Background workers.
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	var workers sync.WaitGroup
	workers.Go(func() { store.RunSweeper(bg, cfg.CacheSweepInterval) })
	workers.Go(func() { monitor.Run(bg, cfg.UpstreamCheckInterval) })
	if limiter != nil {
		workers.Go(func() { limiter.RunJanitor(bg, time.Minute) })
	}

	// Serve until SIGTERM/SIGINT, then shut down in reverse order, every
	// step within SHUTDOWN_TIMEOUT of the signal: the HTTP server drains,
	// the background loops stop, upstream calls that outlived their
	// requests store their answers, the cache closes.
	drain, stopDrain, serveErr := graceful.Run(ctx, cfg.ShutdownTimeout, srv, ln, logger)
	defer stopDrain()
	stopBG()
	workers.Wait()
	if err := decoder.Wait(drain); err != nil {
		logger.Warn("upstream calls still running at the shutdown deadline; their answers are not cached", "err", err.Error())
	}
	if serveErr != nil {
		return serveErr
	}
	logger.Info("vinsvc stopped")
	return nil
}
