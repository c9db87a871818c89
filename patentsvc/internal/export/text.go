package export

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
)

// substitute is drawn for a character the font has no glyph for. The Go
// fonts have U+FFFD, so the reader sees a replacement character rather
// than a blank (gopdf's default, which decisions.md rules out) or a
// question mark that could pass for the text's own.
const substitute = '\uFFFD'

// tabSpaces is what a tab becomes: gopdf has no tab stops, and the font no
// tab glyph.
const tabSpaces = "    "

// font is an embedded TrueType font and the family name gopdf knows it by.
type font struct {
	family string
	ttf    []byte
}

// glyphs knows which characters each font can draw, replaces the others
// before gopdf sees them, and logs each missing character once.
//
// The check is done here, with sfnt, rather than left to gopdf's
// OnGlyphNotFoundSubstitute: gopdf v0.33.0 reports only some misses (a
// format 4 cmap entry pointing at glyph 0 passes as found and draws
// .notdef, which most viewers show as nothing).
type glyphs struct {
	logger *slog.Logger
	fonts  map[string]*sfnt.Font
	buf    sfnt.Buffer
	has    map[string]map[rune]bool // per family, characters looked up
	logged map[rune]bool
}

func newGlyphs(logger *slog.Logger, fonts []font) (*glyphs, error) {
	g := &glyphs{
		logger: logger,
		fonts:  make(map[string]*sfnt.Font, len(fonts)),
		has:    make(map[string]map[rune]bool, len(fonts)),
		logged: make(map[rune]bool),
	}
	for _, f := range fonts {
		parsed, err := sfnt.Parse(f.ttf)
		if err != nil {
			return nil, fmt.Errorf("font %s: %w", f.family, err)
		}
		g.fonts[f.family] = parsed
		g.has[f.family] = make(map[rune]bool)
	}
	return g, nil
}

// covered reports whether family has a glyph for c.
func (g *glyphs) covered(family string, c rune) bool {
	has, ok := g.has[family][c]
	if !ok {
		i, err := g.fonts[family].GlyphIndex(&g.buf, c)
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

// clean prepares one line (no line breaks) for family: tabs become spaces,
// control characters and characters the font lacks become substitute,
// except invisible format characters (zero-width joiners and spaces,
// variation selectors, a byte order mark), which are dropped since they
// draw nothing anyway.
func (g *glyphs) clean(family, line string) string {
	plain := true
	for i := 0; i < len(line); i++ {
		if line[i] < 0x20 || line[i] >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return line // printable ASCII: every Go font has it all
	}
	var b strings.Builder
	b.Grow(len(line))
	for _, c := range line {
		switch {
		case c == '\t':
			b.WriteString(tabSpaces)
		case c >= 0x20 && c < 0x7f:
			b.WriteRune(c)
		case unicode.IsControl(c):
			// The Go fonts map some control characters to an empty
			// glyph: substitute them whatever the font says.
			g.missing(c)
			b.WriteRune(substitute)
		case g.covered(family, c):
			b.WriteRune(c)
		case unicode.Is(unicode.Cf, c), unicode.Is(unicode.Variation_Selector, c):
			g.missing(c)
		default:
			g.missing(c)
			b.WriteRune(substitute)
		}
	}
	return b.String()
}

// eachLine calls emit with each line of text as drawn in the current style
// within width: text is cut at its own line breaks (LF, CRLF, CR, U+2028,
// U+2029), and each of its lines word-wrapped. Line breaks at the start
// and end of text are dropped.
func (r *renderer) eachLine(text string, width float64, emit func(string) error) error {
	text = strings.Trim(text, "\r\n")
	for {
		i := strings.IndexAny(text, "\r\n\u2028\u2029")
		line := text
		if i >= 0 {
			line = text[:i]
		}
		if err := r.wrap(r.glyphs.clean(r.cur.family, line), width, emit); err != nil {
			return err
		}
		if i < 0 {
			return nil
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		if strings.HasPrefix(text[i:], "\r\n") {
			size = 2
		}
		text = text[i+size:]
	}
}

// wrap calls emit with the lines that line (one line of text, cleaned)
// takes within width: it breaks at spaces, and breaks a word wider than
// width (a URL, a long identifier) wherever it has to. Spaces at the start
// of line are kept (indentation); lines after a break start with the next
// word.
func (r *renderer) wrap(line string, width float64, emit func(string) error) error {
	if line == "" {
		return emit("")
	}
	space, err := r.measure(" ")
	if err != nil {
		return err
	}
	var (
		start, end int     // the line being filled is line[start:end]
		lineWidth  float64 // and this wide
		open       bool    // there is a line being filled
		wrapped    bool    // a break has happened
	)
	for i := 0; i <= len(line); {
		j := strings.IndexByte(line[i:], ' ')
		if j < 0 {
			j = len(line)
		} else {
			j += i
		}
		word := line[i:j]
		if !open && wrapped && word == "" {
			i = j + 1 // spaces after a break
			continue
		}
		w, err := r.measure(word)
		if err != nil {
			return err
		}
		switch {
		case !open && w <= width:
			start, end, lineWidth, open = i, j, w, true
		case !open:
			rest, restWidth, err := r.breakWord(word, width, emit)
			if err != nil {
				return err
			}
			start, end, lineWidth, open, wrapped = j-len(rest), j, restWidth, true, true
		case lineWidth+space+w <= width:
			end, lineWidth = j, lineWidth+space+w
		default:
			if err := emit(line[start:end]); err != nil {
				return err
			}
			open, wrapped = false, true
			continue // word starts the next line
		}
		i = j + 1
	}
	if open {
		return emit(line[start:end])
	}
	return nil
}

// breakWord emits the leading pieces of word that fill whole lines of width
// and returns the piece left over, which starts the next line, with its
// width. Every piece has at least one character, so a width narrower than
// one character still makes progress.
func (r *renderer) breakWord(word string, width float64, emit func(string) error) (string, float64, error) {
	start, w := 0, 0.0
	for i, c := range word {
		cw, err := r.measure(string(c))
		if err != nil {
			return "", 0, err
		}
		if w+cw > width && i > start {
			if err := emit(word[start:i]); err != nil {
				return "", 0, err
			}
			start, w = i, 0
		}
		w += cw
	}
	return word[start:], w, nil
}

// measure is the width of s in the current style, in points.
//
// gopdf's width of a string is the sum of its characters' widths (no
// kerning is asked for), so the width of each character is asked of gopdf
// once per style and summed here: MeasureTextWidth allocates on every call,
// and wrapping measures every word.
func (r *renderer) measure(s string) (float64, error) {
	w := 0.0
	for _, c := range s {
		k := widthKey{r.cur.family, r.cur.size, c}
		cw, ok := r.widths[k]
		if !ok {
			var err error
			if cw, err = r.gp.MeasureTextWidth(string(c)); err != nil {
				return 0, err
			}
			r.widths[k] = cw
		}
		w += cw
	}
	return w, nil
}

// widthKey is a character in a style.
type widthKey struct {
	family string
	size   float64
	c      rune
}
