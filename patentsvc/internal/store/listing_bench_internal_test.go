package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// BenchmarkListAnalyses1M lists 50 analyses at several depths of a
// PostgreSQL table of 1,000,000 (a tenth of them cached, so filtered out),
// with and without the company filter, and logs the query plan. It needs
// TEST_DATABASE_URL and skips without it.
func BenchmarkListAnalyses1M(b *testing.B) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		b.Skip("TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, 6)
	rand.Read(raw)
	schema := "bench_" + hex.EncodeToString(raw)
	admin.Exec("CREATE SCHEMA " + schema)
	b.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := Open(ctx, Postgres, u.String(), Pool{MaxOpen: 4, MaxIdle: 4, MaxLifetime: time.Hour}, slog.New(slog.NewJSONHandler(io.Discard, nil)), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	const rows = 1_000_000
	start := time.Now()
	err = s.db.Exec(`INSERT INTO analyses (company_name, analysis_type, model, response, cached, prompt_tokens, completion_tokens, analyzed_at)
		SELECT 'Company ' || (g % 500), 'portfolio', 'openai/gpt-4o-mini', 'analysis text ' || g, g % 10 = 0, 1000, 300,
		       TIMESTAMPTZ '2024-01-01' + (g / 3) * INTERVAL '1 second'
		FROM generate_series(1, ?) AS g`, rows).Error
	if err != nil {
		b.Fatal(err)
	}
	s.db.Exec("ANALYZE analyses")
	b.Logf("inserted %d rows in %v", rows, time.Since(start))

	// Cursors at depths of the non-cached listing, found once with OFFSET.
	type at struct {
		AnalyzedAt time.Time
		ID         int64
	}
	cursorAt := func(company string, depth int) string {
		var r at
		qq := s.db.Model(&analysisRow{}).Select("analyzed_at, id").Where("NOT cached")
		if company != "" {
			qq = qq.Where("lower(company_name) = lower(?)", company)
		}
		if err := qq.Order("analyzed_at DESC, id DESC").Offset(depth).Limit(1).Scan(&r).Error; err != nil {
			b.Fatal(err)
		}
		return encodeCursor(r.AnalyzedAt, strconv.FormatInt(r.ID, 10))
	}
	cases := []struct {
		name, company string
		depth         int
	}{
		{"first-page", "", 0},
		{"depth-450k", "", 450_000},
		{"depth-899950", "", 899_950},
		{"company-first-page", "Company 7", 0},
		{"company-deepest", "Company 7", 1_750},
	}
	for _, c := range cases {
		cur := ""
		if c.depth > 0 {
			cur = cursorAt(c.company, c.depth)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				items, _, err := s.Analyses().ListAnalyses(ctx, c.company, 50, cur)
				if err != nil || len(items) == 0 {
					b.Fatalf("ListAnalyses = %d items, %v", len(items), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
		})
		plan := explain(b, s, c.company, cur)
		b.Logf("%s plan:\n%s", c.name, plan)
		if !strings.Contains(plan, "Index Scan") && !strings.Contains(plan, "Index Only Scan") {
			b.Errorf("%s: the listing does not use an index:\n%s", c.name, plan)
		}
	}
}

func explain(b *testing.B, s *Store, company, cur string) string {
	b.Helper()
	stmt := s.db.Session(&gorm.Session{DryRun: true}).Model(&analysisRow{}).Where("NOT cached")
	if company != "" {
		stmt = stmt.Where("lower(company_name) = lower(?)", company)
	}
	if c, ok := decodeCursor(cur); ok {
		id, _ := strconv.ParseInt(c.id, 10, 64)
		stmt = stmt.Where("(analyzed_at, id) < (?, ?)", c.at, id)
	}
	st := stmt.Order("analyzed_at DESC, id DESC").Limit(51).Find(&[]analysisRow{}).Statement
	var lines []string
	if err := s.db.Raw("EXPLAIN ANALYZE "+st.SQL.String(), st.Vars...).Scan(&lines).Error; err != nil {
		b.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
