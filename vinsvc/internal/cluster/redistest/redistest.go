// Package redistest gives tests a Redis: the shared one named by
// TEST_REDIS_URL (with a key prefix of the test's own, removed at the end),
// or a redis-server of the test's own on a free port, which a fault test
// may stop, slow down and restart without touching anyone else's.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// URL returns TEST_REDIS_URL. Without it the test is skipped with a
// message saying so, or fails when REQUIRE_REDIS=1 (CI sets both).
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("REQUIRE_REDIS") == "1" {
			tb.Fatal("REQUIRE_REDIS=1 but TEST_REDIS_URL is not set")
		}
		tb.Skip("TEST_REDIS_URL not set: skipping the test on a shared Redis (e.g. TEST_REDIS_URL=redis://127.0.0.1:6379/0)")
	}
	return u
}

// Prefix returns a key prefix no other test uses; the keys under it are
// deleted from the Redis at url when the test ends.
func Prefix(tb testing.TB, url string) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "vinsvc-test:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() { deleteKeys(url, prefix) })
	return prefix
}

func deleteKeys(url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
	// redis_rate keeps its buckets under "rate:" + our key.
	iter = rdb.Scan(ctx, 0, "rate:"+prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
}

// Server is a redis-server of the test's own.
type Server struct {
	tb   testing.TB
	Port int
	dir  string
	cmd  *exec.Cmd
}

// Start starts a redis-server on a free port, stopped when the test ends.
// Without the redis-server command the test is skipped, or fails when
// REQUIRE_REDIS=1.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REQUIRE_REDIS") == "1" {
			tb.Fatal("REQUIRE_REDIS=1 but redis-server is not installed")
		}
		tb.Skip("redis-server not installed: skipping the Redis fault test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{tb: tb, Port: port, dir: tb.TempDir()}
	s.Restart()
	tb.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Restart starts the server (again) on its port and waits until it
// answers.
func (s *Server) Restart() {
	s.tb.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--enable-debug-command", "local")
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("start redis-server: %v", err)
	}
	opts, _ := redis.ParseURL(s.URL())
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			s.tb.Fatalf("redis-server on port %d did not answer within 10s", s.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (SIGKILL: as an outage looks) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Sleep makes the server stop answering everyone for d (DEBUG SLEEP), a
// slow Redis. It returns once the server has stopped answering.
func (s *Server) Sleep(d time.Duration) {
	s.tb.Helper()
	opts, _ := redis.ParseURL(s.URL())
	rdb := redis.NewClient(opts)
	go func() {
		defer rdb.Close()
		rdb.Do(context.Background(), "DEBUG", "SLEEP", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	}()
	popts := *opts
	popts.ContextTimeoutEnabled, popts.MaxRetries = true, -1
	probe := redis.NewClient(&popts)
	defer probe.Close()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := probe.Ping(ctx).Err()
		cancel()
		if err != nil {
			return // asleep
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.tb.Fatal("redis-server did not go to sleep")
}
