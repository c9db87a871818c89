package pdf

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
)

// This file turns one page's content stream into lines of text in reading
// order. It walks the stream with lpdf.Interpret rather than calling
// Page.GetTextByRow: GetTextByRow only follows Tm (it ignores Td, TD, T*,
// cm and Tz), so on the OCR text layers of Google Patents PDFs, where every
// word is placed with its own Td inside a scaled coordinate system, all the
// words of a line get the same x and come back in arbitrary order. Content()
// tracks the full state but is per glyph and takes Courier's missing widths
// as zero. Here each shown string becomes one span with its start and end
// in page space.

// span is one string shown on a page, in default user space (points).
type span struct {
	x0, x1, y float64 // start and end of the baseline
	size      float64 // font size after all scaling
	text      string
}

// mat is a PDF transformation matrix [a b c d e f].
type mat [6]float64

var identity = mat{1, 0, 0, 1, 0, 0}

// mul returns m×n (m applied first, then n), as in the PDF spec.
func (m mat) mul(n mat) mat {
	return mat{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m mat) apply(x, y float64) (float64, float64) {
	return x*m[0] + y*m[2] + m[4], x*m[1] + y*m[3] + m[5]
}

func translate(tx, ty float64) mat { return mat{1, 0, 0, 1, tx, ty} }

// fontInfo caches what the walker needs about one font resource.
type fontInfo struct {
	enc     lpdf.TextEncoding
	twoByte bool // composite font: two bytes per code
	first   int
	widths  []float64
	dflt    float64 // width used when the font gives none, in 1/1000 em
}

func (f *fontInfo) width(code int) float64 {
	if i := code - f.first; i >= 0 && i < len(f.widths) && f.widths[i] > 0 {
		return f.widths[i]
	}
	return f.dflt
}

// maxTreeDepth bounds walks up and down the page tree, so that a cyclic
// Parent or Kids entry in a hostile file cannot loop forever.
const maxTreeDepth = 32

// inherited looks key up on the page and its ancestors.
func inherited(page lpdf.Value, key string) lpdf.Value {
	v := page
	for i := 0; i < maxTreeDepth && !v.IsNull(); i++ {
		if r := v.Key(key); !r.IsNull() {
			return r
		}
		v = v.Key("Parent")
	}
	return lpdf.Value{}
}

func loadFont(v lpdf.Value) *fontInfo {
	f := lpdf.Font{V: v}
	fi := &fontInfo{dflt: 500}
	if strings.Contains(f.BaseFont(), "Courier") {
		fi.dflt = 600
	}
	if v.Key("Subtype").Name() == "Type0" {
		fi.twoByte = true
		if dw := v.Key("DescendantFonts").Index(0).Key("DW"); !dw.IsNull() {
			fi.dflt = dw.Float64()
		} else {
			fi.dflt = 1000
		}
		// Per-glyph widths of CID fonts (the W array) are not read; the
		// default width is close enough for line building.
		fi.dflt /= 2
	} else {
		fi.first = f.FirstChar()
		w := v.Key("Widths")
		n := w.Len()
		if n > 4096 {
			n = 4096
		}
		fi.widths = make([]float64, n)
		for i := range n {
			fi.widths[i] = w.Index(i).Float64()
		}
	}
	fi.enc = f.Encoder()
	if fi.twoByte && identityToUnicode(v) {
		fi.enc = utf16Encoding{}
	}
	if fi.enc == nil {
		fi.enc = identityEncoding{}
	}
	return fi
}

// reIdentityRange is the one mapping of the ToUnicode CMap that tesseract
// writes for its GlyphLessFont: every two-byte code is its own UTF-16 code
// unit.
var reIdentityRange = regexp.MustCompile(`(?i)beginbfrange\s*<0000>\s*<ffff>\s*<0000>\s*endbfrange`)

// identityToUnicode reports whether the composite font v maps its codes
// to Unicode one to one, as the text layers that tesseract (and OCRmyPDF
// with it) write do. The library's CMap decoding adds the offset into a
// range to the last byte only, so through it "’" (U+2019) in such a layer
// reads as U+0019; these fonts are decoded as UTF-16 here instead.
func identityToUnicode(v lpdf.Value) bool {
	if v.Key("Encoding").Name() != "Identity-H" {
		return false
	}
	tu := v.Key("ToUnicode")
	if tu.Kind() != lpdf.Stream {
		return false
	}
	rc := tu.Reader()
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 4096))
	return reIdentityRange.Match(b) && !bytes.Contains(b, []byte("beginbfchar"))
}

