// Command patentsvc is the patent analysis service.
//
// Usage:
//
//	patentsvc            serve, configured by environment variables (docs/config/patentsvc.md)
//	patentsvc version    print the version
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

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/config"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/shared/graceful"
	"github.com/gatewayapis/shared/observe"
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
			return fmt.Errorf("unknown command %q (usage: patentsvc [version])", args[1])
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
	authn, err := auth.New(st, []byte(cfg.JWTSecret.Reveal()), cfg.AccessTokenTTL, cfg.RefreshTokenTTL, cfg.BcryptCost, time.Now)
	if err != nil {
		return err
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
		// The scheduler joins with the tracking issue; until then it does
		// not run, whatever SCHEDULER_ENABLED says.
		Scheduler: func() string { return "disabled" },
	}, authn, st, limits, reg, time.Now(), time.Now)
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

	// Serve until SIGTERM/SIGINT, then shut down in reverse order.
	serveErr := graceful.Serve(ctx, srv, ln, cfg.ShutdownTimeout, logger)
	stopBG()
	workers.Wait()
	if serveErr != nil {
		return serveErr
	}
	logger.Info("patentsvc stopped")
	return nil
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
