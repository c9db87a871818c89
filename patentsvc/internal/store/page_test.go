package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// pageOf is one page of a listing as a test reads it: the ids in order,
// the bytes of text each row carries and the next cursor.
type pageOf struct {
	ids   []string
	sizes []int
	next  string
}

// pages follows a listing's next cursors to the end and returns its pages.
func pages(t *testing.T, list func(cursor string) (pageOf, error)) []pageOf {
	t.Helper()
	var out []pageOf
	cursor := ""
	for {
		p, err := list(cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
		if p.next == "" {
			return out
		}
		if len(out) > 1000 {
			t.Fatal("paging does not end")
		}
		cursor = p.next
	}
}

// checkPages checks pages of a listing against the rows it holds (want,
// in listing order, with their sizes): every row once, in order; each
// page at most limit rows and, unless it is one row, at most
// store.PageBytes; each page but the last as long as those two rules
// allow (the next row would break one); next empty on the last page only.
func checkPages(t *testing.T, got []pageOf, want []string, size map[string]int, limit int) {
	t.Helper()
	var ids []string
	for i, p := range got {
		total := 0
		for _, n := range p.sizes {
			total += n
		}
		if len(p.ids) > limit || len(p.ids) > 1 && total > store.PageBytes {
			t.Errorf("page %d: %d rows of %d bytes, over limit %d or the budget of %d", i, len(p.ids), total, limit, store.PageBytes)
		}
		if last := i == len(got)-1; !last {
			rest := len(ids) + len(p.ids)
			if len(p.ids) == 0 || rest < len(want) && len(p.ids) < limit && total+size[want[rest]] <= store.PageBytes {
				t.Errorf("page %d: %d rows of %d bytes, but the next row (%d bytes) fits too", i, len(p.ids), total, size[want[min(rest, len(want)-1)]])
			}
		}
		ids = append(ids, p.ids...)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("paged %d rows %v,\nwant %d %v", len(ids), ids, len(want), want)
	}
}

// lengths returns how many rows each page holds.
func lengths(ps []pageOf) []int {
	var out []int
	for _, p := range ps {
		out = append(out, len(p.ids))
	}
	return out
}

// TestListAnalysesPageBytes: with big answers, a page of ListAnalyses
// ends before the answer that would take it past store.PageBytes; an
// answer bigger than that is a page of its own, and paging goes on past
// it; rows sharing a timestamp across a page's end are each listed once;
// small answers still fill pages of limit.
func TestListAnalysesPageBytes(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		// The answers' sizes in listing order (newest first), and the
		// pages they make at limit 200.
		sizes := []int{mib, mib, mib, mib, // exactly PageBytes
			5 * mib, // more than PageBytes: alone
			3 * mib, // the next would take it 1 byte past
			mib + 1, 10, 10, 2 * mib,
			2 * mib} // then 199 small ones fill the page to its limit
		for range 250 {
			sizes = append(sizes, 100)
		}
		wantLengths := []int{4, 1, 1, 4, 200, 51}
		want := make([]string, len(sizes))
		size := map[string]int{}
		for i := len(sizes) - 1; i >= 0; i-- { // oldest first
			if i == 3 || i == 209 { // ties across the ends of pages 1 and 5: broken by id
				clk.tie(1)
			}
			company := "Big Co"
			if sizes[i] == 100 {
				company = "Small Co"
			}
			a, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: company, AnalysisType: patent.AnalysisPortfolio,
				Response: strings.Repeat(string(rune('a'+i%26)), sizes[i])})
			if err != nil {
				t.Fatal(err)
			}
			want[i] = fmt.Sprint(a.ID)
			size[want[i]] = sizes[i]
		}
		s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Big Co", AnalysisType: patent.AnalysisPortfolio, Cached: true, Response: "cached"})

		list := func(company string, limit int) func(string) (pageOf, error) {
			return func(cursor string) (pageOf, error) {
				items, next, err := s.Analyses().ListAnalyses(ctx, company, limit, cursor)
				p := pageOf{next: next}
				for _, a := range items {
					p.ids = append(p.ids, fmt.Sprint(a.ID))
					p.sizes = append(p.sizes, len(a.Response))
				}
				return p, err
			}
		}
		got := pages(t, list("", 200))
		checkPages(t, got, want, size, 200)
		if l := lengths(got); !slices.Equal(l, wantLengths) {
			t.Errorf("pages of %v rows, want %v", l, wantLengths)
		}
		for _, limit := range []int{1, 3} {
			checkPages(t, pages(t, list("", limit)), want, size, limit)
		}
		// Small answers: pages of limit, the last with no next cursor.
		got = pages(t, list("small co", 50))
		checkPages(t, got, want[11:], size, 50)
		if l := lengths(got); !slices.Equal(l, []int{50, 50, 50, 50, 50}) {
			t.Errorf("small answers: pages of %v rows, want five of 50", l)
		}
		// The company filter holds on pages cut by bytes too.
		checkPages(t, pages(t, list("Big Co", 200)), want[:11], size, 200)
	})
}

