package store

import (
	"fmt"
	"time"
)

// PageBytes is the most stored text one page of a listing carries: the
// model answers of GET /analyze/batch (ListAnalyses), the requests,
// results and errors of GET /jobs (ListJobs). A page ends at limit rows or
// before the row that would take its text past PageBytes, whichever comes
// first, and always holds at least one row, so a single row bigger than
// PageBytes still pages forward, alone. Its next cursor then names the
// last row included: a client that follows next cursors gets every row
// once, on pages that may hold fewer than limit rows while more follow
// (issue 24: 200 answers at LLM_MAX_ANSWER_KB are ~51 MB a page, and a
// few clients at once took the process past a gigabyte).
//
// A listing sizes its page before it loads it: a first query reads up to
// limit+1 rows' keys and the octet_length of their text, which neither
// database has to read the text for (PostgreSQL takes it from the TOAST
// pointer without decompressing; SQLite from the record header), and a
// second loads only the rows that fit.
const PageBytes = 4 << 20

// pageFit returns how many of the first rows, whose stored text is sizes
// bytes each (in listing order), make a page of at most limit rows and
// budget bytes (at least one row, when there is one).
func pageFit(sizes []int64, limit int, budget int64) int {
	var total int64
	for i, n := range sizes {
		if i == limit || (i > 0 && total+n > budget) {
			return i
		}
		total += n
	}
	return len(sizes)
}

// pageKey is what a listing's first query reads of a row: its place in
// the keyset order (sort time and id) and the bytes of stored text it
// carries.
type pageKey[ID comparable] struct {
	At   time.Time
	ID   ID
	Size int64
}

// cursor is the keyset cursor of the page that follows k's row.
func (k pageKey[ID]) cursor() string { return encodeCursor(k.At, fmt.Sprint(k.ID)) }

// listPage makes a page of a listing from keys, the first query's keys
// and sizes of up to limit+1 rows in listing order: the rows that fit
// limit and PageBytes, loaded with load (the rows of ids, in listing
// order), and the cursor of the following page ("" on the last). key
// reads a loaded row's key and the bytes of its text.
func listPage[ID comparable, R any](keys []pageKey[ID], limit int, load func(ids []ID) ([]R, error), key func(R) pageKey[ID]) ([]R, string, error) {
	sizes := make([]int64, len(keys))
	for i, k := range keys {
		sizes[i] = k.Size
	}
	n := pageFit(sizes, limit, PageBytes)
	if n == 0 {
		return nil, "", nil
	}
	ids := make([]ID, n)
	for i, k := range keys[:n] {
		ids[i] = k.ID
	}
	rows, err := load(ids)
	if err != nil {
		return nil, "", err
	}
	// A row's text can grow between the two queries (a job that ends
	// stores its result), and a row can go: fit again what was loaded.
	sizes = sizes[:0]
	for _, r := range rows {
		sizes = append(sizes, key(r).Size)
	}
	if k := pageFit(sizes, len(rows), PageBytes); k < len(rows) {
		return rows[:k], key(rows[k-1]).cursor(), nil
	}
	if n < len(keys) {
		return rows, keys[n-1].cursor(), nil
	}
	return rows, "", nil
}
