package store_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// movingClock ticks a microsecond per call from a fixed start, so rows get
// distinct but predictable times; tie() makes the next n calls equal.
type movingClock struct {
	mu   sync.Mutex
	t    time.Time
	hold int
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hold > 0 {
		c.hold--
		return c.t
	}
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *movingClock) tie(n int) { c.mu.Lock(); c.hold = n; c.mu.Unlock() }

func (c *movingClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func each(t *testing.T, fn func(t *testing.T, s *store.Store, clk *movingClock)) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			clk := &movingClock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
			fn(t, storetest.Open(t, d, clk.Now), clk)
		})
	}
}

func pageAll(t *testing.T, s *store.Store, company string, limit int) []patent.AnalysisRecord {
	t.Helper()
	var all []patent.AnalysisRecord
	cursor := ""
	for i := 0; ; i++ {
		page, next, err := s.Analyses().ListAnalyses(ctx, company, limit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > limit {
			t.Fatalf("page of %d rows, limit %d", len(page), limit)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		if i > 1000 {
			t.Fatal("paging does not end")
		}
		cursor = next
	}
}

func TestListAnalysesPaging(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		// 23 rows, some sharing a timestamp (ties broken by id), plus
		// cached rows that listings leave out.
		for i := range 23 {
			if i == 5 || i == 15 {
				clk.tie(3)
			}
			name := "Acme Corp"
			if i%4 == 0 {
				name = "Other Inc"
			}
			if _, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: name, AnalysisType: patent.AnalysisPortfolio,
				Model: "openai/gpt-4o-mini", Response: fmt.Sprintf("analysis %d", i)}); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 {
				s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: name, AnalysisType: patent.AnalysisPortfolio, Cached: true, Response: "cached"})
			}
		}
		all := pageAll(t, s, "", 4)
		if len(all) != 23 {
			t.Fatalf("paged %d rows, want 23 non-cached", len(all))
		}
		seen := map[int64]bool{}
		for i, r := range all {
			if seen[r.ID] || r.Cached {
				t.Fatalf("row %d (id %d) repeated or cached", i, r.ID)
			}
			seen[r.ID] = true
			if i > 0 {
				p := all[i-1]
				if r.Timestamp.After(p.Timestamp) || r.Timestamp.Equal(p.Timestamp) && r.ID > p.ID {
					t.Fatalf("order broken at %d: %v/%d after %v/%d", i, r.Timestamp, r.ID, p.Timestamp, p.ID)
				}
			}
		}
		// Company filter: exact name, any letter case.
		if got := pageAll(t, s, "acme CORP", 5); len(got) != 17 {
			t.Errorf("company filter returned %d rows, want 17", len(got))
		}
		if got := pageAll(t, s, "Acme", 5); len(got) != 0 {
			t.Errorf("a partial name matched %d rows, want 0", len(got))
		}
		// Malformed cursors start from the beginning.
		first, _, _ := s.Analyses().ListAnalyses(ctx, "", 3, "")
		for _, bad := range []string{"!!!", "bm90IGEgY3Vyc29y", base64.RawURLEncoding.EncodeToString([]byte("abc.1")), base64.RawURLEncoding.EncodeToString([]byte("123.x"))} {
			got, _, err := s.Analyses().ListAnalyses(ctx, "", 3, bad)
			if err != nil || len(got) != 3 || got[0].ID != first[0].ID {
				t.Errorf("cursor %q: got %v, %v; want the first page", bad, got, err)
			}
		}
	})
}

// TestPagingUnderInserts: rows inserted while a client pages (newer than
// its first page) never make it see a row twice or miss an older one.
func TestPagingUnderInserts(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for i := range 30 {
			s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: fmt.Sprint(i)})
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "new"})
				}
			}
		})
		all := pageAll(t, s, "", 7)
		close(stop)
		wg.Wait()
		seen := map[int64]bool{}
		old := 0
		for _, r := range all {
			if seen[r.ID] {
				t.Fatalf("row %d seen twice", r.ID)
			}
			seen[r.ID] = true
			if r.Response != "new" {
				old++
			}
		}
		if old != 30 {
			t.Fatalf("saw %d of the 30 rows that existed before paging began", old)
		}
	})
}

