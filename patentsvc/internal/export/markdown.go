package export

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown styles. Headings are bold, stepped down from the section
// heading's 13 pt; code is set smaller, since Go Mono is wide.
var (
	styleHeadings = [...]style{
		{faceBold, 13, 18, 0},
		{faceBold, 12, 17, 0},
		{faceBold, 11, 15.5, 0},
		{faceBold, 10, 14, 0},
		{faceBoldItalic, 10, 14, 0},
		{faceBoldItalic, 10, 14, 70},
	}
	styleCode    = style{faceMono, 8.5, 11.5, 0}
	styleHTML    = style{faceMono, 8.5, 11.5, 60}
	styleCell    = style{faceRegular, 9, 12.5, 0}
	styleURLGrey = uint8(90)
)

// Layout constants of the Markdown blocks, in points.
const (
	blockGap      = 6.0  // between paragraphs and other blocks
	headingGap    = 10.0 // above a heading
	afterHeading  = 3.0  // between a heading and what follows
	tightItemGap  = 2.0  // between the items of a tight list
	looseItemGap  = 5.0  // between the items of a loose list
	bulletHang    = 14.0 // a bullet list's hanging indent
	markerGap     = 5.0  // between a list marker and the item's text
	quoteIndent   = 12.0
	codePad       = 4.0 // around the text of a code block, inside its band
	cellPad       = 4.0 // left and right of a table cell's text
	cellPadV      = 2.0 // above and below it
	minColumn     = 30.0
	maxIndentFrac = 0.5 // nesting never indents past this part of the width
)

var bullets = [...]string{"•", "◦", "▪"}

// block is where a block is laid out: its left edge and width, and how
// deep in lists it is.
type block struct {
	x, width float64
	depth    int
}

// indent is b moved right by dx, its right edge kept; past half the
// content width nesting no longer indents, so that any depth of lists and
// quotes leaves room for text.
func (b block) indent(dx float64) block {
	x := min(b.x+dx, marginLeft+maxIndentFrac*contentWidth)
	x = max(x, b.x)
	return block{x: x, width: b.width - (x - b.x), depth: b.depth}
}

// markdown draws src, an analysis's Markdown (CommonMark and GFM tables),
// at x within width.
func (r *renderer) markdown(src string, x, width float64) error {
	source, doc := parseMarkdown(src)
	return r.blocks(source, doc, block{x: x, width: width})
}

// parseMarkdown parses src as CommonMark with GFM tables: the source the
// nodes' segments point into, and the document node.
func parseMarkdown(src string) ([]byte, ast.Node) {
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	return source, md.Parser().Parse(text.NewReader(source))
}

// blocks draws the children of parent one after another.
func (r *renderer) blocks(src []byte, parent ast.Node, b block) error {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if prev := n.PreviousSibling(); prev != nil {
			switch {
			case n.Kind() == ast.KindHeading:
				r.space(headingGap)
			case prev.Kind() == ast.KindHeading:
				r.space(afterHeading)
			case parent.Kind() == ast.KindListItem && isTight(parent):
				r.space(tightItemGap)
			default:
				r.space(blockGap)
			}
		}
		if err := r.block(src, n, b); err != nil {
			return err
		}
	}
	return nil
}

func isTight(item ast.Node) bool {
	l, ok := item.Parent().(*ast.List)
	return ok && l.IsTight
}