// utf16Encoding decodes two-byte codes as UTF-16 (big-endian).
type utf16Encoding struct{}

func (utf16Encoding) Decode(raw string) string {
	units := make([]uint16, 0, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		units = append(units, uint16(raw[i])<<8|uint16(raw[i+1]))
	}
	return string(utf16.Decode(units))
}

// identityEncoding passes bytes through; it stands in when a font has no
// usable encoding.
type identityEncoding struct{}

func (identityEncoding) Decode(raw string) string { return raw }

// gstate is the part of the graphics and text state that positions text.
type gstate struct {
	ctm                mat
	tc, tw, th, tl, ts float64
	font               *fontInfo
	tfs                float64
}

// advance returns how far showing raw moves the text matrix, in unscaled
// text space: the sum of the glyph widths with character and word spacing,
// scaled horizontally. Word spacing applies to single-byte code 32 only,
// as the spec says.
func (g *gstate) advance(raw string) float64 {
	var adv float64
	step := 1
	if g.font.twoByte {
		step = 2
	}
	for i := 0; i+step <= len(raw); i += step {
		code := int(raw[i])
		if step == 2 {
			code = code<<8 | int(raw[i+1])
		}
		w := g.font.width(code)/1000*g.tfs + g.tc
		if step == 1 && raw[i] == ' ' {
			w += g.tw
		}
		adv += w * g.th
	}
	return adv
}

// opCheckEvery is how many content-stream operators run between two
// context checks.
const opCheckEvery = 4096

// abortWalk is the panic value used to stop Interpret when ctx is done.
type abortWalk struct{ err error }

// pageText is what pageSpans has read of a page so far: when the page's
// content turns out to be broken half way, the text before the break is
// kept.
type pageText struct {
	spans []span
	width float64
}

// maxSpans bounds the pieces of text a page may show; a dense page of text
// has a few thousand. A page with more makes the document a *LimitError
// (its memory, and the time to interpret it, would grow with the
// document's decompressed streams).
const maxSpans = 100_000

// add keeps s, with its ends in left-to-right order; one more than
// maxSpans stops the walk of the page with a *LimitError.
func (t *pageText) add(s span) {
	if s.x1 < s.x0 {
		s.x0, s.x1 = s.x1, s.x0
	}
	if len(t.spans) == maxSpans {
		panic(abortWalk{&LimitError{Reason: fmt.Sprintf("a page shows more than %d pieces of text", maxSpans)}})
	}
	t.spans = append(t.spans, s)
}

// pageSpans reads the text spans of one page, and its width, into t. It
// may panic on malformed content; the caller recovers.
func pageSpans(ctx context.Context, page lpdf.Value, t *pageText) {
	t.width = pageWidth(page)
	contents := page.Key("Contents")
	if contents.IsNull() {
		return
	}
	w := newWalker(inherited(page, "Resources").Key("Font"), t)
	interpretContents(contents, func(stk *lpdf.Stack, op string) {
		w.do(ctx, stk, op)
	})
}

// pageWidth returns the width of the page's MediaBox, or that of US Letter
// when the page has no usable MediaBox.
func pageWidth(page lpdf.Value) float64 {
	if mb := inherited(page, "MediaBox"); mb.Len() == 4 {
		if w := math.Abs(mb.Index(2).Float64() - mb.Index(0).Float64()); w > 50 && w < 20000 {
			return w
		}
	}
	return 612
}

// maxContentStreams bounds the streams read from a Contents array.
const maxContentStreams = 10000

