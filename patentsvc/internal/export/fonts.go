package export

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// face is one of the Go fonts: the typefaces the report is set in.
type face uint8

const (
	faceRegular face = iota
	faceBold
	faceItalic
	faceBoldItalic
	faceMono
	numFaces
)

// Font families registered with gopdf: one per face, then the fallback
// font's regular and bold.
const (
	familyFallback     = "fallback-regular"
	familyFallbackBold = "fallback-bold"
)

var faceFamilies = [numFaces]string{"go-regular", "go-bold", "go-italic", "go-bolditalic", "go-mono"}

// family is the gopdf family of f.
func (f face) family() string { return faceFamilies[f] }

// bold reports whether f is a bold face, whose characters the fallback
// font's bold draws.
func (f face) bold() bool { return f == faceBold || f == faceBoldItalic }

// italic returns f with italics on or off; the monospace face has no
// italic and stays as it is.
func (f face) italic(on bool) face {
	switch {
	case f == faceMono:
		return f
	case on && f == faceRegular:
		return faceItalic
	case on && f == faceBold:
		return faceBoldItalic
	case !on && f == faceItalic:
		return faceRegular
	case !on && f == faceBoldItalic:
		return faceBold
	}
	return f
}

// emboldened returns f in bold; the monospace face has no bold.
func (f face) emboldened() face {
	switch f {
	case faceRegular:
		return faceBold
	case faceItalic:
		return faceBoldItalic
	}
	return f
}

// Fonts are the fonts the PDF report is drawn with: the Go fonts (regular,
// bold, italic, bold italic, mono), embedded in the binary, and optionally
// a fallback font, with a bold, for the characters the Go fonts lack (CJK:
// PDF_FONT_PATH, PDF_FONT_BOLD_PATH). They are parsed once, by NewFonts,
// and shared read-only by every report drawn with them, so a Fonts is safe
// for concurrent use.
type Fonts struct {
	container *gopdf.FontContainer
	parsed    map[string]*sfnt.Font // by family, for the glyph checks
	// The fallback families of regular and bold text; empty without a
	// fallback font. Without a bold, bold text falls back to the regular.
	fallback, fallbackBold string
}

// ErrFontFormat is returned by NewFonts for a font file gopdf cannot
// embed: it embeds TrueType fonts (glyf outlines) only, one per file.
var ErrFontFormat = errors.New("unsupported font format")

// NewFonts parses the Go fonts and, when fallback is not empty, the
// fallback font (the bytes of a TrueType .ttf file) and its bold; an empty
// fallbackBold uses fallback for bold text too.
//
// Returns an error wrapping ErrFontFormat for a TrueType collection
// (.ttc), an OpenType font with CFF outlines (most .otf files) or anything
// else that is not a single TrueType font, and an error naming the font
// ("fallback font", "fallback bold font") when it does not parse.
func NewFonts(fallback, fallbackBold []byte) (*Fonts, error) {
	type font struct {
		name, family string
		data         []byte
	}
	fonts := []font{
		{"Go regular", faceRegular.family(), goregular.TTF},
		{"Go bold", faceBold.family(), gobold.TTF},
		{"Go italic", faceItalic.family(), goitalic.TTF},
		{"Go bold italic", faceBoldItalic.family(), gobolditalic.TTF},
	}
	// The proportional faces draw "-" as a text hyphen (cmap.go); Go Mono
	// keeps its minus-like hyphen, for code.
	for i := range fonts {
		data, err := withTextHyphen(fonts[i].data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fonts[i].name, err)
		}
		fonts[i].data = data
	}
	fonts = append(fonts, font{"Go mono", faceMono.family(), gomono.TTF})
	f := &Fonts{container: &gopdf.FontContainer{}}
	switch {
	case len(fallback) > 0 && len(fallbackBold) > 0:
		fonts = append(fonts, font{"fallback font", familyFallback, fallback}, font{"fallback bold font", familyFallbackBold, fallbackBold})
		f.fallback, f.fallbackBold = familyFallback, familyFallbackBold
	case len(fallback) > 0:
		// One font for both: embedded once.
		fonts = append(fonts, font{"fallback font", familyFallback, fallback})
		f.fallback, f.fallbackBold = familyFallback, familyFallback
	case len(fallbackBold) > 0:
		return nil, errors.New("fallback bold font given without the fallback font")
	}
	f.parsed = make(map[string]*sfnt.Font, len(fonts))
	for _, ft := range fonts {
		if err := checkTrueType(ft.data); err != nil {
			return nil, fmt.Errorf("%s: %w", ft.name, err)
		}
		parsed, err := sfnt.Parse(ft.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ft.name, err)
		}
		f.parsed[ft.family] = parsed
		// The renderer replaces missing characters before gopdf sees the
		// text (glyphs.runs); gopdf's own default would be a blank
		// (research 6.4), so whatever slips through still becomes a
		// visible substitute.
		opt := gopdf.TtfOption{OnGlyphNotFoundSubstitute: func(rune) rune { return substitute }}
		if err := f.container.AddTTFFontDataWithOption(ft.family, ft.data, opt); err != nil {
			return nil, fmt.Errorf("%s: %w", ft.name, err)
		}
	}
	return f, nil
}

// checkTrueType refuses what gopdf v0.33.0 cannot embed before it tries:
// it reads only a single font with TrueType outlines (sfnt version 1.0)
// and writes it as a FontFile2.
func checkTrueType(data []byte) error {
	switch {
	case len(data) < 12:
		return fmt.Errorf("%w: %d bytes is not a font file", ErrFontFormat, len(data))
	case bytes.HasPrefix(data, []byte("ttcf")):
		return fmt.Errorf("%w: a TrueType collection (.ttc) holds several fonts; use a single TrueType font (.ttf), such as DroidSansFallback.ttf of Debian's fonts-droid-fallback", ErrFontFormat)
	case bytes.HasPrefix(data, []byte("OTTO")):
		return fmt.Errorf("%w: an OpenType font with CFF outlines (most .otf files, Noto Sans CJK among them); use a font with TrueType outlines (.ttf), such as DroidSansFallback.ttf of Debian's fonts-droid-fallback", ErrFontFormat)
	case !bytes.HasPrefix(data, []byte{0, 1, 0, 0}):
		return fmt.Errorf("%w: not a TrueType font (.ttf)", ErrFontFormat)
	}
	return nil
}