func TestPatentsAndCaches(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		if _, err := s.Analyses().Patent(ctx, "US1"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("Patent(unknown) = %v", err)
		}
		p := patent.StoredPatent{PatentID: "US11734097B1", CompanyName: "Acme", Title: "Widget", PDFLink: "https://h/x.pdf", Summary: "snippet"}
		if err := s.Analyses().UpsertPatent(ctx, p); err != nil {
			t.Fatal(err)
		}
		// A later record without a link keeps the known link, adds the path.
		if err := s.Analyses().UpsertPatent(ctx, patent.StoredPatent{PatentID: "US11734097B1", PDFPath: "local:patents/US11734097B1.pdf", Summary: "abstract"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Analyses().Patent(ctx, "US11734097B1")
		if err != nil || got.PDFLink != p.PDFLink || got.PDFPath != "local:patents/US11734097B1.pdf" || got.Summary != "abstract" || got.Title != "Widget" {
			t.Fatalf("Patent = %+v, %v", got, err)
		}

		if _, ok, _ := s.Caches().SearchCache(ctx, "k", time.Hour); ok {
			t.Fatal("empty search cache hit")
		}
		s.Caches().PutSearchCache(ctx, "k", []byte(`{"a":1}`))
		s.Caches().PutSearchCache(ctx, "k", []byte(`{"a":2}`))
		if b, ok, err := s.Caches().SearchCache(ctx, "k", time.Hour); !ok || err != nil || string(b) != `{"a":2}` {
			t.Fatalf("SearchCache = %s, %v, %v", b, ok, err)
		}
		if _, ok, _ := s.Caches().SearchCache(ctx, "k", 0); ok {
			t.Fatal("an entry older than the lifetime was served")
		}

		a := patent.LLMAnswer{Key: "m|h", Model: "openai/gpt-4o-mini", AnsweredModel: "openai/gpt-4o-mini-2024", Response: "text", PromptTokens: 10, CompletionTokens: 5}
		if err := s.Caches().PutLLMCache(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Caches().LLMCache(ctx, "m|h"); !ok || err != nil || got != a {
			t.Fatalf("LLMCache = %+v, %v, %v", got, ok, err)
		}
		if _, ok, _ := s.Caches().LLMCache(ctx, "other"); ok {
			t.Fatal("LLM cache hit for an unknown key")
		}
	})
}

func TestListJobs(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for i := range 9 {
			if i == 3 {
				clk.tie(3)
			}
			s.Jobs().CreateJob(ctx, patent.Job{ID: fmt.Sprintf("job-%d", i), UserID: int64(i), Companies: []string{"A"}}, 0, 0)
		}
		// job-2 of user 2 is the fairest only once each user before it
		// has a job running.
		for unit := range int64(3) {
			if id := claim(t, s, unit+1); id != fmt.Sprintf("job-%d", unit) {
				t.Fatalf("claim = %v, want job-%d", id, unit)
			}
		}
		for _, id := range []string{"job-0", "job-1"} {
			j, _ := s.Jobs().Job(ctx, id)
			if err := finishJob(s, id, j.UnitID, patent.JobCompleted, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		cursor := ""
		for {
			page, next, err := s.Jobs().ListJobs(ctx, patent.JobFilter{}, 2, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range page {
				ids = append(ids, j.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		want := []string{"job-8", "job-7", "job-6", "job-5", "job-4", "job-3", "job-2", "job-1", "job-0"}
		if fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("paged ids = %v, want %v (ties broken by id, descending)", ids, want)
		}
		running, next, _ := s.Jobs().ListJobs(ctx, patent.JobFilter{Status: patent.JobRunning}, 50, "")
		if len(running) != 1 || running[0].ID != "job-2" || next != "" {
			t.Errorf("status filter = %v, next %q", running, next)
		}
	})
}
