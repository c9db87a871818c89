package export

import (
	"strings"
	"testing"
)

// TestLeadHeightBounded: measuring what a heading keeps stops a page
// down, so that a chain of headings (a hostile analysis of 16,000 "# a"
// lines) is measured in time linear in its length, not quadratic.
func TestLeadHeightBounded(t *testing.T) {
	r := mustRenderer(t, mustFonts(t, false))
	src, doc := parseMarkdown(strings.Repeat("# a\n", 16000))
	b := block{x: marginLeft, width: contentWidth}
	h, _, err := r.leadHeight(src, doc.FirstChild(), b, 2, pageRoom)
	if err != nil {
		t.Fatal(err)
	}
	// One heading and the gap above it past the limit, at most.
	if most := pageRoom + styleHeadings[0].lead + headingGap; h <= 0 || h > most {
		t.Errorf("leadHeight of 16,000 headings = %.1f, want at most %.1f (a page and a heading)", h, most)
	}
	h, lines, err := r.leadHeight(src, doc.FirstChild(), b, 2, 50)
	if err != nil {
		t.Fatal(err)
	}
	if h > 50+styleHeadings[0].lead+headingGap || lines != 2 {
		t.Errorf("leadHeight with a limit of 50 = %.1f, %d lines", h, lines)
	}
}

// TestLeadHeight: what a heading keeps, measured as blocks draws it.
func TestLeadHeight(t *testing.T) {
	r := mustRenderer(t, mustFonts(t, false))
	b := block{x: marginLeft, width: contentWidth}
	for _, tt := range []struct {
		name  string
		md    string
		want  float64
		lines int
	}{
		{"paragraph", "one line\\\ntwo\\\nthree", 2 * styleBody.lead, 2},
		{"short paragraph, then a list", "one line\n\n- item", styleBody.lead + blockGap + styleBody.lead, 2},
		{"code", "```\na\nb\nc\n```", codePad + 2*styleCode.lead, 2},
		{"heading", "## H\n\ntext\\\nmore", styleHeadings[1].lead + afterHeading + 2*styleBody.lead, 2},
		{"tight list", "- a\n- b\n- c", styleBody.lead + tightItemGap + styleBody.lead, 2},
		{"nothing after", "", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, doc := parseMarkdown(tt.md)
			h, lines, err := r.leadHeight(src, doc.FirstChild(), b, 2, pageRoom)
			if err != nil {
				t.Fatal(err)
			}
			if h != tt.want || lines != tt.lines {
				t.Errorf("leadHeight(%q) = %.2f, %d lines; want %.2f, %d", tt.md, h, lines, tt.want, tt.lines)
			}
		})
	}
}