// block draws one block node.
func (r *renderer) block(src []byte, n ast.Node, b block) error {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.flow(r.inlines(src, n, styleBody, nil), b.x, b.width, styleBody, nil)
	case *ast.Heading:
		// Keep a heading with the first two lines under it.
		st := headingStyle(n)
		spans := r.inlines(src, n, st, nil)
		h, err := r.headingHeight(src, n, spans, b, pageRoom)
		if err != nil {
			return err
		}
		if err := r.keep(h); err != nil {
			return err
		}
		return r.flow(spans, b.x, b.width, st, nil)
	case *ast.ThematicBreak:
		if r.y+blockGap > contentEnd {
			return r.newPage()
		}
		r.drawBars(r.y, blockGap)
		r.gp.SetLineWidth(0.6)
		r.gp.SetStrokeColor(170, 170, 170)
		r.gp.Line(b.x, r.y+blockGap/2, b.x+b.width, r.y+blockGap/2)
		r.y += blockGap
		return nil
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		return r.codeBlock(src, n, b)
	case *ast.HTMLBlock:
		// Shown as written: the report interprets no HTML.
		segs := n.Lines()
		lines := make([]string, 0, segs.Len()+1)
		for i := range segs.Len() {
			lines = append(lines, lineValue(src, segs.At(i)))
		}
		if n.HasClosure() {
			lines = append(lines, lineValue(src, n.ClosureLine))
		}
		return r.literal(lines, b, styleHTML, nil)
	case *ast.Blockquote:
		r.bars = append(r.bars, b.x+2)
		defer func() { r.bars = r.bars[:len(r.bars)-1] }()
		return r.blocks(src, n, b.indent(quoteIndent))
	case *ast.List:
		return r.list(src, n, b)
	case *east.Table:
		return r.table(src, n, b)
	default:
		// A block kind this renderer does not know: its text as written,
		// or its children.
		if segs := n.Lines(); segs != nil && segs.Len() > 0 && n.FirstChild() == nil {
			lines := make([]string, 0, segs.Len())
			for i := range segs.Len() {
				lines = append(lines, lineValue(src, segs.At(i)))
			}
			return r.literal(lines, b, styleBody, nil)
		}
		if n.Type() == ast.TypeBlock && n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeInline {
			return r.flow(r.inlines(src, n, styleBody, nil), b.x, b.width, styleBody, nil)
		}
		return r.blocks(src, n, b)
	}
}

// headingStyle is the style of a heading of h's level.
func headingStyle(h *ast.Heading) style {
	return styleHeadings[min(max(h.Level, 1), len(styleHeadings))-1]
}

// pageRoom is the height a page has for text: what a heading keeps with
// it is measured no further.
const pageRoom = contentEnd - marginTop

// headingHeight is the height heading h (its spans) takes with the first
// two lines of what follows it in its parent, gap included: what keep
// needs to leave no heading at the foot of a page. A heading that ends
// its parent keeps its own lines only. Measuring stops once the height is
// past limit (a chain of headings would otherwise be measured again for
// each of them).
func (r *renderer) headingHeight(src []byte, h *ast.Heading, spans []span, b block, limit float64) (float64, error) {
	lines, err := r.lines(spans, b.width)
	if err != nil {
		return 0, err
	}
	height := float64(len(lines)) * headingStyle(h).lead
	if next := h.NextSibling(); next != nil && height <= limit {
		after, _, err := r.leadHeight(src, next, b, 2, limit-height)
		if err != nil {
			return 0, err
		}
		height += after
	}
	return height, nil
}

// leadHeight measures the first want lines of text of the blocks from n
// on (n and its next siblings), as blocks would draw them in b: the height
// they take, with the gaps above each block (the gap above n included,
// see blocks), and how many lines that is, fewer than want when the
// blocks run out. A heading met on the way ends the count with the two
// lines it keeps itself (see blockLead). Lists and quotes are measured
// through their first items; a table's rows count as lines. Measuring
// stops once the height is past limit.
func (r *renderer) leadHeight(src []byte, n ast.Node, b block, want int, limit float64) (float64, int, error) {
	height, got := 0.0, 0
	for ; n != nil && got < want && height <= limit; n = n.NextSibling() {
		if prev := n.PreviousSibling(); prev != nil {
			switch {
			case n.Kind() == ast.KindHeading:
				height += headingGap
			case prev.Kind() == ast.KindHeading:
				height += afterHeading
			case n.Parent() != nil && n.Parent().Kind() == ast.KindListItem && isTight(n.Parent()):
				height += tightItemGap
			default:
				height += blockGap
			}
		}
		h, k, err := r.blockLead(src, n, b, want-got, limit-height)
		if err != nil {
			return 0, 0, err
		}
		height, got = height+h, got+k
	}
	return height, got, nil
}

