package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestListAnalysesMemoryBounded runs the service as a process of its own
// on PostgreSQL with 200 stored analyses of 256 KiB each (a model answer
// at LLM_MAX_ANSWER_KB's default), and has five clients page through
// GET /analyze/batch?limit=200 at once, to the end (issue 24: a listing
// page is bounded by bytes as well as by limit). Each client gets every
// analysis exactly once, newest first, on pages that carry at most
// store.PageBytes of answers, and the process's peak resident memory
// (VmHWM) stays under 200 MB.
func TestListAnalysesMemoryBounded(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres) // skips, or fails under REQUIRE_POSTGRES=1, without TEST_DATABASE_URL
	const (
		rows    = 200
		size    = 256 << 10
		readers = 5
		maxRSS  = 200 << 20
	)
	c := newCluster(t, store.Postgres, dsn, map[string]string{"SCHEDULER_ENABLED": "false", "LOG_LEVEL": "INFO"})
	r := c.start("patentsvc")
	token := users(t, r)[0]

	// The analyses, stored directly: distinct texts (so PostgreSQL's
	// compression does not make them small on disk) of exactly size bytes.
	st := storetest.OpenAt(t, store.Postgres, dsn, time.Now)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		_, err := st.Analyses().CreateAnalysis(t.Context(), patent.AnalysisRecord{CompanyName: fmt.Sprintf("Company %d", i%7),
			AnalysisType: "portfolio", Model: "openai/gpt-4o-mini", Response: answer(i, size),
			PromptTokens: 1000, CompletionTokens: 300, Timestamp: at.Add(time.Duration(i) * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
	}
	before := r.peakRSS()

	type page struct {
		Items []struct {
			ID       int64  `json:"id"`
			Response string `json:"response"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	var wg sync.WaitGroup
	pages := make([]int, readers)
	errs := make([]error, readers)
	started := time.Now()
	for n := range readers {
		wg.Go(func() {
			next, lastID := "", int64(rows+1)
			seen := 0
			for {
				u := r.base + "/analyze/batch?limit=200"
				if next != "" {
					u += "&cursor=" + url.QueryEscape(next)
				}
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs[n] = err
					return
				}
				var p page
				err = json.NewDecoder(resp.Body).Decode(&p)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || err != nil {
					errs[n] = fmt.Errorf("page %d: status %d, %v", pages[n]+1, resp.StatusCode, err)
					return
				}
				pages[n]++
				text := 0
				for _, it := range p.Items {
					if it.ID >= lastID {
						errs[n] = fmt.Errorf("page %d: id %d after %d, want strictly descending", pages[n], it.ID, lastID)
						return
					}
					lastID = it.ID
					text += len(it.Response)
				}
				seen += len(p.Items)
				if text > store.PageBytes && len(p.Items) > 1 {
					errs[n] = fmt.Errorf("page %d: %d items carry %d bytes, over the page budget of %d", pages[n], len(p.Items), text, store.PageBytes)
					return
				}
				if p.NextCursor == nil {
					break
				}
				if len(p.Items) == 0 || pages[n] > rows {
					errs[n] = fmt.Errorf("page %d: %d items and a next cursor", pages[n], len(p.Items))
					return
				}
				next = *p.NextCursor
			}
			if seen != rows {
				errs[n] = fmt.Errorf("%d analyses listed, want %d", seen, rows)
			}
		})
	}
	wg.Wait()
	peak := r.peakRSS()
	t.Logf("%d readers paged %d analyses of %d KiB in %v, %v pages each; peak RSS %d MiB (%d MiB before the reads)",
		readers, rows, size>>10, time.Since(started).Round(time.Millisecond), pages, peak>>20, before>>20)
	for n, err := range errs {
		if err != nil {
			t.Errorf("reader %d: %v", n, err)
		}
	}
	if peak == 0 || peak > maxRSS {
		t.Errorf("peak RSS %d MiB, want under %d MiB (0: /proc unreadable)", peak>>20, maxRSS>>20)
	}
	r.stop(t)
}

// answer is a model answer of exactly size bytes, different for each i.
func answer(i, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	for line := 0; b.Len() < size; line++ {
		fmt.Fprintf(&b, "Analysis %d, point %d: claim %x covers %x.\n", i, line, line*7919+i, (line*104729)^i)
	}
	return b.String()[:size]
}
