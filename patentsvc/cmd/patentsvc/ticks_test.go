package main

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/config"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
)

// TestTicksAreOneScheduler: every periodic task of the service is a named
// job of one gocron scheduler (no ticker loop of its own): the due
// companies' runs only while the scheduler runs, and always the sweeps of
// the units, the three prunes and the rate-limit windows.
func TestTicksAreOneScheduler(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	logger := slog.New(slog.DiscardHandler)
	authn, err := auth.New(st.Users(), []byte("a-secret-of-32-bytes-for-tests!!"), nil, time.Minute, time.Hour, bcrypt.MinCost, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	hooks := webhook.New(context.Background(), webhook.Config{}, st.Deliveries(), logger)
	tk := tasks{sched: schedule.New(schedule.Config{Interval: time.Hour}, st.Tracking(), nil, hooks, logger, time.Now),
		runner: jobs.NewRunner(jobs.Config{}, st.Jobs(), st.Jobs(), nil, hooks, logger, time.Now), hooks: hooks, authn: authn, limits: httpapi.NewLimits(time.Now, nil)}
	for _, tt := range []struct {
		enabled string
		want    []string
	}{
		{"true", []string{tickPruneTokens, tickPruneHistory, tickPruneWebhooks, tickQueueDue, tickRateLimitSweep, tickSweep}},
		{"false", []string{tickPruneTokens, tickPruneHistory, tickPruneWebhooks, tickRateLimitSweep, tickSweep}},
	} {
		cfg, err := config.Load(func(k string) string {
			return map[string]string{"SERPAPI_API_KEY": "k", "LLM_API_KEY": "k", "SCHEDULER_ENABLED": tt.enabled}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := newTicks(t.Context(), cfg, tk, logger)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range s.Jobs() {
			names = append(names, j.Name())
		}
		slices.Sort(names)
		if !slices.Equal(names, tt.want) {
			t.Errorf("SCHEDULER_ENABLED=%s: ticks %v, want %v", tt.enabled, names, tt.want)
		}
		if err := s.Shutdown(); err != nil {
			t.Error(err)
		}
	}
}

// TestShutdownTicksBounded: a tick stuck on a database that stopped
// answering, deaf to its context, does not hold the shutdown past its
// deadline.
func TestShutdownTicksBounded(t *testing.T) {
	s, err := gocron.NewScheduler()
	if err != nil {
		t.Fatal(err)
	}
	stuck, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	if _, err := s.NewJob(gocron.DurationJob(time.Hour), gocron.NewTask(func() { close(stuck); <-release }),
		gocron.WithStartAt(gocron.WithStartImmediately())); err != nil {
		t.Fatal(err)
	}
	s.Start()
	<-stuck
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- shutdownTicks(ctx, s) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("shutdownTicks with a tick still running = nil, want the deadline's error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdownTicks still waiting 30 s after its deadline")
	}
}