// blockLead measures the first want lines of block n (see leadHeight). A
// heading counts as want lines, measured as its own lines and the two
// lines after it, which it keeps whatever came before.
func (r *renderer) blockLead(src []byte, n ast.Node, b block, want int, limit float64) (float64, int, error) {
	lines := func(st style, spans []span) (float64, int, error) {
		ls, err := r.lines(spans, b.width)
		if err != nil {
			return 0, 0, err
		}
		k := min(len(ls), want)
		return float64(k) * st.lead, k, nil
	}
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return lines(styleBody, r.inlines(src, n, styleBody, nil))
	case *ast.Heading:
		st := headingStyle(n)
		h, err := r.headingHeight(src, n, r.inlines(src, n, st, nil), b, limit)
		return h, want, err
	case *ast.ThematicBreak:
		return blockGap, 0, nil
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		k := min(n.Lines().Len(), want)
		return codePad + float64(k)*styleCode.lead, k, nil
	case *ast.HTMLBlock:
		k := min(max(n.Lines().Len(), 1), want)
		return float64(k) * styleHTML.lead, k, nil
	case *ast.Blockquote:
		return r.leadHeight(src, n.FirstChild(), b.indent(quoteIndent), want, limit)
	case *ast.List:
		inner := b.indent(bulletHang)
		height, got := 0.0, 0
		for item := n.FirstChild(); item != nil && got < want && height <= limit; item = item.NextSibling() {
			switch {
			case item.PreviousSibling() == nil:
			case n.IsTight:
				height += tightItemGap
			default:
				height += looseItemGap
			}
			if item.FirstChild() == nil { // an empty item: its marker's line
				height, got = height+styleBody.lead, got+1
				continue
			}
			h, k, err := r.leadHeight(src, item.FirstChild(), inner, want-got, limit-height)
			if err != nil {
				return 0, 0, err
			}
			height, got = height+h, got+k
		}
		return height, got, nil
	case *east.Table:
		rows, ncols, err := r.tableRows(src, n)
		if err != nil || ncols == 0 || len(rows) == 0 {
			return 0, 0, err
		}
		if float64(ncols)*minColumn > b.width {
			k := min(ncols, want) // "header: value" lines
			return float64(k) * styleBody.lead, k, nil
		}
		g, err := r.tableGeometry(rows, ncols, b, n.Alignments)
		if err != nil {
			return 0, 0, err
		}
		k := min(len(rows), want)
		laid, err := r.layCells(rows[:k], g)
		if err != nil {
			return 0, 0, err
		}
		height := 0.0
		for _, l := range laid {
			height += l.height
		}
		return height, k, nil
	default:
		return float64(want) * styleBody.lead, want, nil
	}
}

// lineValue is a source line without its line break.
func lineValue(src []byte, s text.Segment) string {
	return strings.TrimRight(string(s.Value(src)), "\r\n")
}

// codeBlock draws a code block's lines as written, in the monospace face
// on a light grey band, long lines wrapped.
func (r *renderer) codeBlock(src []byte, n ast.Node, b block) error {
	segs := n.Lines()
	lines := make([]string, 0, segs.Len())
	for i := range segs.Len() {
		lines = append(lines, lineValue(src, segs.At(i)))
	}
	bg := &band{b.x, b.width}
	if r.y+codePad+styleCode.lead <= contentEnd {
		r.gp.SetFillColor(242, 242, 242)
		r.gp.RectFromUpperLeftWithStyle(bg.x, r.y, bg.width, codePad, "F")
		r.drawBars(r.y, codePad)
		r.y += codePad
	}
	if err := r.literal(lines, block{x: b.x + codePad, width: b.width - 2*codePad}, styleCode, bg); err != nil {
		return err
	}
	if r.y+codePad <= contentEnd {
		r.gp.SetFillColor(242, 242, 242)
		r.gp.RectFromUpperLeftWithStyle(bg.x, r.y, bg.width, codePad, "F")
		r.drawBars(r.y, codePad)
		r.y += codePad
	}
	return nil
}

// literal draws lines as written in st, each wrapped within b.
func (r *renderer) literal(lines []string, b block, st style, bg *band) error {
	spans := make([]span, 0, 2*len(lines))
	for i, l := range lines {
		if i > 0 {
			spans = append(spans, span{brk: true})
		}
		spans = append(spans, st.span(l))
	}
	return r.flow(spans, b.x, b.width, st, bg)
}

