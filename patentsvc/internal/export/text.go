package export

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
)

// substitute is drawn for a character no font has a glyph for. The Go
// fonts have U+FFFD, so the reader sees a replacement character rather
// than a blank (gopdf's default, which decisions.md rules out) or a
// question mark that could pass for the text's own.
const substitute = '\uFFFD'

// softHyphen (U+00AD) marks where a word may be hyphenated: invisible,
// unless a line breaks there, where it is drawn as "-".
const softHyphen = '\u00AD'

// tabSpaces is what a tab becomes: gopdf has no tab stops, and the fonts
// no tab glyph.
const tabSpaces = "    "

// glyphs picks the font each character is drawn in: the Go font of its
// face when it has the character, else the fallback font when there is one
// and it has it, else neither, and the character is replaced by substitute
// (drawn in the Go font) and logged once.
//
// The check is done here, with sfnt, rather than left to gopdf's
// OnGlyphNotFoundSubstitute: gopdf v0.33.0 reports only some misses (a
// format 4 cmap entry pointing at glyph 0 passes as found and draws
// .notdef, which most viewers show as nothing), and it could not fall
// back to another font.
type glyphs struct {
	logger *slog.Logger
	fonts  *Fonts
	buf    sfnt.Buffer
	has    map[string]map[rune]bool // per family, characters looked up
	logged map[rune]bool
}

func newGlyphs(logger *slog.Logger, fonts *Fonts) *glyphs {
	g := &glyphs{
		logger: logger,
		fonts:  fonts,
		has:    make(map[string]map[rune]bool, len(fonts.parsed)),
		logged: make(map[rune]bool),
	}
	for family := range fonts.parsed {
		g.has[family] = make(map[rune]bool)
	}
	return g
}

// covered reports whether family has a glyph for c.
func (g *glyphs) covered(family string, c rune) bool {
	has, ok := g.has[family][c]
	if !ok {
		i, err := g.fonts.parsed[family].GlyphIndex(&g.buf, c)
		has = err == nil && i != 0
		g.has[family][c] = has
	}
	return has
}

// missing logs c, once per report.
func (g *glyphs) missing(c rune) {
	if g.logged[c] {
		return
	}
	g.logged[c] = true
	g.logger.Debug("pdf export glyph missing",
		slog.String("char", string(c)),
		slog.String("code_point", fmt.Sprintf("U+%04X", c)),
		slog.String("substitute", fmt.Sprintf("U+%04X", substitute)))
}

// run is text drawn in one font family.
type run struct {
	family string
	text   string
}

// runs splits line (text without line breaks) set in face f into runs by
// the font each character is drawn in. Tabs become spaces; control
// characters and characters no font has become substitute, except
// invisible format characters (zero-width joiners and spaces, variation
// selectors, a byte order mark), which are dropped since they draw
// nothing anyway.
func (g *glyphs) runs(f face, line string) []run {
	primary := f.family()
	plain := true
	for i := 0; i < len(line); i++ {
		if line[i] < 0x20 || line[i] >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return []run{{primary, line}} // printable ASCII: every Go font has it all
	}
	fallback := g.fonts.fallback
	if f.bold() {
		fallback = g.fonts.fallbackBold
	}
	var (
		out []run
		b   strings.Builder
		cur = primary
	)
	add := func(family string, s string) {
		if family != cur && b.Len() > 0 {
			out = append(out, run{cur, b.String()})
			b.Reset()
		}
		cur = family
		b.WriteString(s)
	}
	for _, c := range line {
		switch {
		case c == '\t':
			add(primary, tabSpaces)
		case c >= 0x20 && c < 0x7f:
			add(primary, string(c))
		case c == '\u2010' || c == '\u2011':
			// Hyphen and non-breaking hyphen, which the Go fonts lack:
			// the hyphen they draw "-" with (cmap.go). Lines never break
			// at hyphens, so the non-breaking one keeps its meaning.
			add(primary, "-")
		case c == softHyphen:
			// Kept for words, which makes it a place to break, drawn as
			// "-" only when a line ends there.
			add(primary, string(c))
		case c == '\u2012':
			// The figure dash, which the Go fonts lack: the en dash.
			add(primary, "\u2013")
		case unicode.IsControl(c):
			// The Go fonts map some control characters to an empty
			// glyph: substitute them whatever the font says.
			g.missing(c)
			add(primary, string(substitute))
		case g.covered(primary, c):
			add(primary, string(c))
		case fallback != "" && g.covered(fallback, c):
			add(fallback, string(c))
		case unicode.Is(unicode.Cf, c), unicode.Is(unicode.Variation_Selector, c):
			g.missing(c)
		default:
			g.missing(c)
			add(primary, string(substitute))
		}
	}
	if b.Len() > 0 {
		out = append(out, run{cur, b.String()})
	}
	return out
}

