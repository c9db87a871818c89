package store_test

import (
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/glebarez/sqlite"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// BenchmarkExportCSV100k streams 100,000 stored analyses of one company
// (about 1 KB of text each) from SQLite through the database cursor and
// the CSV writer into io.Discard, sampling the heap every millisecond, and
// reports the largest heap growth over the baseline.
func BenchmarkExportCSV100k(b *testing.B) {
	const rows = 100_000
	dsn := storetest.DSN(b, store.SQLite)
	s, err := store.Open(b.Context(), store.SQLite, dsn, store.Pool{MaxOpen: 4, MaxIdle: 4, MaxLifetime: time.Hour}, slog.New(slog.DiscardHandler), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Seed in one statement, on a connection of its own.
	seed, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		b.Fatal(err)
	}
	err = seed.Exec(`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT ?)
		INSERT INTO analyses (company_name, analysis_type, model, response, cached, prompt_tokens, completion_tokens, analyzed_at)
		SELECT 'Acme Corp', 'portfolio', 'openai/gpt-4o-mini', printf('Analysis %d, "quoted", with commas, ', x) || hex(randomblob(480)), 0, 1000, 300,
		       datetime('2026-01-01', '+' || x || ' seconds') || '+00:00'
		FROM n`, rows).Error
	if err != nil {
		b.Fatal(err)
	}
	if db, err := seed.DB(); err == nil {
		db.Close()
	}
	for b.Loop() {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var m runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > base.HeapAlloc && m.HeapAlloc-base.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc - base.HeapAlloc)
				}
			}
		})
		n, err := export.CSV(io.Discard, func(yield func(patent.AnalysisRecord) error) error {
			return s.Analyses().EachAnalysis(b.Context(), "Acme Corp", yield)
		})
		close(stop)
		wg.Wait()
		if err != nil || n != rows {
			b.Fatalf("exported %d rows, %v", n, err)
		}
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-growth-MB")
	}
}
