package export

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// markdownSeeds are the fuzz corpus's seeds: every construct, and
// shapes that stress the layout.
var markdownSeeds = []string{
	"# H1\n## H2\n### H3\n#### H4\n##### H5\n###### H6\n\nText **bold** *italic* ***both*** `code`.",
	"- a\n  - b\n    - c\n      - d\n        - e\n          - f\n            - g\n              - h\n                - i",
	"1. one\n2. two\n   1. nested\n\n999999999. big number",
	"| a | b |\n|---|--:|\n| 1 | 2 |\n| " + strings.Repeat("x", 300) + " | y |",
	strings.Repeat("| c ", 40) + "|\n" + strings.Repeat("|---", 40) + "|\n" + strings.Repeat("| v ", 40) + "|",
	"> quote\n>> nested\n>>> deeper\n\n" + strings.Repeat(">", 60) + " deep",
	"```\n" + strings.Repeat("code ", 200) + "\n\tindented\n```",
	"<script>alert(1)</script>\n\n<div>\n*not* emphasis\n</div>",
	"[link](https://example.com/" + strings.Repeat("a", 400) + ") <https://x.org> ![img](p.png \"t\")",
	"特許 比亚迪股份有限公司 삼성전자 🚀 \u200b\u0000\t\r\n\u2028",
	strings.Repeat("W", 2000),
	strings.Repeat("- ", 200) + "x",
	strings.Repeat("*", 500) + "a" + strings.Repeat("_", 500),
	"---\n***\n___",
	"Setext\n======\n\nOther\n------",
	"    indented code\n\n\ttab code",
	"a  \nhard break\\\nbackslash break",
	"- [ ] task\n- [x] done",
	"state-of-the-art co\u2010op non\u2011stop elec\u00ADtro\u00ADlyte \u00AD\u00AD x\u00AD " + strings.Repeat("long\u00AD", 300),
	"# H1\n## H2\n### H3\n| a | b |\n|---|---|\n| " + strings.Repeat("cell ", 400) + " | y |\n\n# Last",
	"## Code\n```\n" + strings.Repeat("line\n", 120) + "```\n- # heading item\n-\n> # quoted heading",
	"",
}

// FuzzMarkdownPDF: any Markdown renders without an error or a panic, and
// every character is drawn inside the margins.
func FuzzMarkdownPDF(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	fonts := mustFonts(f, true)
	f.Fuzz(func(t *testing.T, md string) {
		if len(md) > 64<<10 {
			t.Skip("longer than an analysis gets")
		}
		r := newRenderer(slog.New(slog.DiscardHandler), fonts)
		if err := r.newPage(); err != nil {
			t.Fatal(err)
		}
		if err := r.markdown(md, marginLeft, contentWidth); err != nil {
			t.Fatalf("markdown(%q): %v", md, err)
		}
		assertDrawnInside(t, r)
		if _, err := r.gp.WriteTo(io.Discard); err != nil {
			t.Fatalf("write: %v", err)
		}
	})
}

// assertDrawnInside checks that all the text r drew is inside the margins
// (the footer below the bottom one).
func assertDrawnInside(t *testing.T, r *renderer) {
	t.Helper()
	const slack = 0.01
	d := r.drawn
	if d.empty {
		return
	}
	if d.minX < marginLeft-slack || d.maxX > pageWidth-marginRight+slack || d.minY < marginTop-styleTitle.size || d.maxY > pageHeight {
		t.Errorf("text drawn from (%.2f, %.2f) to (%.2f, %.2f), outside the margins (%.2f to %.2f across)",
			d.minX, d.minY, d.maxX, d.maxY, marginLeft, pageWidth-marginRight)
	}
}

// TestMarkdownSeedsInside runs the fuzz seeds as a test, with and without
// the fallback font, and checks that each draws something.
func TestMarkdownSeedsInside(t *testing.T) {
	for _, cjk := range []bool{false, true} {
		fonts := mustFonts(t, cjk)
		for _, s := range markdownSeeds {
			r := newRenderer(slog.New(slog.DiscardHandler), fonts)
			if err := r.newPage(); err != nil {
				t.Fatal(err)
			}
			footer := r.drawn
			if err := r.markdown(s, marginLeft, contentWidth); err != nil {
				t.Fatalf("markdown(%.40q): %v", s, err)
			}
			assertDrawnInside(t, r)
			if s != "" && r.drawn == footer && r.y == marginTop && r.page == 1 {
				t.Errorf("markdown(%.40q) drew nothing", s)
			}
		}
	}
}
