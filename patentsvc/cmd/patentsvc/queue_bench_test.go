package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// BenchmarkQueueThroughput measures how scheduled runs scale with replicas
// (decisions.md, "patentsvc: work every replica shares"): 200 tracked
// companies all due at once, the fakes answering in realistic time (model
// 2 s, search 0.5 s, each PDF 0.2 s; 10 patents a company), run by 1, 2 and
// 3 patentsvc processes on one PostgreSQL database, each with
// SCHEDULE_MAX_CONCURRENT=4. It reports, per replica count, the time until
// every company's run is recorded against the ideal: companies x the time
// one company takes alone / (replicas x 4).
//
//	make bench-queue   # cd patentsvc && go test -run '^$' -bench BenchmarkQueueThroughput -benchtime 1x ./cmd/patentsvc
//
// The companies are tracked while the replicas' scheduled queue is paused
// (River's queue pause), then resumed at once: the clock starts when they
// are all due and every replica is up.
func BenchmarkQueueThroughput(b *testing.B) {
	const companies, concurrency = 200, 4
	for b.Loop() {
		alone := make([]time.Duration, 3)
		for i := range alone {
			alone[i] = runTracked(b, 1, 1, fmt.Sprintf("alone-%d", i))
		}
		slices.Sort(alone)
		perCompany := alone[1]
		b.Logf("one company alone: %v (median of %v)", perCompany.Round(time.Millisecond), alone)
		b.ReportMetric(perCompany.Seconds(), "s/company")
		for _, replicas := range []int{1, 2, 3} {
			took := runTracked(b, replicas, companies, fmt.Sprintf("r%d", replicas))
			ideal := time.Duration(companies) * perCompany / time.Duration(replicas*concurrency)
			ratio := took.Seconds() / ideal.Seconds()
			b.Logf("%d replicas: %d companies in %v, ideal %v, ratio %.2f", replicas, companies, took.Round(100*time.Millisecond),
				ideal.Round(100*time.Millisecond), ratio)
			b.ReportMetric(took.Seconds(), fmt.Sprintf("s/%dreplicas", replicas))
			b.ReportMetric(ratio, fmt.Sprintf("ratio/%dreplicas", replicas))
		}
	}
}

// runTracked tracks n companies (while the scheduled queue is paused) on
// a fresh database served by replicas processes, resumes the queue and
// returns how long until every company's first run is recorded.
func runTracked(b *testing.B, replicas, n int, prefix string) time.Duration {
	dsn := storetest.DSN(b, store.Postgres)
	// LOG_LEVEL INFO, not WARNING: startReplica reads the port each
	// replica took from its start-up line, which is at INFO.
	c := newCluster(b, store.Postgres, dsn, map[string]string{
		"SCHEDULE_INTERVAL_HOURS": "24", "SCHEDULE_MAX_CONCURRENT": "4", "LOG_LEVEL": "INFO", "WEBHOOK_URLS": "",
	})
	c.world.Serp.SetLatency(500 * time.Millisecond)
	c.world.LLM.SetLatency(2 * time.Second)
	c.world.PDFs.SetLatency(200 * time.Millisecond)
	var rs []*replica
	for i := range replicas {
		rs = append(rs, c.start(fmt.Sprintf("replica %d", i+1)))
	}
	admin := users(b, rs[0])[0]
	rq := riverClient(b, dsn)
	ctx := context.Background()
	waitFor(b, 10*time.Second, "the scheduled queue paused", func() bool {
		return rq.QueuePause(ctx, patent.QueueScheduledRuns, nil) == nil
	})
	time.Sleep(time.Second) // every replica's producer has heard of the pause
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s Co %d", prefix, i)
		c.world.Company(name, 10)
		if code, body := call(b, "POST", rs[i%replicas].base+"/admin/tracked", admin, map[string]string{"company_name": name}); code != http.StatusCreated {
			b.Fatalf("track %s = %d %v", name, code, body)
		}
		names = append(names, name)
	}
	start := time.Now()
	if err := rq.QueueResume(ctx, patent.QueueScheduledRuns, nil); err != nil {
		b.Fatal(err)
	}
	waitFor(b, 30*time.Minute, "every company run", func() bool {
		code, list := callList(b, rs[0].base+"/admin/tracked", admin)
		if code != http.StatusOK {
			b.Fatalf("GET /admin/tracked = %d", code)
		}
		done := 0
		for _, t := range list {
			if t["last_analysis_at"] != nil {
				done++
			}
		}
		return done == len(names)
	})
	took := time.Since(start)
	for _, r := range rs {
		r.stop(b)
	}
	return took
}

// riverClient is an insert-only River client on the database at dsn (the
// benchmark pauses and resumes the replicas' queue with it).
func riverClient(tb testing.TB, dsn string) *river.Client[*sql.Tx] {
	tb.Helper()
	st := storetest.OpenAt(tb, store.Postgres, dsn, time.Now)
	db, err := st.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	client, err := river.NewClient(riverdatabasesql.NewWithPgxListener(db, pool), &river.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return client
}