// list draws a bullet or numbered list: each item's marker hangs left of
// its text, and nested lists are indented further.
func (r *renderer) list(src []byte, n *ast.List, b block) error {
	hang := bulletHang
	num := n.Start
	if n.IsOrdered() {
		last := n.Start + n.ChildCount() - 1
		w, err := r.measure(styleBody.face, styleBody.size, ordinal(max(last, n.Start), n.Marker))
		if err != nil {
			return err
		}
		hang = max(hang, w+markerGap+2)
	}
	inner := b.indent(hang)
	inner.depth = b.depth + 1
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if item.PreviousSibling() != nil {
			if n.IsTight {
				r.space(tightItemGap)
			} else {
				r.space(looseItemGap)
			}
		}
		m := marker{text: bullets[min(b.depth, len(bullets)-1)], right: inner.x - markerGap, left: b.x}
		if n.IsOrdered() {
			m.text = ordinal(num, n.Marker)
			num++
		}
		r.markers = append(r.markers, m)
		if err := r.blocks(src, item, inner); err != nil {
			return err
		}
		if len(r.markers) > 0 {
			// An empty item: its marker on a line of its own.
			if _, err := r.startLine(styleBody.lead, styleBody.size, nil); err != nil {
				return err
			}
			r.y += styleBody.lead
		}
	}
	return nil
}

func ordinal(n int, delim byte) string {
	return fmt.Sprintf("%d%c", n, delim)
}

// inlines appends the spans of parent's inline children, in style st, to
// out. Text is shown as written but for the Markdown: backslash escapes
// are resolved; entity references, like all HTML, are not.
func (r *renderer) inlines(src []byte, parent ast.Node, st style, out []span) []span {
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			out = append(out, st.span(unescape(v)))
			switch {
			case c.HardLineBreak():
				out = append(out, span{brk: true})
			case c.SoftLineBreak() && !joinsWide(src, v, c.NextSibling()):
				out = append(out, st.span(" "))
			}
		case *ast.String:
			out = append(out, st.span(string(c.Value)))
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if t, ok := t.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
					if t.SoftLineBreak() {
						b.WriteByte(' ')
					}
				}
			}
			s := styleCode.span(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(b.String()))
			s.size, s.grey, s.code = st.size*0.9, st.grey, true
			out = append(out, s)
		case *ast.Emphasis:
			inner := st
			if c.Level >= 2 {
				inner.face = inner.face.emboldened()
			} else {
				inner.face = inner.face.italic(true)
			}
			out = r.inlines(src, c, inner, out)
		case *ast.Link:
			start := len(out)
			out = r.inlines(src, c, st, out)
			out = withURL(out, start, string(c.Destination), st)
		case *ast.AutoLink:
			out = append(out, st.span(string(c.Label(src))))
		case *ast.Image:
			alt := st
			alt.face = alt.face.italic(true)
			start := len(out)
			out = append(out, alt.span("[image: "))
			out = r.inlines(src, c, alt, out)
			out = append(out, alt.span("]"))
			out = withURL(out, start, string(c.Destination), st)
		case *ast.RawHTML:
			// Shown as written: the report interprets no HTML.
			var b strings.Builder
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				b.Write(seg.Value(src))
			}
			out = append(out, st.span(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(b.String())))
		default:
			out = r.inlines(src, c, st, out)
		}
	}
	return out
}

// withURL appends " (url)", in grey, to the spans of a link (out[start:]),
// unless the link's text is the URL already.
func withURL(out []span, start int, url string, st style) []span {
	if url == "" {
		return out
	}
	var shown strings.Builder
	for _, s := range out[start:] {
		shown.WriteString(s.text)
	}
	if t := strings.TrimSpace(shown.String()); t == url || "mailto:"+t == url {
		return out
	}
	grey := st
	grey.grey = max(st.grey, styleURLGrey)
	return append(out, grey.span(" ("+url+")"))
}

// joinsWide reports whether a soft line break between text v and the text
// node after it joins two CJK characters, which take no space between
// them.
func joinsWide(src, v []byte, next ast.Node) bool {
	t, ok := next.(*ast.Text)
	if !ok || len(v) == 0 {
		return false
	}
	a, _ := utf8.DecodeLastRune(v)
	b, _ := utf8.DecodeRune(t.Segment.Value(src))
	return wide(a) && wide(b)
}

// unescape resolves Markdown's backslash escapes (a backslash before
// ASCII punctuation) in v.
func unescape(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v)
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && isASCIIPunct(v[i+1]) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func isASCIIPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}
