package export

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testFont is a subset of the CJK fallback font the image ships, with the
// characters the tests draw (testdata/fonts/README.md).
var testFont = filepath.Join("testdata", "fonts", "DroidSansFallback-subset.ttf")

// mustFonts returns the Go fonts, with the test CJK font as the fallback
// when cjk is true.
func mustFonts(tb testing.TB, cjk bool) *Fonts {
	tb.Helper()
	var fallback []byte
	if cjk {
		var err error
		if fallback, err = os.ReadFile(testFont); err != nil {
			tb.Fatal(err)
		}
	}
	f, err := NewFonts(fallback, nil)
	if err != nil {
		tb.Fatalf("NewFonts: %v", err)
	}
	return f
}

// mustRenderer returns a renderer on its first page.
func mustRenderer(tb testing.TB, fonts *Fonts) *renderer {
	tb.Helper()
	r := newRenderer(slog.New(slog.DiscardHandler), fonts)
	if err := r.newPage(); err != nil {
		tb.Fatal(err)
	}
	return r
}

// TestWrap checks the line breaking on its own: every line fits the
// width, and no character is lost or added (other than tabs turned into
// spaces and the spaces a break replaces).
func TestWrap(t *testing.T) {
	for _, cjk := range []bool{false, true} {
		r := mustRenderer(t, mustFonts(t, cjk))
		for _, tt := range []struct {
			name  string
			style style
			width float64
			text  string
			lines int // when not 0, the number of lines wanted
		}{
			{name: "short", style: styleBody, width: contentWidth, text: "One short line.", lines: 1},
			{name: "empty", style: styleBody, width: contentWidth, text: "", lines: 1},
			{name: "own breaks", style: styleBody, width: contentWidth, text: "a\nb\r\nc\rd\u2028e\n\nf", lines: 7},
			{name: "outer breaks dropped", style: styleBody, width: contentWidth, text: "\n\nbody\n\n", lines: 1},
			{name: "prose", style: styleBody, width: contentWidth, text: strings.Repeat("lorem ipsum dolor sit amet ", 200)},
			{name: "url", style: styleBody, width: contentWidth, text: "see https://example.com/" + strings.Repeat("x/y?z=1&", 100) + " then"},
			{name: "one long word", style: styleTitle, width: contentWidth, text: strings.Repeat("W", 500)},
			{name: "narrow", style: styleBody, width: 3, text: "abc def"},
			{name: "indent and runs of spaces", style: styleBody, width: 120, text: "    indented     words   with  gaps that wrap around several times"},
			{name: "tabs", style: styleMeta, width: contentWidth, text: "\tcol1\tcol2", lines: 1},
			{name: "unicode", style: styleBody, width: 100, text: "Ünïcödé Ελληνικά кириллица 特許特許特許特許特許特許特許特許特許特許特許特許 🚀🚀🚀"},
			{name: "cjk sentence", style: styleBody, width: 90, text: "比亚迪股份有限公司的锂离子电池（正极材料）。华为技术有限公司、トヨタ自動車株式会社。"},
			{name: "mono", style: styleCode, width: 200, text: "func main() {\n\tfmt.Println(\"特許\")\n}"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				lines, err := r.lines(plainSpans(tt.style, tt.text), tt.width)
				if err != nil {
					t.Fatal(err)
				}
				if tt.lines != 0 && len(lines) != tt.lines {
					t.Errorf("%d lines %q, want %d", len(lines), texts(lines), tt.lines)
				}
				for _, l := range lines {
					// One character may overflow a width narrower than itself.
					if l.width > tt.width+0.01 && len([]rune(l.text())) > 1 {
						t.Errorf("line %q is %.2f wide, more than %.2f", l.text(), l.width, tt.width)
					}
					sum := 0.0
					for _, p := range l.pieces {
						w, err := r.measure(tt.style.face, p.size, p.text)
						if err != nil {
							t.Fatal(err)
						}
						sum += w
					}
					if d := sum - l.width; d > 0.01 || d < -0.01 {
						t.Errorf("line %q: width %.2f, its pieces measure %.2f", l.text(), l.width, sum)
					}
				}
				squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
				var want strings.Builder
				for _, rn := range r.glyphs.runs(tt.style.face, strings.NewReplacer("\r", "", "\n", "", "\u2028", "").Replace(tt.text)) {
					want.WriteString(rn.text)
				}
				if got := squeeze(strings.Join(texts(lines), "")); got != squeeze(want.String()) {
					t.Errorf("lines %q lose or add characters:\n got %q\nwant %q", texts(lines), got, squeeze(want.String()))
				}
			})
		}
	}
}

func texts(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text()
	}
	return out
}

// TestWrapCJK: CJK text breaks between characters, not only at spaces,
// and never before closing punctuation.
func TestWrapCJK(t *testing.T) {
	r := mustRenderer(t, mustFonts(t, true))
	text := "比亚迪股份有限公司的锂离子电池（正极材料）。"
	w, err := r.measure(faceRegular, styleBody.size, "比亚迪股份有限")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := r.lines(plainSpans(styleBody, "Assignee: "+text), w+60)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 2 {
		t.Fatalf("lines %q, want the CJK text wrapped", texts(lines))
	}
	// The first line is filled with CJK characters after "Assignee:",
	// rather than broken at the space.
	if first := lines[0].text(); !strings.HasPrefix(first, "Assignee: 比") {
		t.Errorf("first line %q, want CJK characters after the label", first)
	}
	for _, l := range lines[1:] {
		if s := l.text(); strings.HasPrefix(s, "。") || strings.HasPrefix(s, "）") {
			t.Errorf("line %q starts with closing punctuation", s)
		}
	}
}