// interpretContents runs do over a page's Contents, a stream or an array
// of streams. Interpret joins the streams of a Contents array without a
// separator, so "q" at the end of one and "q" at the start of the next
// read as "qq"; the spec says the boundary is whitespace. So each stream
// is interpreted on its own, with the same do and so the same state.
func interpretContents(contents lpdf.Value, do func(stk *lpdf.Stack, op string)) {
	if contents.Kind() == lpdf.Array {
		for i := 0; i < contents.Len() && i < maxContentStreams; i++ {
			lpdf.Interpret(contents.Index(i), do)
		}
		return
	}
	lpdf.Interpret(contents, do)
}

// walker is the state of one walk through a page's content: it runs the
// operators that position and show text, and ignores the rest.
type walker struct {
	resFonts lpdf.Value           // the page's Font resources
	fonts    map[string]*fontInfo // fonts loaded so far, by resource name
	g        gstate
	stack    []gstate // states saved by q
	tm, tlm  mat      // text matrix and text line matrix
	ops      int      // operators run so far
	t        *pageText
}

// newWalker returns a walker in the initial state, which adds the spans it
// finds to t.
func newWalker(resFonts lpdf.Value, t *pageText) *walker {
	return &walker{
		resFonts: resFonts,
		fonts:    map[string]*fontInfo{},
		g:        gstate{ctm: identity, th: 1},
		tm:       identity,
		tlm:      identity,
		t:        t,
	}
}

// do runs one operator with the operands on stk; it is Interpret's
// callback. Every opCheckEvery operators it panics with abortWalk if ctx
// is done, since Interpret has no other way to stop.
func (w *walker) do(ctx context.Context, stk *lpdf.Stack, op string) {
	w.ops++
	if w.ops%opCheckEvery == 0 && ctx.Err() != nil {
		panic(abortWalk{ctx.Err()})
	}
	args := popArgs(stk)
	switch op {
	case "q", "Q", "cm":
		w.graphicsStateOp(op, args)
	case "Tc", "Tw", "Tz", "TL", "Ts", "Tf":
		w.textStateOp(op, args)
	case "BT", "Td", "TD", "Tm", "T*":
		w.textPositionOp(op, args)
	case "Tj", "'", "\"", "TJ":
		w.textShowOp(op, args)
	}
}

// popArgs empties stk and returns its values in the order they were
// pushed, which is the operands' order.
func popArgs(stk *lpdf.Stack) []lpdf.Value {
	n := stk.Len()
	args := make([]lpdf.Value, n)
	for i := n - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	return args
}

// num returns operand i as a number, or 0 when there are fewer operands.
func num(args []lpdf.Value, i int) float64 {
	if i < len(args) {
		return args[i].Float64()
	}
	return 0
}

// matrix returns the six operands of cm or Tm as a matrix.
func matrix(args []lpdf.Value) mat {
	return mat{num(args, 0), num(args, 1), num(args, 2), num(args, 3), num(args, 4), num(args, 5)}
}

// maxSavedStates bounds the states saved by q, so that a hostile stream of
// q operators cannot grow the stack without limit.
const maxSavedStates = 1024

// graphicsStateOp runs q, Q and cm. A q beyond maxSavedStates saves
// nothing, and a Q with nothing saved is ignored.
func (w *walker) graphicsStateOp(op string, args []lpdf.Value) {
	switch op {
	case "q":
		if len(w.stack) < maxSavedStates {
			w.stack = append(w.stack, w.g)
		}
	case "Q":
		if n := len(w.stack); n > 0 {
			w.g = w.stack[n-1]
			w.stack = w.stack[:n-1]
		}
	case "cm":
		if len(args) == 6 {
			w.g.ctm = matrix(args).mul(w.g.ctm)
		}
	}
}

// textStateOp runs the text state operators Tc, Tw, Tz, TL, Ts and Tf.
func (w *walker) textStateOp(op string, args []lpdf.Value) {
	switch op {
	case "Tc":
		w.g.tc = num(args, 0)
	case "Tw":
		w.g.tw = num(args, 0)
	case "Tz":
		w.g.th = num(args, 0) / 100
	case "TL":
		w.g.tl = num(args, 0)
	case "Ts":
		w.g.ts = num(args, 0)
	case "Tf":
		if len(args) == 2 {
			w.g.font = w.font(args[0].Name())
			w.g.tfs = num(args, 1)
		}
	}
}

