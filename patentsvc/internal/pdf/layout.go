package pdf

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file turns one page's words, placed by the engine (engine.go) or by
// OCR (ocr.go), into lines of text in reading order.

// span is one word on a page, in points, y up from the page's bottom.
type span struct {
	x0, x1, y float64 // start and end of the word's bottom edge
	size      float64 // height of the word's box
	text      string
}

// maxSpans bounds the words a page may show; a dense page of text has a
// few thousand. A page with more makes the document a *LimitError (the
// memory of its words would grow with the document).
const maxSpans = 100_000

// row is a set of spans sharing a baseline.
type row struct {
	y     float64
	size  float64
	spans []span
}

// pageLines rebuilds the page's lines in reading order.
//
// Rows are found by baseline. When the page has a gutter, a vertical strip
// near the middle that text does not cross, each row is split there and
// consecutive half-rows are read as columns, left before right; a row that
// crosses the gutter (a title, a single-column paragraph) ends the column
// run before it. Line numbers in the gutter and column numbers at the top
// of the page are dropped.
func pageLines(spans []span, width float64) []string {
	if len(spans) == 0 {
		return nil
	}
	rows := groupRows(spans)
	lay := newLayout(spans, rows, width)
	var out, left, right []string
	flush := func() {
		out = append(out, left...)
		out = append(out, right...)
		left, right = left[:0], right[:0]
	}
	for i, r := range rows {
		gutter := lay.gutterNumbers(r)
		kept := r.spans[:0:0]
		// The top row printed larger than the text is the running
		// header ("US 11,394,072 B2"); OCR boxes leave a gap in it
		// where the gutter is, but it is one line.
		crossing := i == 0 && r.size >= 1.2*lay.body
		for i, s := range r.spans {
			if gutter[i] {
				continue
			}
			kept = append(kept, s)
			if lay.crosses(s) {
				crossing = true
			}
		}
		if len(kept) == 0 {
			continue
		}
		top := r.y > lay.topY-4*lay.body
		if crossing {
			flush()
			if line := joinSpans(kept); !(top && isNumber(line)) {
				out = append(out, line)
			}
			continue
		}
		var l, rt []span
		for _, s := range kept {
			if (s.x0+s.x1)/2 < lay.split {
				l = append(l, s)
			} else {
				rt = append(rt, s)
			}
		}
		// A lone number at the top of a column is its column number.
		if line := joinSpans(l); len(l) > 0 && !(top && isNumber(line)) {
			left = append(left, line)
		}
		if line := joinSpans(rt); len(rt) > 0 && !(top && isNumber(line)) {
			right = append(right, line)
		}
	}
	flush()
	return out
}

// layout is what pageLines knows about a page's geometry.
type layout struct {
	mid    float64 // the page's middle
	split  float64 // where rows are split into columns
	g0, g1 float64 // the gutter, when g1 > g0
	body   float64 // font size of the body text
	topY   float64 // baseline of the top row
}

func newLayout(spans []span, rows []row, width float64) layout {
	lay := layout{mid: width / 2, split: width / 2, body: medianSize(spans), topY: rows[0].y}
	// Coverage of the strip around the middle by spans that are not bare
	// numbers, in one-point steps.
	const reach = 60
	var cover [2*reach + 1]int
	for _, s := range spans {
		// Bare numbers, and scraps of one or two characters printed
		// smaller than the text, are what stands in a gutter: its line
		// numbers and what OCR made of them.
		if isNumber(s.text) || s.size < 0.9*lay.body && utf8.RuneCountInString(strings.TrimSpace(s.text)) <= 2 {
			continue
		}
		for x := max(int(math.Ceil(s.x0-lay.mid)), -reach); x <= min(int(math.Floor(s.x1-lay.mid)), reach); x++ {
			cover[x+reach]++
		}
	}
	limit := max(1, len(rows)/30)
	if cover[reach] > limit {
		return lay // text runs through the middle: one column
	}
	lo, hi := reach, reach
	for lo > 0 && cover[lo-1] <= limit {
		lo--
	}
	for hi < 2*reach && cover[hi+1] <= limit {
		hi++
	}
	if hi-lo >= 4 && lo > 0 && hi < 2*reach {
		lay.g0, lay.g1 = lay.mid+float64(lo-reach), lay.mid+float64(hi-reach)
		lay.split = (lay.g0 + lay.g1) / 2
	}
	return lay
}

// crosses reports whether s runs across the gutter, or across the middle
// of a page without one. A word that only reaches a little way into a
// wide gutter, as OCR boxes do at the end of a line, does not cross it.
func (l layout) crosses(s span) bool {
	if l.g1 > l.g0 {
		return min(s.x1, l.g1)-max(s.x0, l.g0) > max(2, (l.g1-l.g0)/4)
	}
	return s.x0 < l.mid-2 && s.x1 > l.mid+2
}

// gutterNumbers marks the spans of a row that are line numbers printed in
// the gutter between two columns (5, 10, ..., 65). When the page has a
// gutter they are the bare numbers inside it; otherwise multiples of five
// near the middle (a full-width table or title hides the gutter of a page
// that is otherwise in columns). The INID codes of a front page's right
// column, "(10)", "(45)", sit near the middle too; they are told apart by
// their brackets. On a page with a gutter, what OCR made of a line number
// ("1g", "is", "AO", "§", "we") is marked too: see gutterMark.
func (l layout) gutterNumbers(r row) []bool {
	marks := make([]bool, len(r.spans))
	for i, s := range r.spans {
		t := strings.TrimSpace(s.text)
		before, after := touching(r.spans, i)
		if utf8.RuneCountInString(t) > 3 || inBrackets(r.spans, i, before, after) {
			continue // a word, or an INID code
		}
		if n, err := strconv.Atoi(t); err == nil && len(t) <= 2 {
			marks[i] = l.isLineNumber(s, n, before || after)
		}
		marks[i] = marks[i] || l.gutterMark(s)
	}
	return marks
}

