package export

import (
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/image/font/gofont/goregular"
)

// TestWrap checks the line breaking on its own: every line fits the
// width in the font it is drawn in, and no character is lost or added
// (other than tabs turned into spaces and the spaces a break replaces).
func TestWrap(t *testing.T) {
	r, err := newRenderer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.newPage(); err != nil {
		t.Fatal(err)
	}
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := r.use(tt.style); err != nil {
				t.Fatal(err)
			}
			var lines []string
			err := r.eachLine(tt.text, tt.width, func(l string) error {
				lines = append(lines, l)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.lines != 0 && len(lines) != tt.lines {
				t.Errorf("%d lines %q, want %d", len(lines), lines, tt.lines)
			}
			for _, l := range lines {
				w, err := r.measure(l)
				if err != nil {
					t.Fatal(err)
				}
				// One character may overflow a width narrower than itself.
				if w > tt.width+0.01 && len([]rune(l)) > 1 {
					t.Errorf("line %q is %.2f wide, more than %.2f", l, w, tt.width)
				}
			}
			squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
			want := squeeze(r.glyphs.clean(tt.style.family, strings.NewReplacer("\r", "", "\n", "", "\u2028", "").Replace(tt.text)))
			if got := squeeze(strings.Join(lines, "")); got != want {
				t.Errorf("lines %q lose or add characters:\n got %q\nwant %q", lines, got, want)
			}
		})
	}
}

func TestClean(t *testing.T) {
	g, err := newGlyphs(slog.New(slog.DiscardHandler), []font{{familyRegular, goregular.TTF}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"plain ASCII <&>\"'", "plain ASCII <&>\"'"},
		{"a\tb", "a    b"},
		{"Ünïcödé — “quoted” €5 Ж λ", "Ünïcödé — “quoted” €5 Ж λ"},
		{"特許", "\uFFFD\uFFFD"},
		{"ok 👍🏽 ❤️ ok", "ok \uFFFD\uFFFD \uFFFD ok"}, // skin tone is visible; VS16 is dropped
		{"zero\u200bwidth\u200djoin\ufeff", "zerowidthjoin"},
		{"nul\x00bell\x07", "nul\uFFFDbell\uFFFD"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	} {
		if got := g.clean(familyRegular, tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