// font returns the page's font resource of that name, loading it on first
// use.
func (w *walker) font(name string) *fontInfo {
	fi, ok := w.fonts[name]
	if !ok {
		fi = loadFont(w.resFonts.Key(name))
		w.fonts[name] = fi
	}
	return fi
}

// textPositionOp runs BT and the text positioning operators Td, TD, Tm and
// T*.
func (w *walker) textPositionOp(op string, args []lpdf.Value) {
	switch op {
	case "BT":
		w.tm, w.tlm = identity, identity
	case "Td", "TD":
		if len(args) == 2 {
			if op == "TD" {
				w.g.tl = -num(args, 1)
			}
			w.moveLine(translate(num(args, 0), num(args, 1)))
		}
	case "Tm":
		if len(args) == 6 {
			w.tlm = matrix(args)
			w.tm = w.tlm
		}
	case "T*":
		w.nextLine()
	}
}

// moveLine starts a new line at m applied to the start of the current one.
func (w *walker) moveLine(m mat) {
	w.tlm = m.mul(w.tlm)
	w.tm = w.tlm
}

// nextLine starts a new line one leading below the current one, as T* does.
func (w *walker) nextLine() {
	w.moveLine(translate(0, -w.g.tl))
}

// textShowOp runs the text showing operators Tj, ', " and TJ.
func (w *walker) textShowOp(op string, args []lpdf.Value) {
	switch op {
	case "Tj":
		if len(args) == 1 {
			w.show(args[0].RawString())
		}
	case "'", "\"":
		if op == "\"" && len(args) == 3 {
			w.g.tw, w.g.tc = num(args, 0), num(args, 1)
			args = args[2:]
		}
		w.nextLine()
		if len(args) == 1 {
			w.show(args[0].RawString())
		}
	case "TJ":
		if len(args) == 1 {
			w.showArray(args[0])
		}
	}
}

// showArray runs TJ on its array operand: strings are shown and numbers
// move the text matrix back by thousandths of an em.
func (w *walker) showArray(a lpdf.Value) {
	for i := 0; i < a.Len(); i++ {
		e := a.Index(i)
		switch e.Kind() {
		case lpdf.String:
			w.show(e.RawString())
		case lpdf.Integer, lpdf.Real:
			adj := -e.Float64() / 1000
			if adj > 0.25 {
				// A wide kern inside TJ is how many producers
				// write a word space.
				appendSpace(w.t.spans)
			}
			w.tm = translate(adj*w.g.tfs*w.g.th, 0).mul(w.tm)
		}
	}
}

// show shows one string: it adds a span from where the string starts to
// where it ends in page space, unless the string is blank, and advances
// the text matrix past it. A string shown before any Tf gets a stand-in
// font that passes bytes through.
func (w *walker) show(raw string) {
	g := &w.g
	if g.font == nil {
		g.font = &fontInfo{enc: identityEncoding{}, dflt: 500}
	}
	// Control characters are no text; OCR layers have a few.
	text := strings.Map(dropControl, g.font.enc.Decode(raw))
	adv := g.advance(raw)
	trm := mat{g.tfs * g.th, 0, 0, g.tfs, 0, g.ts}.mul(w.tm).mul(g.ctm)
	end := translate(adv, 0).mul(w.tm).mul(g.ctm)
	x0, y := trm[4], trm[5]
	x1, _ := end.apply(0, g.ts)
	size := math.Hypot(trm[2], trm[3])
	w.tm = translate(adv, 0).mul(w.tm)
	if strings.TrimSpace(text) == "" {
		return
	}
	w.t.add(span{x0: x0, x1: x1, y: y, size: size, text: text})
}

// dropControl maps the control characters but tab to -1, which
// strings.Map drops.
func dropControl(r rune) rune {
	if r != '\t' && unicode.IsControl(r) {
		return -1
	}
	return r
}

// appendSpace marks the last span as ending in a space, so that line
// building separates it from the next one even when they touch.
func appendSpace(spans []span) {
	if n := len(spans); n > 0 && !strings.HasSuffix(spans[n-1].text, " ") {
		spans[n-1].text += " "
	}
}

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
