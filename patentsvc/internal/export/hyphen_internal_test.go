package export

import (
	"math"
	"strings"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// TestWithTextHyphen: the patched Go fonts map U+002D to the glyph of
// U+00AD and every other character as before, and still parse.
func TestWithTextHyphen(t *testing.T) {
	for name, ttf := range map[string][]byte{"regular": goregular.TTF, "bold": gobold.TTF, "italic": goitalic.TTF, "bold italic": gobolditalic.TTF} {
		t.Run(name, func(t *testing.T) {
			patched, err := withTextHyphen(ttf)
			if err != nil {
				t.Fatal(err)
			}
			before, err := sfnt.Parse(ttf)
			if err != nil {
				t.Fatal(err)
			}
			after, err := sfnt.Parse(patched)
			if err != nil {
				t.Fatalf("the patched font does not parse: %v", err)
			}
			var buf sfnt.Buffer
			soft, _ := before.GlyphIndex(&buf, 0x00AD)
			minus, _ := before.GlyphIndex(&buf, '-')
			if soft == 0 || soft == minus {
				t.Fatalf("U+00AD is glyph %d, '-' glyph %d: nothing to patch", soft, minus)
			}
			changed := 0
			for c := rune(0); c <= 0xFFFF; c++ {
				want, _ := before.GlyphIndex(&buf, c)
				if c == '-' {
					want = soft
				}
				got, _ := after.GlyphIndex(&buf, c)
				if got != want {
					changed++
					if changed < 5 {
						t.Errorf("U+%04X: glyph %d, want %d", c, got, want)
					}
				}
			}
			if changed > 0 {
				t.Errorf("%d characters map to another glyph than they should", changed)
			}
			if before.NumGlyphs() != after.NumGlyphs() {
				t.Errorf("%d glyphs, want %d", after.NumGlyphs(), before.NumGlyphs())
			}
			if _, err := withTextHyphen(patched[:40]); err == nil {
				t.Errorf("a cut font is patched without an error")
			}
		})
	}
}

// TestHyphenWidth: "-" is drawn with the text hyphen (682 units of 2048
// in Go Regular, not the 1196 of its minus-like hyphen-minus), in every
// proportional face; Go Mono keeps its own.
func TestHyphenWidth(t *testing.T) {
	r := mustRenderer(t, mustFonts(t, false))
	for _, tt := range []struct {
		face  face
		units float64
	}{
		{faceRegular, 682},
		{faceMono, 1229},
	} {
		w, err := r.charWidth(tt.face.family(), 10, '-')
		if err != nil {
			t.Fatal(err)
		}
		if want := 10 * tt.units / 2048; math.Abs(w-want) > 0.02 {
			t.Errorf("%s: '-' is %.2f pt wide at 10 pt, want %.2f", tt.face.family(), w, want)
		}
	}
	for _, f := range []face{faceBold, faceItalic, faceBoldItalic} {
		hyphen, err := r.charWidth(f.family(), 10, '-')
		if err != nil {
			t.Fatal(err)
		}
		plus, err := r.charWidth(f.family(), 10, '+')
		if err != nil {
			t.Fatal(err)
		}
		if hyphen > 0.7*plus {
			t.Errorf("%s: '-' is %.2f pt wide, '+' %.2f: still the minus-like glyph", f.family(), hyphen, plus)
		}
	}
}

// TestSoftHyphen: a soft hyphen is not drawn, unless a line breaks there,
// where it is drawn as "-"; words are not broken at hard hyphens.
func TestSoftHyphen(t *testing.T) {
	r := mustRenderer(t, mustFonts(t, false))
	const text = "the elec\u00ADtro\u00ADlyte layer"
	lines, err := r.lines(plainSpans(styleBody, text), contentWidth)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(lines); len(got) != 1 || got[0] != "the electrolyte layer" {
		t.Errorf("wide: lines %q, want [\"the electrolyte layer\"]", got)
	}
	// Room for "the electro-" but not for "the electrolyte".
	w, err := r.measure(styleBody.face, styleBody.size, "the electro-")
	if err != nil {
		t.Fatal(err)
	}
	lines, err = r.lines(plainSpans(styleBody, text), w+1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(lines), "|"); got != "the electro-|lyte layer" {
		t.Errorf("narrow: lines %q, want \"the electro-|lyte layer\"", got)
	}
	for _, l := range lines {
		if l.width > w+1 {
			t.Errorf("line %q is %.2f wide, more than %.2f", l.text(), l.width, w+1)
		}
	}
	// Hard hyphens are no place to break: a hyphenated word that fits a
	// line goes to the next one whole.
	w, err = r.measure(styleBody.face, styleBody.size, "state-of-the-art")
	if err != nil {
		t.Fatal(err)
	}
	lines, err = r.lines(plainSpans(styleBody, "a state-of-the-art cell"), w+1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(lines), "|"); got != "a|state-of-the-art|cell" {
		t.Errorf("hard hyphens: lines %q", got)
	}
	// Soft hyphens are never measured: copying the text gives no U+00AD.
	if _, ok := r.widthTable(faceRegular.family(), styleBody.size)[softHyphen]; ok {
		t.Errorf("U+00AD was measured with gopdf")
	}
}