// gutterMark reports whether s, a string of up to three characters, is a
// line number misread by OCR, on a page with a gutter. OCR boxes spill
// over the gutter's edge, so the band looked at reaches 8 points left of
// the gutter (where line numbers are printed, against the left column)
// but no further right than its edge (where the right column's words
// start, "JP" in a list of references). In that band it is a mark when it
// lies wholly inside the gutter, when it is printed smaller than the body
// text (the line numbers are), or when it is a multiple of five up to 70
// (whose box, on a scan, may be as large as the text's). On a page without
// a gutter, only small scraps within 6 points of the middle are marks.
func (l layout) gutterMark(s span) bool {
	if l.g1 <= l.g0 {
		// No gutter found (a page with little text): a small scrap
		// right on the middle.
		return s.size < 0.9*l.body && s.x0 > l.mid-6 && s.x1 < l.mid+6
	}
	if s.x0 < l.g0-8 || s.x1 > l.g1+1 {
		return false
	}
	if s.x0 >= l.g0-1 || s.size < 0.9*l.body {
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(s.text))
	return err == nil && n > 0 && n <= 70 && n%5 == 0
}

// touching reports whether span i of a row touches the span before it and
// the one after it: whether the gap between them is under half its font
// size. The size is taken as at least 4 points, so that a span with a tiny
// or zero size does not count as standing apart from everything.
func touching(spans []span, i int) (before, after bool) {
	s := spans[i]
	near := 0.5 * math.Max(s.size, 4)
	if i > 0 {
		before = s.x0-spans[i-1].x1 < near
	}
	if i+1 < len(spans) {
		after = spans[i+1].x0-s.x1 < near
	}
	return before, after
}

// inBrackets reports whether span i of a row touches an opening bracket
// before it or a closing bracket after it, as the number of an INID code
// such as "(10)" does.
func inBrackets(spans []span, i int, touchesBefore, touchesAfter bool) bool {
	return touchesBefore && strings.HasSuffix(strings.TrimSpace(spans[i-1].text), "(") ||
		touchesAfter && strings.HasPrefix(strings.TrimSpace(spans[i+1].text), ")")
}

// isLineNumber reports whether s, which reads as the number n, is a line
// number in the gutter: any number inside the gutter when the page has
// one, else a non-zero multiple of five up to 70 near the middle that
// stands out from the text around it. touches says whether s touches a
// neighbour.
func (l layout) isLineNumber(s span, n int, touches bool) bool {
	c := (s.x0 + s.x1) / 2
	if l.g1 > l.g0 {
		return c > l.g0-2 && c < l.g1+2
	}
	if n%5 != 0 || n == 0 || n > 70 || math.Abs(c-l.mid) > 0.06*l.mid {
		return false
	}
	// Printed smaller, standing apart, or right on the middle, where
	// no word of a two-column page can be.
	return s.size < 0.85*l.body || !touches || s.x0 < l.mid && s.x1 > l.mid
}

// isNumber reports whether s is a bare number of up to three digits, with
// an optional trailing period (OCR reads a column number "1" as "1.").
func isNumber(s string) bool {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" || len(s) > 3 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// medianSize is the median font size of the spans, weighted by their
// length: the size of the page's body text.
func medianSize(spans []span) float64 {
	type sz struct{ size, weight float64 }
	all := make([]sz, 0, len(spans))
	total := 0.0
	for _, s := range spans {
		w := float64(len(s.text))
		all = append(all, sz{s.size, w})
		total += w
	}
	sort.Slice(all, func(i, j int) bool { return all[i].size < all[j].size })
	acc := 0.0
	for _, a := range all {
		acc += a.weight
		if acc >= total/2 {
			return a.size
		}
	}
	return 0
}

// groupRows clusters spans whose baselines are within a fraction of the
// font size, top to bottom, each row's spans left to right.
func groupRows(spans []span) []row {
	sorted := make([]span, len(spans))
	copy(sorted, spans)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].y > sorted[j].y })
	var rows []row
	for _, s := range sorted {
		if n := len(rows); n > 0 {
			r := &rows[n-1]
			tol := 0.4 * math.Max(math.Min(r.size, s.size), 1)
			if math.Abs(r.y-s.y) <= tol {
				r.spans = append(r.spans, s)
				continue
			}
		}
		rows = append(rows, row{y: s.y, size: s.size, spans: []span{s}})
	}
	for i := range rows {
		sort.SliceStable(rows[i].spans, func(a, b int) bool { return rows[i].spans[a].x0 < rows[i].spans[b].x0 })
	}
	return rows
}

// joinSpans writes a row's spans as one line, putting a space between two
// spans unless they touch and neither already has one.
func joinSpans(spans []span) string {
	var b strings.Builder
	for i, s := range spans {
		if i > 0 {
			prev := spans[i-1]
			gap := s.x0 - prev.x1
			size := math.Max(math.Min(prev.size, s.size), 1)
			if gap > 0.15*size && !strings.HasSuffix(prev.text, " ") && !strings.HasPrefix(s.text, " ") {
				b.WriteByte(' ')
			}
		}
		b.WriteString(s.text)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