func TestRuns(t *testing.T) {
	plain := newGlyphs(slog.New(slog.DiscardHandler), mustFonts(t, false))
	cjk := newGlyphs(slog.New(slog.DiscardHandler), mustFonts(t, true))
	for _, tt := range []struct {
		in        string
		want      string // the Go fonts alone
		wantCJK   string // with the fallback font
		fallbacks []string
	}{
		{in: "plain ASCII <&>\"'", want: "plain ASCII <&>\"'"},
		{in: "a\tb", want: "a    b"},
		{in: "Ünïcödé — “quoted” €5 Ж λ", want: "Ünïcödé — “quoted” €5 Ж λ"},
		{in: "特許", want: "\uFFFD\uFFFD", wantCJK: "特許", fallbacks: []string{"特許"}},
		{in: "BYD 比亚迪 and 삼성전자 🚀", want: "BYD \uFFFD\uFFFD\uFFFD and \uFFFD\uFFFD\uFFFD\uFFFD \uFFFD",
			wantCJK: "BYD 比亚迪 and 삼성전자 \uFFFD", fallbacks: []string{"比亚迪", "삼성전자"}},
		{in: "ok 👍🏽 ❤️ ok", want: "ok \uFFFD\uFFFD \uFFFD ok"}, // skin tone is visible; VS16 is dropped
		{in: "zero\u200bwidth\u200djoin\ufeff", want: "zerowidthjoin"},
		{in: "nul\x00bell\x07", want: "nul\uFFFDbell\uFFFD"},
		{in: "bad \xff utf8", want: "bad \uFFFD utf8"},
		// Hyphens the Go fonts lack become "-"; a soft hyphen stays for
		// words to break at; a figure dash is an en dash.
		{in: "co\u2010op non\u2011stop elec\u00ADtro 1\u20122", want: "co-op non-stop elec\u00ADtro 1\u20132"},
	} {
		for _, g := range []*glyphs{plain, cjk} {
			want := tt.want
			var fallbacks []string
			if g == cjk && tt.wantCJK != "" {
				want, fallbacks = tt.wantCJK, tt.fallbacks
			}
			var got strings.Builder
			var gotFallbacks []string
			for _, rn := range g.runs(faceRegular, tt.in) {
				got.WriteString(rn.text)
				if rn.family == familyFallback {
					gotFallbacks = append(gotFallbacks, rn.text)
				} else if rn.family != faceRegular.family() {
					t.Errorf("runs(%q): run %q in %s", tt.in, rn.text, rn.family)
				}
			}
			if got.String() != want {
				t.Errorf("runs(%q) (fallback %v) = %q, want %q", tt.in, g == cjk, got.String(), want)
			}
			if strings.Join(gotFallbacks, "|") != strings.Join(fallbacks, "|") {
				t.Errorf("runs(%q) (fallback %v): fallback runs %q, want %q", tt.in, g == cjk, gotFallbacks, fallbacks)
			}
		}
	}
	// Bold text falls back to the fallback's bold, or to its regular
	// when it has no bold.
	font, err := os.ReadFile(testFont)
	if err != nil {
		t.Fatal(err)
	}
	withBold, err := NewFonts(font, font)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		g    *glyphs
		want string
	}{
		{cjk, familyFallback},
		{newGlyphs(slog.New(slog.DiscardHandler), withBold), familyFallbackBold},
	} {
		runs := tt.g.runs(faceBold, "Bold 特許")
		if len(runs) != 2 || runs[1].text != "特許" || runs[1].family != tt.want {
			t.Errorf("bold CJK runs %q, want 特許 in %s", runs, tt.want)
		}
	}
}

func TestFitColumns(t *testing.T) {
	for _, tt := range []struct {
		natural []float64
		avail   float64
		want    []float64
	}{
		{[]float64{10, 20, 30}, 100, []float64{10, 20, 30}},
		{[]float64{10, 200, 300}, 210, []float64{10, 100, 100}},
		{[]float64{50, 60, 400}, 300, []float64{50, 60, 190}},
		{[]float64{500, 500}, 100, []float64{50, 50}},
		{[]float64{0, 500}, 100, []float64{0, 100}},
	} {
		got := fitColumns(tt.natural, tt.avail)
		for i := range got {
			if d := got[i] - tt.want[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("fitColumns(%v, %v) = %v, want %v", tt.natural, tt.avail, got, tt.want)
				break
			}
		}
	}
}

func TestUnescape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`plain`, `plain`},
		{`\*not bold\*`, `*not bold*`},
		{`a \| b`, `a | b`},
		{`back\\slash`, `back\slash`},
		{`not \a escape`, `not \a escape`},
		{`&amp; stays`, `&amp; stays`},
		{`trailing \`, `trailing \`},
	} {
		if got := unescape([]byte(tt.in)); got != tt.want {
			t.Errorf("unescape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
