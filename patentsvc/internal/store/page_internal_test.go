package store

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestListPageBetweenQueries: what a listing's second query loads can
// differ from what its first one sized (a job ended meanwhile and stored
// its result, a row was deleted). The page still keeps within PageBytes,
// and its cursor names the last row it holds, so the rows it leaves out
// come on the next page.
func TestListPageBetweenQueries(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	keys := func(sizes ...int64) []pageKey[string] {
		var out []pageKey[string]
		for i, n := range sizes {
			out = append(out, pageKey[string]{At: at.Add(-time.Duration(i) * time.Second), ID: fmt.Sprint("r", i), Size: n})
		}
		return out
	}
	identity := func(k pageKey[string]) pageKey[string] { return k }
	for _, tt := range []struct {
		name     string
		sized    []pageKey[string] // what the first query read
		loaded   []pageKey[string] // what the second one loads of the ids it asks for
		limit    int
		wantIDs  []string // the ids asked for
		wantPage []string
		wantNext string // the id the next cursor names, "" for none
	}{
		{name: "as sized", sized: keys(1, 2, 3), limit: 2, wantIDs: []string{"r0", "r1"}, wantPage: []string{"r0", "r1"}, wantNext: "r1"},
		{name: "last page", sized: keys(1, 2, 3), limit: 3, wantIDs: []string{"r0", "r1", "r2"}, wantPage: []string{"r0", "r1", "r2"}},
		{name: "empty", limit: 3},
		{name: "one over the budget alone", sized: keys(PageBytes+1, 1), limit: 5, wantIDs: []string{"r0"}, wantPage: []string{"r0"}, wantNext: "r0"},
		{name: "a row grew", sized: keys(10, 10, 10, 10), loaded: keys(10, PageBytes, 10), limit: 3,
			wantIDs: []string{"r0", "r1", "r2"}, wantPage: []string{"r0"}, wantNext: "r0"},
		{name: "a row grew on the last page", sized: keys(10, 10), loaded: keys(10, PageBytes), limit: 3,
			wantIDs: []string{"r0", "r1"}, wantPage: []string{"r0"}, wantNext: "r0"},
		{name: "the last row went", sized: keys(10, 10, 10), loaded: keys(10), limit: 2,
			wantIDs: []string{"r0", "r1"}, wantPage: []string{"r0"}, wantNext: "r1"},
		{name: "every row went", sized: keys(10, 10, 10), loaded: []pageKey[string]{}, limit: 2,
			wantIDs: []string{"r0", "r1"}, wantNext: "r1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			load := func(ids []string) ([]pageKey[string], error) {
				asked = ids
				if tt.loaded != nil {
					return tt.loaded, nil
				}
				return tt.sized[:len(ids)], nil
			}
			page, next, err := listPage(tt.sized, tt.limit, load, identity)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, k := range page {
				ids = append(ids, k.ID)
			}
			if !slices.Equal(asked, tt.wantIDs) || !slices.Equal(ids, tt.wantPage) {
				t.Errorf("listPage asked for %v and returned %v, want %v and %v", asked, ids, tt.wantIDs, tt.wantPage)
			}
			c, _ := decodeCursor(next)
			if c.id != tt.wantNext {
				t.Errorf("next cursor names %q, want %q", c.id, tt.wantNext)
			}
		})
	}
}

func TestPageFit(t *testing.T) {
	for _, tt := range []struct {
		sizes []int64
		limit int
		want  int
	}{
		{nil, 10, 0},
		{[]int64{1, 1, 1}, 2, 2},  // limit first
		{[]int64{5, 5, 5}, 10, 2}, // bytes first
		{[]int64{1, 1, 1}, 10, 3},
		{[]int64{4, 6, 1}, 10, 2},  // exactly the budget
		{[]int64{4, 7, 1}, 10, 1},  // one byte past
		{[]int64{11, 1, 1}, 10, 1}, // one row over the budget, alone
		{[]int64{0, 0, 0}, 10, 3},
	} {
		if got := pageFit(tt.sizes, tt.limit, 10); got != tt.want {
			t.Errorf("pageFit(%v, %d, 10) = %d, want %d", tt.sizes, tt.limit, got, tt.want)
		}
	}
}