// TestListJobsPageBytes: a page of ListJobs ends before the job whose
// stored result (or error) would take it past store.PageBytes; a job
// bigger than that is a page of its own; the filters hold; small jobs
// still fill pages of limit.
func TestListJobsPageBytes(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		// User 1's jobs in listing order: the bytes of their answer (or,
		// negative, of their error), and the pages they make at limit 200
		// (a job's request and the rest of its result add a few hundred
		// bytes).
		sizes := []int{3 * mib, -3 * mib, 5 * mib, mib, mib, mib, 0, 0, 0, 0, 0}
		wantLengths := []int{1, 1, 1, 8}
		want := make([]string, len(sizes))
		size := map[string]int{}
		for i := len(sizes) - 1; i >= 0; i-- {
			id := fmt.Sprintf("job-%02d", i)
			createJob(t, s, id, 1, "Acme")
			want[i], size[id] = id, max(sizes[i], -sizes[i])
		}
		for unit := int64(1); ; unit++ {
			id := claim(t, s, unit)
			if id == "" {
				break
			}
			var n int
			fmt.Sscanf(id, "job-%d", &n)
			status, result, errMsg := patent.JobCompleted, (*patent.BatchResult)(nil), ""
			switch {
			case sizes[n] < 0:
				status, errMsg = patent.JobFailed, strings.Repeat("e", -sizes[n])
			case sizes[n] > 0:
				answer := strings.Repeat("x", sizes[n])
				result = &patent.BatchResult{Results: []patent.CompanyAnalysis{{CompanyName: "Acme", Analysis: &answer, Success: true}}}
			}
			if err := finishJob(s, id, unit, status, result, errMsg); err != nil {
				t.Fatal(err)
			}
		}
		// User 2's small pending jobs, newer than all of user 1's.
		var small []string
		for i := 14; i >= 0; i-- {
			id := fmt.Sprintf("small-%02d", i)
			createJob(t, s, id, 2, "Acme")
			small = append([]string{id}, small...)
		}

		list := func(f patent.JobFilter, limit int) func(string) (pageOf, error) {
			return func(cursor string) (pageOf, error) {
				items, next, err := s.Jobs().ListJobs(ctx, f, limit, cursor)
				p := pageOf{next: next}
				for _, j := range items {
					n := 0
					if j.Error != nil {
						n = len(*j.Error)
					}
					if j.Result != nil {
						n += len(*j.Result.Results[0].Analysis)
					}
					p.ids = append(p.ids, j.ID)
					p.sizes = append(p.sizes, n)
				}
				return p, err
			}
		}
		got := pages(t, list(patent.JobFilter{UserID: 1}, 200))
		checkPages(t, got, want, size, 200)
		if l := lengths(got); !slices.Equal(l, wantLengths) {
			t.Errorf("pages of %v rows, want %v", l, wantLengths)
		}
		checkPages(t, pages(t, list(patent.JobFilter{UserID: 1}, 2)), want, size, 2)
		checkPages(t, pages(t, list(patent.JobFilter{}, 200)), append(slices.Clone(small), want...), size, 200)
		checkPages(t, pages(t, list(patent.JobFilter{Status: patent.JobFailed}, 200)), want[1:2], size, 200)

		got = pages(t, list(patent.JobFilter{UserID: 2}, 4))
		checkPages(t, got, small, size, 4)
		if l := lengths(got); !slices.Equal(l, []int{4, 4, 4, 3}) {
			t.Errorf("small jobs: pages of %v rows, want 4, 4, 4, 3", l)
		}
	})
}
