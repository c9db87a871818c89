package export

import (
	"math"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// table draws a GFM table as aligned columns of text: a bold header row
// over a rule, thin rules between rows, cells wrapped within their column
// and aligned as the delimiter row says. Columns are as wide as their
// widest cell when the table fits; when it does not, the narrow columns
// keep their width and the others share the rest equally (their text
// wraps, long words cut), so the table always fits the width. A row that
// does not fit on the page starts the next one, under the header again;
// the header row is kept with the first row. A
// table with more columns than fit at 30 points each is drawn as records
// instead: each row a group of "header: value" lines.
func (r *renderer) table(src []byte, t *east.Table, b block) error {
	rows, ncols, err := r.tableRows(src, t)
	if err != nil || ncols == 0 || len(rows) == 0 {
		return err
	}
	if float64(ncols)*minColumn > b.width {
		return r.tableRecords(src, t, b)
	}
	g, err := r.tableGeometry(rows, ncols, b, t.Alignments)
	if err != nil {
		return err
	}
	laid, err := r.layCells(rows, g)
	if err != nil {
		return err
	}
	var header *laidRow
	for i := range laid {
		l := &laid[i]
		fresh := r.y <= marginTop
		// The header row stays with the first row under it.
		need := l.height
		if l.header && i+1 < len(laid) && need+laid[i+1].height <= contentEnd-marginTop {
			need += laid[i+1].height
		}
		if !fresh && r.y+need > contentEnd && need <= contentEnd-marginTop {
			if err := r.newPage(); err != nil {
				return err
			}
			fresh = true
		}
		if fresh && header != nil && !l.header {
			r.tableRule(g, true)
			if err := r.tableRow(*header, g); err != nil {
				return err
			}
		}
		if l.header {
			header = l
			r.tableRule(g, true)
		}
		if err := r.tableRow(*l, g); err != nil {
			return err
		}
	}
	return nil
}

// tableRow is a row of a table, its cells cut into words.
type tableRow struct {
	cells  [][]word
	header bool
}

// laidRow is a row of a table laid out: each cell's lines.
type laidRow struct {
	cells  [][]line
	header bool
	height float64
}

// tableGeom is where a table's columns are.
type tableGeom struct {
	x, width float64   // the table's left edge and width
	colX     []float64 // each column's left edge, before its padding
	widths   []float64 // each column's text width
	aligns   []east.Alignment
}

func (g tableGeom) align(c int) east.Alignment {
	if c < len(g.aligns) {
		return g.aligns[c]
	}
	return east.AlignNone
}

// tableRows cuts the cells of t into words and counts its columns.
func (r *renderer) tableRows(src []byte, t *east.Table) ([]tableRow, int, error) {
	var rows []tableRow
	ncols := len(t.Alignments)
	for n := t.FirstChild(); n != nil; n = n.NextSibling() {
		rw := tableRow{header: n.Kind() == east.KindTableHeader}
		st := styleCell
		if rw.header {
			st.face = faceBold
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			words, err := r.words(r.inlines(src, c, st, nil))
			if err != nil {
				return nil, 0, err
			}
			rw.cells = append(rw.cells, words)
		}
		ncols = max(ncols, len(rw.cells))
		rows = append(rows, rw)
	}
	return rows, ncols, nil
}

// tableGeometry sizes the columns: each as wide as its widest cell
// unwrapped, shrunk by fitColumns when they do not all fit in b.
func (r *renderer) tableGeometry(rows []tableRow, ncols int, b block, aligns []east.Alignment) (tableGeom, error) {
	natural := make([]float64, ncols)
	for _, rw := range rows {
		for c, words := range rw.cells {
			err := r.layout(words, math.Inf(1), func(l line) error {
				natural[c] = max(natural[c], l.width)
				return nil
			})
			if err != nil {
				return tableGeom{}, err
			}
		}
	}
	g := tableGeom{x: b.x, widths: fitColumns(natural, b.width-float64(ncols)*2*cellPad), aligns: aligns}
	g.colX = make([]float64, ncols)
	x := b.x
	for c, w := range g.widths {
		g.colX[c] = x
		x += w + 2*cellPad
	}
	g.width = x - b.x
	return g, nil
}

// layCells lays each cell out within its column.
func (r *renderer) layCells(rows []tableRow, g tableGeom) ([]laidRow, error) {
	laid := make([]laidRow, len(rows))
	for i, rw := range rows {
		l := laidRow{cells: make([][]line, len(g.widths)), header: rw.header}
		n := 1
		for c, words := range rw.cells {
			err := r.layout(words, g.widths[c], func(ln line) error {
				l.cells[c] = append(l.cells[c], ln)
				return nil
			})
			if err != nil {
				return nil, err
			}
			n = max(n, len(l.cells[c]))
		}
		l.height = float64(n)*styleCell.lead + 2*cellPadV
		laid[i] = l
	}
	return laid, nil
}

// tableRow draws one row, line by line (a row taller than the page goes
// on over the break), and the rule under it.
func (r *renderer) tableRow(l laidRow, g tableGeom) error {
	if r.y+cellPadV+styleCell.lead > contentEnd {
		if err := r.newPage(); err != nil {
			return err
		}
	}
	r.space(cellPadV)
	n := 0
	for _, lines := range l.cells {
		n = max(n, len(lines))
	}
	for i := range n {
		baseline, err := r.startLine(styleCell.lead, styleCell.size, nil)
		if err != nil {
			return err
		}
		for c, lines := range l.cells {
			if i >= len(lines) {
				continue
			}
			offset := 0.0
			switch g.align(c) {
			case east.AlignRight:
				offset = g.widths[c] - lines[i].width
			case east.AlignCenter:
				offset = (g.widths[c] - lines[i].width) / 2
			}
			if err := r.draw(g.colX[c]+cellPad+max(offset, 0), baseline, lines[i]); err != nil {
				return err
			}
		}
		r.y += styleCell.lead
	}
	r.y += cellPadV
	r.tableRule(g, l.header)
	return nil
}

// tableRule draws a rule across the table at r.y: heavy under the header.
func (r *renderer) tableRule(g tableGeom, heavy bool) {
	if r.y > contentEnd {
		return
	}
	if heavy {
		r.gp.SetLineWidth(0.8)
		r.gp.SetStrokeColor(110, 110, 110)
	} else {
		r.gp.SetLineWidth(0.3)
		r.gp.SetStrokeColor(190, 190, 190)
	}
	r.gp.Line(g.x, r.y, g.x+g.width, r.y)
}

// fitColumns gives each column its natural width when they all fit in
// avail, and otherwise shares avail out: the columns narrower than an
// equal share keep their width, and the others split what is left equally
// (max-min fairness, computed by water filling).
func fitColumns(natural []float64, avail float64) []float64 {
	widths := make([]float64, len(natural))
	sum := 0.0
	for _, w := range natural {
		sum += w
	}
	if sum <= avail {
		copy(widths, natural)
		return widths
	}
	free := make([]int, len(natural))
	for i := range free {
		free[i] = i
	}
	left := avail
	for changed := true; changed && len(free) > 0; {
		changed = false
		share := left / float64(len(free))
		kept := free[:0]
		for _, i := range free {
			if natural[i] <= share {
				widths[i] = natural[i]
				left -= natural[i]
				changed = true
			} else {
				kept = append(kept, i)
			}
		}
		free = kept
	}
	for _, i := range free {
		widths[i] = left / float64(len(free))
	}
	return widths
}

// tableRecords draws a table too wide for columns as one group of lines
// per row, "header: value" each, a rule between rows.
func (r *renderer) tableRecords(src []byte, t *east.Table, b block) error {
	var header []ast.Node
	first := true
	for n := t.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == east.KindTableHeader {
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				header = append(header, c)
			}
			if n.NextSibling() == nil {
				// A header alone: its names on one line.
				var spans []span
				for i, h := range header {
					if i > 0 {
						spans = append(spans, styleBody.span(" | "))
					}
					bold := styleBody
					bold.face = faceBold
					spans = r.inlines(src, h, bold, spans)
				}
				return r.flow(spans, b.x, b.width, styleBody, nil)
			}
			continue
		}
		if !first {
			r.space(blockGap / 2)
			if r.y <= contentEnd {
				r.gp.SetLineWidth(0.3)
				r.gp.SetStrokeColor(190, 190, 190)
				r.gp.Line(b.x, r.y, b.x+b.width, r.y)
			}
			r.space(blockGap / 2)
		}
		first = false
		i := 0
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			bold := styleBody
			bold.face = faceBold
			var spans []span
			if i < len(header) {
				spans = r.inlines(src, header[i], bold, spans)
			}
			spans = append(spans, bold.span(": "))
			spans = r.inlines(src, c, styleBody, spans)
			if err := r.flow(spans, b.x, b.width, styleBody, nil); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}