// A span is inline text in one style: what the Markdown of an analysis,
// or a plain string, becomes before it is laid out.
type span struct {
	text string
	face face
	size float64
	grey uint8
	code bool // inline code, drawn on a light grey box
	brk  bool // a line break; text is empty
}

// A piece is text drawn in one font at one size: what lines are made of.
type piece struct {
	family string
	size   float64
	grey   uint8
	code   bool
	text   string
	width  float64
}

func (p piece) sameFont(q piece) bool {
	return p.family == q.family && p.size == q.size && p.grey == q.grey && p.code == q.code
}

// A line is laid-out text: pieces drawn left to right.
type line struct {
	pieces []piece
	width  float64
}

// add appends p to l, into its last piece when the font is the same.
func (l *line) add(p piece) {
	if p.text == "" {
		return
	}
	if n := len(l.pieces); n > 0 && l.pieces[n-1].sameFont(p) {
		l.pieces[n-1].text += p.text
		l.pieces[n-1].width += p.width
	} else {
		l.pieces = append(l.pieces, p)
	}
	l.width += p.width
}

// text is what l shows.
func (l line) text() string {
	var b strings.Builder
	for _, p := range l.pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// A word is text between two places where a line may break: spaces, and
// around CJK characters, which break between any two (see breakBetween).
type word struct {
	pieces []piece
	width  float64
	space  piece // the space before the word; empty text when none
	brk    bool  // a line break, not a word
	// hyphen is the "-" drawn after the word when a line breaks after
	// it: the word ended at a soft hyphen. Empty text otherwise.
	hyphen piece
}

// words cuts spans into words, choosing each character's font and
// measuring it. Every space separates two words, so runs of spaces (code,
// indentation) are kept as empty words between them. Pieces are slices of
// the runs' text: nothing is copied per character.
func (r *renderer) words(spans []span) ([]word, error) {
	wc := wordCutter{r: r}
	for _, s := range spans {
		if s.brk {
			wc.lineBreak()
			continue
		}
		for _, rn := range r.glyphs.runs(s.face, s.text) {
			if err := wc.cut(s, rn); err != nil {
				return nil, err
			}
		}
	}
	if len(wc.cur.pieces) > 0 {
		wc.finish()
	}
	return wc.out, nil
}

// wordCutter is the state of words between runs: a word may go on from
// one run, or span, into the next.
type wordCutter struct {
	r       *renderer
	out     []word // the words cut so far
	cur     word   // the word being read
	pending piece  // the space before cur
	prev    rune   // the character before, 0 at the start of a line
}

// finish ends cur, with the space before it, and starts a new word.
func (wc *wordCutter) finish() {
	wc.cur.space = wc.pending
	wc.out = append(wc.out, wc.cur)
	wc.cur, wc.pending = word{}, piece{}
}

// lineBreak ends the word being read and adds a line-break word.
func (wc *wordCutter) lineBreak() {
	if len(wc.cur.pieces) > 0 {
		wc.finish()
	}
	wc.out = append(wc.out, word{brk: true})
	wc.cur, wc.pending, wc.prev = word{}, piece{}, 0
}

// cut reads rn, a run of span s, into words: the pieces of cur, slices of
// rn.text, end at spaces, at soft hyphens and where breakBetween allows a
// break, and at the end of the run.
func (wc *wordCutter) cut(s span, rn run) error {
	widths := wc.r.widthTable(rn.family, s.size)
	p := piece{family: rn.family, size: s.size, grey: s.grey, code: s.code}
	start := -1 // of the piece being read, in rn.text
	flush := func(end int) {
		if start >= 0 && end > start {
			q := p
			q.text = rn.text[start:end]
			wc.cur.pieces = append(wc.cur.pieces, q)
		}
		start, p.width = -1, 0
	}
	for i, c := range rn.text {
		if c == softHyphen {
			flush(i)
			if err := wc.softHyphen(p); err != nil {
				return err
			}
			continue
		}
		w, ok := widths[c]
		if !ok {
			var err error
			if w, err = wc.r.charWidth(rn.family, s.size, c); err != nil {
				return err
			}
		}
		if c == ' ' {
			flush(i)
			wc.finish()
			wc.pending = p
			wc.pending.text, wc.pending.width = rn.text[i:i+1], w
			wc.prev = c
			continue
		}
		if (start >= 0 || len(wc.cur.pieces) > 0) && breakBetween(wc.prev, c) {
			flush(i)
			wc.finish()
		}
		if start < 0 {
			start = i
		}
		p.width += w
		wc.cur.width += w
		wc.prev = c
	}
	flush(len(rn.text))
	return nil
}

// softHyphen handles a soft hyphen read in the font of p: a place to
// break, with no space, where the word ends with the hyphen it shows if
// the line breaks there. Two in a row, or one after a space, are one
// place. It is never given to gopdf, not even to measure: the glyph is
// the one "-" is drawn with (cmap.go), and copying would give U+00AD for
// both.
func (wc *wordCutter) softHyphen(p piece) error {
	if len(wc.cur.pieces) == 0 {
		return nil
	}
	hw, err := wc.r.charWidth(p.family, p.size, '-')
	if err != nil {
		return err
	}
	wc.cur.hyphen = p
	wc.cur.hyphen.text, wc.cur.hyphen.width = "-", hw
	wc.finish()
	return nil
}

// layout calls emit with the lines words take within width: lines break
// at spaces (the spaces after a break are dropped; those at the start of a
// line of the text are kept, as indentation), at CJK characters, at soft
// hyphens (the line then ends with "-"), and at each line-break word; a
// word wider than width (a URL, a long identifier) starts a line of its
// own and is cut wherever it must be. At least one line is emitted, empty
// for no words.
func (r *renderer) layout(words []word, width float64, emit func(line) error) error {
	var (
		cur     line
		open    bool  // there is a line being filled
		wrapped bool  // a break has happened since the last line break
		hyphen  piece // the hyphen of the last word on cur
		emitted bool
	)
	out := func(l line) error {
		emitted = true
		return emit(r.trimRight(l))
	}
	for i := 0; i < len(words); {
		w := words[i]
		switch {
		case w.brk:
			if err := out(cur); err != nil {
				return err
			}
			cur, open, wrapped, hyphen = line{}, false, false, piece{}
		case !open && wrapped && len(w.pieces) == 0:
			// spaces after a break
		case !open && w.width <= width:
			cur, open, hyphen = line{}, true, w.hyphen
			for _, p := range w.pieces {
				cur.add(p)
			}
		case !open:
			rest, err := r.breakWord(w.pieces, width, out)
			if err != nil {
				return err
			}
			cur, open, wrapped, hyphen = rest, true, true, w.hyphen
		case cur.width+w.space.width+w.width+w.hyphen.width <= width:
			// A word that ends at a soft hyphen fits with its hyphen,
			// in case the line breaks after it.
			cur.add(w.space)
			for _, p := range w.pieces {
				cur.add(p)
			}
			hyphen = w.hyphen
		default:
			// The line breaks before w: after a soft hyphen, it shows.
			// Only a word that fills a line on its own leaves no room
			// for it; that line goes without.
			if hyphen.text != "" && cur.width+hyphen.width <= width {
				cur.add(hyphen)
			}
			if err := out(cur); err != nil {
				return err
			}
			cur, open, wrapped, hyphen = line{}, false, true, piece{}
			continue // the word starts the next line
		}
		i++
	}
	if open || !emitted {
		return out(cur)
	}
	return nil
}

// breakWord emits the leading parts of a word (pieces) that fill whole
// lines of width and returns the part left over, which starts the next
// line. Every line has at least one character, so a width narrower than
// one character still makes progress.
func (r *renderer) breakWord(pieces []piece, width float64, emit func(line) error) (line, error) {
	var cur line
	for _, p := range pieces {
		for _, c := range p.text {
			w, err := r.charWidth(p.family, p.size, c)
			if err != nil {
				return line{}, err
			}
			if cur.width+w > width && len(cur.pieces) > 0 {
				if err := emit(cur); err != nil {
					return line{}, err
				}
				cur = line{}
			}
			q := p
			q.text, q.width = string(c), w
			cur.add(q)
		}
	}
	return cur, nil
}

// trimRight drops the spaces at the end of l, which show nothing but
// would shift right-aligned and centred text.
func (r *renderer) trimRight(l line) line {
	for n := len(l.pieces); n > 0; n = len(l.pieces) {
		last := &l.pieces[n-1]
		trimmed := strings.TrimRight(last.text, " ")
		if trimmed == last.text {
			break
		}
		cut := last.width
		if trimmed != "" {
			// The spaces were measured when the line was made.
			cut = float64(len(last.text)-len(trimmed)) * r.widthTable(last.family, last.size)[' ']
			last.text = trimmed
			last.width -= cut
		} else {
			l.pieces = l.pieces[:n-1]
		}
		l.width -= cut
	}
	return l
}

// breakBetween reports whether a line may break between a and b without a
// space: before and after CJK ideographs, kana and hangul, except before
// closing punctuation and after opening punctuation (a simplified form of
// the line-breaking rules of UAX #14 and Japanese kinsoku).
func breakBetween(a, b rune) bool {
	if a == 0 || !(wide(a) || wide(b)) {
		return false
	}
	return !strings.ContainsRune(noBreakBefore, b) && !strings.ContainsRune(noBreakAfter, a)
}

const (
	noBreakBefore = "、。，．：；？！）」』】〉》〕］｝〜ー・ゝゞヽヾぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ,.;:!?)]}%"
	noBreakAfter  = "（「『【〈《〔［｛([{"
)

// wide reports whether c is a CJK character written without spaces
// between words.
func wide(c rune) bool {
	return unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(c >= 0x3000 && c <= 0x303F) || // CJK symbols and punctuation
		(c >= 0xFF00 && c <= 0xFFEF) // half- and full-width forms
}

// charWidth is the width of c in family at size, in points.
//
// gopdf's width of a string is the sum of its characters' widths (no
// kerning is asked for), so the width of each character is asked of gopdf
// once per font and size and summed here: MeasureTextWidth allocates on
// every call, and wrapping measures every word.
func (r *renderer) charWidth(family string, size float64, c rune) (float64, error) {
	widths := r.widthTable(family, size)
	if w, ok := widths[c]; ok {
		return w, nil
	}
	if err := r.setFont(family, size); err != nil {
		return 0, err
	}
	w, err := r.gp.MeasureTextWidth(string(c))
	if err != nil {
		return 0, err
	}
	widths[c] = w
	return w, nil
}

// widthTable is the widths of the characters measured in family at size.
func (r *renderer) widthTable(family string, size float64) map[rune]float64 {
	k := fontKey{family, size}
	t, ok := r.widths[k]
	if !ok {
		t = make(map[rune]float64)
		r.widths[k] = t
	}
	return t
}

// measure is the width of s drawn in face f at size, fonts chosen as
// glyphs.runs chooses them, soft hyphens unseen (as on a line they do not
// end).
func (r *renderer) measure(f face, size float64, s string) (float64, error) {
	total := 0.0
	for _, rn := range r.glyphs.runs(f, s) {
		for _, c := range rn.text {
			if c == softHyphen {
				continue
			}
			w, err := r.charWidth(rn.family, size, c)
			if err != nil {
				return 0, err
			}
			total += w
		}
	}
	return total, nil
}

// fontKey is a font at a size.
type fontKey struct {
	family string
	size   float64
}

// plainSpans is text in style s as spans: its own line breaks (LF, CRLF,
// CR, U+2028, U+2029) become line-break spans, except those at its start
// and end, which are dropped.
func plainSpans(s style, text string) []span {
	text = strings.Trim(text, "\r\n")
	var out []span
	for {
		i := strings.IndexAny(text, "\r\n\u2028\u2029")
		if i < 0 {
			return append(out, s.span(text))
		}
		out = append(out, s.span(text[:i]), span{brk: true})
		_, size := utf8.DecodeRuneInString(text[i:])
		if strings.HasPrefix(text[i:], "\r\n") {
			size = 2
		}
		text = text[i+size:]
	}
}
