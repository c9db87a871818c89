package export

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signintech/gopdf"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The comparison report (decisions.md, "patentsvc: how portfolios
// compare"): the companies side by side, the similarity matrix with what
// each pair shares, the CPC shares and the publication years as grouped
// bar charts, and the classes only one company has. Each company is drawn
// in one colour on every chart (seriesColours, in request order), and its
// bars are also told apart by their order in the group and their legend,
// so the charts read printed in black and white too.

// seriesColours are the companies' colours, in request order: the
// Okabe-Ito palette, told apart with the common colour-vision
// deficiencies.
var seriesColours = [patent.CompareMax][3]uint8{{0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {204, 121, 167}, {86, 180, 233}}

// Geometry of the comparison's charts and matrix, in points.
const (
	groupBarHeight  = 7.0
	groupBarGap     = 1.0
	groupGap        = 7.0
	legendHeight    = 16.0
	matrixRowHeight = 18.0
	matrixLabelW    = 150.0
	// maxChartCodes and maxChartYears bound the grouped charts: the codes
	// with the largest shares, the latest years (the tables have them all).
	maxChartCodes = 12
	maxChartYears = 12
)

// ComparisonTitle is the comparison report's title: "Portfolio
// comparison: A, B".
func ComparisonTitle(c patent.Comparison) string {
	names := make([]string, len(c.Companies))
	for i, co := range c.Companies {
		names[i] = co.Name
	}
	return "Portfolio comparison: " + strings.Join(names, ", ")
}

// ComparisonFilename is the comparison's download name: the names
// lowercased, spaces as underscores, joined by "_vs_", then the date of
// c.Generated in UTC: "compare-acme_corp_vs_globex-2026-11-29.pdf".
func ComparisonFilename(c patent.Comparison) string {
	names := make([]string, len(c.Companies))
	for i, co := range c.Companies {
		names[i] = fileStem(co.Name)
	}
	return "compare-" + strings.Join(names, "_vs_") + "-" + c.Generated.UTC().Format(time.DateOnly) + ".pdf"
}

// ComparisonPDF writes the comparison report of c as a PDF to w.
func ComparisonPDF(w io.Writer, opts PDFOptions, c patent.Comparison) error {
	r, err := newReport(opts, nil)
	if err != nil {
		return fmt.Errorf("export comparison pdf: %w", err)
	}
	r.gp.SetInfo(gopdf.PdfInfo{Title: ComparisonTitle(c), Creator: "patentsvc", CreationDate: c.Generated})
	if err := r.comparison(c); err != nil {
		return fmt.Errorf("export comparison pdf: %w", err)
	}
	if err := r.writeTo(w); err != nil {
		return fmt.Errorf("export comparison pdf: %w", err)
	}
	return nil
}

// comparison lays out the whole comparison report.
func (r *renderer) comparison(c patent.Comparison) error {
	if err := r.newPage(); err != nil {
		return err
	}
	if err := r.paragraph(styleTitle, marginLeft, contentWidth, ComparisonTitle(c)); err != nil {
		return err
	}
	r.y += 2
	if err := r.paragraph(styleMeta, marginLeft, contentWidth, "Generated "+c.Generated.UTC().Format("2006-01-02 15:04")+
		" UTC from each company's latest stored portfolio analysis"); err != nil {
		return err
	}
	for _, part := range []func(patent.Comparison) error{r.comparedCompanies, r.similarity, r.cpcSideBySide, r.yearsSideBySide, r.distinctive} {
		if err := part(c); err != nil {
			return err
		}
	}
	return nil
}

// part starts a part: its heading, kept with need points below it.
func (r *renderer) part(title string, need float64) error {
	r.space(partGap)
	if err := r.heading(stylePart, title, afterGap+need); err != nil {
		return err
	}
	r.y += afterGap
	return nil
}

// comparedCompanies is the table of the companies, each in its colour.
func (r *renderer) comparedCompanies(c patent.Comparison) error {
	var rows [][2]string
	for _, co := range c.Companies {
		p := co.Portfolio
		rows = append(rows, [2]string{co.Name, fmt.Sprintf("Analysed %s; %s; %d search results: %d granted, %s",
			co.AnalysedAt.UTC().Format(time.DateOnly), plural(co.PatentCount, "patent analysed", "patents analysed"),
			p.Total(), p.Granted, plural(p.Applications, "application", "applications"))})
	}
	laid, err := r.layFacts(rows)
	if err != nil {
		return err
	}
	if err := r.part("Companies", factsHeight(laid, 2)); err != nil {
		return err
	}
	top := r.y
	if err := r.factsTable(laid); err != nil {
		return err
	}
	// Each company's colour, a swatch at the left edge of its row (the
	// table fits on its page: at most five rows).
	y := top
	for i, row := range laid {
		if y+row.height > r.y {
			break // the table went on over a page: no swatches
		}
		col := seriesColours[i]
		r.gp.SetFillColor(col[0], col[1], col[2])
		r.gp.RectFromUpperLeftWithStyle(marginLeft, y, 4, row.height, "F")
		y += row.height
	}
	return nil
}

// similarity is the matrix of every pair's similarity, and what each pair
// shares.
func (r *renderer) similarity(c patent.Comparison) error {
	n := len(c.Companies)
	if err := r.part("Similarity", float64(n+1)*matrixRowHeight); err != nil {
		return err
	}
	sim := map[[2]int]float64{}
	index := map[string]int{}
	for i, co := range c.Companies {
		index[co.Name] = i
		sim[[2]int{i, i}] = 1
	}
	for _, p := range c.Pairs {
		a, b := index[p.A], index[p.B]
		sim[[2]int{a, b}], sim[[2]int{b, a}] = p.Similarity, p.Similarity
	}
	if err := r.useChartFonts(); err != nil {
		return err
	}
	colW := (contentWidth - matrixLabelW) / float64(n)
	top := r.y
	for row := -1; row < n; row++ {
		y := top + float64(row+1)*matrixRowHeight
		for col := -1; col < n; col++ {
			x, w := marginLeft+matrixLabelW+float64(col)*colW, colW
			if col < 0 {
				x, w = marginLeft, matrixLabelW
			}
			if err := r.matrixCell(c, row, col, x, y, w, sim); err != nil {
				return err
			}
		}
	}
	r.chartDrawn(float64(n+1) * matrixRowHeight)
	r.y += 4
	if err := r.paragraph(styleMeta, marginLeft, contentWidth, "Similarity is the cosine of two companies' CPC class shares "+
		"(Jaffe's technological proximity): 1 is the same mix of classes, 0 no class in common."); err != nil {
		return err
	}
	var rows [][2]string
	for _, p := range c.Pairs {
		shared := "no class in common"
		if len(p.Shared) > 0 {
			var parts []string
			for _, s := range p.Shared {
				parts = append(parts, fmt.Sprintf("%s %s / %s", s.Code, percent(s.ShareA), percent(s.ShareB)))
			}
			shared = "shared: " + strings.Join(parts, "; ")
		}
		rows = append(rows, [2]string{p.A + " and " + p.B, strconv.FormatFloat(p.Similarity, 'f', 3, 64) + "; " + shared})
	}
	laid, err := r.layFacts(rows)
	if err != nil {
		return err
	}
	r.space(itemGap)
	return r.factsTable(laid)
}

// matrixCell draws one cell of the similarity matrix: the header row and
// column name the companies (row or col -1), the others hold the pair's
// similarity on a grey as dark as it is high.
func (r *renderer) matrixCell(c patent.Comparison, row, col int, x, y, w float64, sim map[[2]int]float64) error {
	h := matrixRowHeight
	text, face, fill := "", familyBold, [3]uint8{255, 255, 255}
	switch {
	case row < 0 && col < 0:
	case row < 0:
		text = c.Companies[col].Name
		fill = seriesColours[col]
	case col < 0:
		text = c.Companies[row].Name
		fill = seriesColours[row]
	default:
		v := sim[[2]int{row, col}]
		text, face = strconv.FormatFloat(v, 'f', 3, 64), familyRegular
		g := uint8(255 - v*90)
		fill = [3]uint8{g, g, g}
	}
	r.gp.SetLineWidth(0.6)
	r.gp.SetStrokeColor(160, 160, 160)
	r.gp.SetFillColor(fill[0], fill[1], fill[2])
	r.gp.RectFromUpperLeftWithStyle(x, y, w, h, "FD")
	if text == "" {
		return nil
	}
	if err := r.gp.SetFont(face, "", 8.5); err != nil {
		return err
	}
	if row < 0 || col < 0 {
		r.gp.SetTextColor(255, 255, 255)
		if fill == seriesColours[1] || fill == seriesColours[4] {
			r.gp.SetTextColor(0, 0, 0) // orange and sky blue are light
		}
	} else {
		r.gp.SetTextColor(0, 0, 0)
	}
	text = fitWidth(r.gp, text, w-8)
	tw, err := r.gp.MeasureTextWidth(text)
	if err != nil {
		return err
	}
	r.gp.SetXY(x+(w-tw)/2, y+h/2+3)
	if row < 0 || col < 0 {
		r.gp.SetXY(x+4, y+h/2+3)
	}
	return r.gp.Text(text)
}

// fitWidth cuts s, ended with "...", to width in gp's current font.
func fitWidth(gp *gopdf.GoPdf, s string, width float64) string {
	if w, err := gp.MeasureTextWidth(s); err == nil && w <= width {
		return s
	}
	runes := []rune(s)
	for n := len(runes) - 1; n > 0; n-- {
		cut := string(runes[:n]) + "..."
		if w, err := gp.MeasureTextWidth(cut); err == nil && w <= width {
			return cut
		}
	}
	return ""
}

// cpcSideBySide is the grouped chart of the CPC shares: for each of the
// codes with the largest shares (any company's), each company's share.
func (r *renderer) cpcSideBySide(c patent.Comparison) error {
	best := map[string]float64{}
	for _, co := range c.Companies {
		for _, s := range co.Portfolio.CPC {
			best[s.Code] = max(best[s.Code], s.Share)
		}
	}
	codes := make([]string, 0, len(best))
	for code := range best {
		codes = append(codes, code)
	}
	slices.SortFunc(codes, func(a, b string) int { return cmp.Or(cmp.Compare(best[b], best[a]), cmp.Compare(a, b)) })
	more := len(codes) - maxChartCodes
	codes = codes[:min(len(codes), maxChartCodes)]
	values := make([][]float64, len(c.Companies))
	for i, co := range c.Companies {
		values[i] = make([]float64, len(codes))
		for j, code := range codes {
			for _, s := range co.Portfolio.CPC {
				if s.Code == code {
					values[i][j] = s.Share
				}
			}
		}
	}
	if err := r.part("CPC classes side by side", legendHeight+r.groupHeight(len(c.Companies))); err != nil {
		return err
	}
	if len(codes) == 0 {
		return r.paragraph(styleMeta, marginLeft, contentWidth, "No company has CPC class shares.")
	}
	if err := r.groupedBars(c, codes, values, percent); err != nil {
		return err
	}
	note := cpcNote
	if more > 0 {
		note = fmt.Sprintf("The %d classes with the largest shares; %d more are in the companies' own analyses. ", maxChartCodes, more) + note
	}
	r.y += 4
	return r.paragraph(styleMeta, marginLeft, contentWidth, note)
}

// yearsSideBySide is the grouped chart of the search results per
// publication year, the latest years any company has.
func (r *renderer) yearsSideBySide(c patent.Comparison) error {
	seen := map[int]bool{}
	for _, co := range c.Companies {
		for _, y := range co.Portfolio.ByYear {
			seen[y.Year] = true
		}
	}
	years := make([]int, 0, len(seen))
	for y := range seen {
		years = append(years, y)
	}
	slices.Sort(years)
	years = years[max(0, len(years)-maxChartYears):]
	labels := make([]string, len(years))
	values := make([][]float64, len(c.Companies))
	for j, y := range years {
		labels[j] = strconv.Itoa(y)
	}
	for i, co := range c.Companies {
		values[i] = make([]float64, len(years))
		for j, y := range years {
			for _, yc := range co.Portfolio.ByYear {
				if yc.Year == y {
					values[i][j] = float64(yc.Count)
				}
			}
		}
	}
	if err := r.part("Search results per publication year", legendHeight+r.groupHeight(len(c.Companies))); err != nil {
		return err
	}
	if len(years) == 0 {
		return r.paragraph(styleMeta, marginLeft, contentWidth, "No company's search results have publication dates.")
	}
	return r.groupedBars(c, labels, values, func(v float64) string { return strconv.Itoa(int(v)) })
}

// distinctive is the table of the classes each company alone has.
func (r *renderer) distinctive(c patent.Comparison) error {
	var rows [][2]string
	for _, d := range c.Distinctive {
		value := "none: another company has each of its classes"
		if len(d.Codes) > 0 {
			var parts []string
			for _, s := range d.Codes {
				parts = append(parts, s.Code+" "+percent(s.Share))
			}
			value = strings.Join(parts, ", ")
		}
		rows = append(rows, [2]string{d.Company, value})
	}
	laid, err := r.layFacts(rows)
	if err != nil {
		return err
	}
	if err := r.part("Distinctive classes", factsHeight(laid, 2)); err != nil {
		return err
	}
	if err := r.paragraph(styleMeta, marginLeft, contentWidth, "The CPC classes of each company that no other compared company has, largest share first."); err != nil {
		return err
	}
	r.y += 4
	return r.factsTable(laid)
}

// groupHeight is the height of one group of bars of n companies.
func (r *renderer) groupHeight(n int) float64 {
	return float64(n)*(groupBarHeight+groupBarGap) + groupGap
}

// groupedBars draws, for each label, one bar per company (values[company]
// [label]) in the company's colour, scaled to the largest value, each with
// its value written after it; a legend of the companies first, and again
// on each page the chart goes on to.
func (r *renderer) groupedBars(c patent.Comparison, labels []string, values [][]float64, format func(float64) string) error {
	if err := r.useChartFonts(); err != nil {
		return err
	}
	top := 0.0
	for _, vs := range values {
		for _, v := range vs {
			top = max(top, v)
		}
	}
	if err := r.gp.SetFont(familyBold, "", 8.5); err != nil {
		return err
	}
	labelW := 0.0
	for _, l := range labels {
		w, _ := r.gp.MeasureTextWidth(l)
		labelW = max(labelW, w)
	}
	barX := marginLeft + labelW + 8
	barMax := marginLeft + contentWidth - 40 - barX
	if err := r.legend(c); err != nil {
		return err
	}
	gh := r.groupHeight(len(values))
	for j, label := range labels {
		if r.y+gh > contentEnd {
			r.chartDrawn(0) // the renderer sets its font and colours again
			if err := r.newPage(); err != nil {
				return err
			}
			if err := r.legend(c); err != nil {
				return err
			}
		}
		if err := r.gp.SetFont(familyBold, "", 8.5); err != nil {
			return err
		}
		r.gp.SetTextColor(0, 0, 0)
		r.gp.SetXY(marginLeft, r.y+(gh-groupGap)/2+3)
		if err := r.gp.Text(label); err != nil {
			return err
		}
		if err := r.gp.SetFont(familyRegular, "", 7); err != nil {
			return err
		}
		for i := range values {
			y := r.y + float64(i)*(groupBarHeight+groupBarGap)
			v := values[i][j]
			w := 0.0
			if top > 0 && v > 0 {
				w = max(v/top*barMax, 0.8)
			}
			if w > 0 {
				col := seriesColours[i]
				r.gp.SetFillColor(col[0], col[1], col[2])
				r.gp.RectFromUpperLeftWithStyle(barX, y, w, groupBarHeight, "F")
			}
			if v == 0 {
				continue // no bar, no label: the company has none there
			}
			r.gp.SetTextColor(60, 60, 60)
			r.gp.SetXY(barX+w+3, y+groupBarHeight-1)
			if err := r.gp.Text(format(v)); err != nil {
				return err
			}
		}
		r.gp.SetLineWidth(0.7)
		r.gp.SetStrokeColor(0, 0, 0)
		r.gp.Line(barX, r.y, barX, r.y+gh-groupGap)
		r.y += gh
	}
	r.chartDrawn(0)
	return nil
}

// legend draws a swatch and the name of each company, in order, on one
// line (names cut to share it).
func (r *renderer) legend(c patent.Comparison) error {
	if err := r.gp.SetFont(familyRegular, "", 8.5); err != nil {
		return err
	}
	slot := contentWidth / float64(len(c.Companies))
	for i, co := range c.Companies {
		x := marginLeft + float64(i)*slot
		col := seriesColours[i]
		r.gp.SetFillColor(col[0], col[1], col[2])
		r.gp.RectFromUpperLeftWithStyle(x, r.y+2, 10, 8, "F")
		r.gp.SetTextColor(0, 0, 0)
		r.gp.SetXY(x+14, r.y+9)
		if err := r.gp.Text(fitWidth(r.gp, co.Name, slot-20)); err != nil {
			return err
		}
	}
	r.y += legendHeight
	return nil
}
