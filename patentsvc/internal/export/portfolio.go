package export

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The portfolio part of the report (decisions.md, "patentsvc: what
// changed, and what the portfolio covers"): the facts of the company's
// newest portfolio analysis that has them, before anything else.

// Geometry of the portfolio's CPC chart and patents table, in points.
const (
	cpcRowHeight   = 15.0
	cpcBarHeight   = 9.0
	cpcLabelShare  = 0.3   // of the content width, the most a code takes
	maxTitleLines  = 6     // of a patent's title in the table
	maxCountries   = 40    // listed in the facts table
	maxNarrowWidth = 110.0 // of the patent id and date columns
)

var (
	styleCPCCode  = style{faceBold, 8.5, 11, 0}
	styleCPCValue = style{faceRegular, 8, 11, 0}
	styleLink     = style{faceRegular, 8, 12.5, 90}
)

// portfolio draws the portfolio part: a facts table (patents analysed,
// the search's results granted and applications, countries active and
// inactive), a chart of the CPC shares, a chart of the publication years
// and the table of the patents analysed, each left out when it would be
// empty; a company without portfolio facts gets one line saying so.
func (r *renderer) portfolio(s patent.ReportSummary) error {
	r.space(partGap)
	p := s.Portfolio
	if p == nil && len(s.Patents) == 0 {
		if err := r.heading(stylePart, "Portfolio", afterGap+styleMeta.lead); err != nil {
			return err
		}
		r.y += afterGap
		return r.paragraph(styleMeta, marginLeft, contentWidth,
			"No portfolio facts: none of this company's stored portfolio analyses has them.")
	}
	facts := [][2]string{{"Patents analysed", strconv.Itoa(len(s.Patents))}}
	if p.Total() > 0 {
		facts = append(facts, [2]string{"Search results", fmt.Sprintf("%d: %d granted, %s",
			p.Total(), p.Granted, plural(p.Applications, "application", "applications"))})
	}
	if p != nil && len(p.Countries) > 0 {
		facts = append(facts, [2]string{"Countries", countries(p.Countries)})
	}
	rows, err := r.layFacts(facts)
	if err != nil {
		return err
	}
	var at string
	if !s.PortfolioAt.IsZero() {
		at = "From the portfolio analysis of " + s.PortfolioAt.UTC().Format("2006-01-02 15:04") + " UTC."
	}
	// The heading keeps its meta line and the first two rows of facts.
	if err := r.heading(stylePart, "Portfolio", afterGap+styleMeta.lead+afterGap+factsHeight(rows, 2)); err != nil {
		return err
	}
	r.y += afterGap
	if at != "" {
		if err := r.paragraph(styleMeta, marginLeft, contentWidth, at); err != nil {
			return err
		}
		r.y += afterGap
	}
	if err := r.factsTable(rows); err != nil {
		return err
	}
	if p != nil && len(p.CPC) > 0 {
		r.space(itemGap)
		// A portfolio lists at most MaxPortfolioCPC; the chart keeps to a
		// page whatever it is given.
		if err := r.cpcChart(p.CPC[:min(len(p.CPC), patent.MaxPortfolioCPC)]); err != nil {
			return err
		}
	}
	if p != nil && len(p.ByYear) > 0 {
		r.space(itemGap)
		if err := r.keep(yearChartHeight); err != nil {
			return err
		}
		if err := r.useChartFonts(); err != nil {
			return err
		}
		years := Chart{Title: "Search results per publication year", Unit: "results", Yearly: true}
		if err := DrawBarChart(r.gp, marginLeft, r.y, contentWidth, yearChartHeight, years, YearPoints(p.ByYear)); err != nil {
			return err
		}
		r.chartDrawn(yearChartHeight)
	}
	if len(s.Patents) > 0 {
		r.space(itemGap)
		if err := r.patentsTable(s.Patents); err != nil {
			return err
		}
	}
	return nil
}

// nbsp is a no-break space: lines do not break there.
const nbsp = "\u00A0"

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// countries lists countries with their results active and inactive there
// ("US 5 active, 1 inactive; EP 3 active"), at most maxCountries of them.
func countries(cs []patent.CountryCount) string {
	var b strings.Builder
	for i, c := range cs {
		if i == maxCountries {
			fmt.Fprintf(&b, "; and %d more", len(cs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		// No-break spaces keep a country's entry on one line.
		b.WriteString(oneLine(c.Country))
		var parts []string
		if c.Active > 0 {
			parts = append(parts, strconv.Itoa(c.Active)+nbsp+"active")
		}
		if c.Inactive > 0 {
			parts = append(parts, strconv.Itoa(c.Inactive)+nbsp+"inactive")
		}
		if len(parts) > 0 {
			b.WriteString(nbsp + strings.Join(parts, ","+nbsp))
		}
	}
	return b.String()
}

// oneLine is s with every run of white space, line breaks included, made
// one space, and trimmed: text from the search shown on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cpcChart draws the CPC shares as horizontal bars, in the order given
// (Portfolio.CPC's: largest first): each row the code in bold (bare: the
// service ships no table of CPC titles), a bar as long as the share, the
// longest share filling the width, and the share as a percentage after
// it; under it a note says that the shares are not parts of one whole (a
// patent carries several classes). The chart is kept on one page.
func (r *renderer) cpcChart(shares []patent.CPCShare) error {
	height := styleMinor.lead + 2*styleMeta.lead + 8 + float64(len(shares))*cpcRowHeight
	if err := r.keep(height); err != nil {
		return err
	}
	if err := r.paragraph(styleMinor, marginLeft, contentWidth, "CPC classes, share of the search results"); err != nil {
		return err
	}
	r.y += 4
	// The code column as wide as the widest code, up to a share of the
	// width (a longer code is cut).
	labelWidth := 0.0
	for _, c := range shares {
		w, err := r.measure(styleCPCCode.face, styleCPCCode.size, oneLine(c.Code))
		if err != nil {
			return err
		}
		labelWidth = max(labelWidth, min(w, cpcLabelShare*contentWidth))
	}
	barX := marginLeft + labelWidth + 8
	valueWidth, err := r.measure(styleCPCValue.face, styleCPCValue.size, "100.0%")
	if err != nil {
		return err
	}
	barMax := marginLeft + contentWidth - (valueWidth + 6) - barX
	top := 0.0
	for _, c := range shares {
		top = max(top, c.Share)
	}
	rowsTop := r.y
	for _, c := range shares {
		baseline := baselineOf(r.y, cpcRowHeight, styleCPCCode.size)
		code := oneLine(c.Code)
		codeLine, err := r.fitted(styleCPCCode, code, labelWidth)
		if err != nil {
			return err
		}
		if err := r.draw(marginLeft, baseline, codeLine); err != nil {
			return err
		}
		w := 0.0
		if top > 0 && c.Share > 0 {
			w = max(c.Share/top*barMax, 0.8)
		}
		if w > 0 {
			r.gp.SetLineWidth(0.5)
			r.gp.SetStrokeColor(greyInk, greyInk, greyInk)
			r.gp.SetFillColor(greyBar, greyBar, greyBar)
			r.gp.RectFromUpperLeftWithStyle(barX, r.y+(cpcRowHeight-cpcBarHeight)/2, w, cpcBarHeight, "FD")
		}
		value, err := r.fitted(styleCPCValue, percent(c.Share), valueWidth+4)
		if err != nil {
			return err
		}
		if err := r.draw(barX+w+4, baselineOf(r.y, cpcRowHeight, styleCPCValue.size), value); err != nil {
			return err
		}
		r.y += cpcRowHeight
	}
	// The axis the bars start from.
	r.gp.SetLineWidth(0.7)
	r.gp.SetStrokeColor(greyInk, greyInk, greyInk)
	r.gp.Line(barX, rowsTop, barX, r.y)
	r.y += 4
	return r.paragraph(styleMeta, marginLeft, contentWidth, cpcNote)
}

// cpcNote is the CPC chart's caption: its shares are not parts of one
// whole.
const cpcNote = "A patent carries several CPC classes: each share is that of the search results in that class, " +
	"so the shares are not parts of one whole and need not add up to 100%."

// percent writes a share (0..1) as a percentage with one decimal.
func percent(share float64) string {
	if math.IsNaN(share) || math.IsInf(share, 0) {
		return "—"
	}
	return strconv.FormatFloat(share*100, 'f', 1, 64) + "%"
}

// fitted lays text out on one line in st, cut and ended with "…" when it
// is wider than width.
func (r *renderer) fitted(st style, text string, width float64) (line, error) {
	one := func(s string) (line, error) {
		ls, err := r.lines([]span{st.span(s)}, math.Inf(1))
		if err != nil || len(ls) == 0 {
			return line{}, err
		}
		return ls[0], nil
	}
	text = oneLine(text)
	l, err := one(text)
	if err != nil || l.width <= width {
		return l, err
	}
	// The longest start of text that fits with the ellipsis, by bisection
	// on its characters.
	runes := []rune(text)
	lo, hi := 0, len(runes)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		w, err := r.measure(st.face, st.size, strings.TrimRight(string(runes[:mid]), " ")+"…")
		if err != nil {
			return line{}, err
		}
		if w <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return one(strings.TrimRight(string(runes[:lo]), " ") + "…")
}

// patentRow is one patent of the table, laid out: its cells' lines, the
// link's line last in the title cell when it has one.
type patentRow struct {
	id, title, date []line
	link            string // the URL the link line opens; "" for none
	height          float64
}

// patentsTable draws the patents analysed: a bold header (Patent, Title
// and PDF, Published) over a rule, then one row per patent, at most
// MaxReportPatents, and a line saying how many more when there are. The
// title wraps (at most maxTitleLines lines); under it, the link to the
// patent's PDF in grey, shown short (shownURL) and cut to the column, and
// opened by a link annotation over it when it is an http or https URL.
// A row that does not fit on the page starts the next one, under the
// header again.
func (r *renderer) patentsTable(patents []patent.PatentRef) error {
	shown := patents[:min(len(patents), MaxReportPatents)]
	g, err := r.patentsGeom(shown)
	if err != nil {
		return err
	}
	bold := styleCell
	bold.face = faceBold
	header, err := r.patentRow(bold, "Patent", "Title and PDF", "Published", "", g)
	if err != nil {
		return err
	}
	rows := make([]patentRow, len(shown))
	for i, p := range shown {
		if rows[i], err = r.patentRow(styleCell, p.PatentID, p.Title, p.PublicationDate, p.PDFLink, g); err != nil {
			return err
		}
	}
	// The table's heading, kept with the header and the first row.
	if err := r.keep(styleMinor.lead + 4 + header.height + rows[0].height); err != nil {
		return err
	}
	if err := r.paragraph(styleMinor, marginLeft, contentWidth, "Patents analysed"); err != nil {
		return err
	}
	r.y += 4
	if err := r.drawPatentRows(header, rows, g); err != nil {
		return err
	}
	if more := len(patents) - len(shown); more > 0 {
		r.y += 4
		return r.paragraph(styleMeta, marginLeft, contentWidth, fmt.Sprintf("and %d more patents, not listed", more))
	}
	return nil
}

// patentsGeom is where the columns of the patents table are for patents:
// the patent ids as wide as the widest (at most maxNarrowWidth), the
// dates as wide as theirs, the title the rest. The ids and dates are at
// least as wide as their bold headers.
func (r *renderer) patentsGeom(patents []patent.PatentRef) (tableGeom, error) {
	idWidth, err := r.measure(faceBold, styleCell.size, "Patent")
	if err != nil {
		return tableGeom{}, err
	}
	dateWidth, err := r.measure(faceBold, styleCell.size, "Published")
	if err != nil {
		return tableGeom{}, err
	}
	for _, p := range patents {
		w, err := r.measure(styleCell.face, styleCell.size, oneLine(p.PatentID))
		if err != nil {
			return tableGeom{}, err
		}
		idWidth = max(idWidth, min(w, maxNarrowWidth))
		w, err = r.measure(styleCell.face, styleCell.size, orDash(oneLine(p.PublicationDate)))
		if err != nil {
			return tableGeom{}, err
		}
		dateWidth = max(dateWidth, min(w, maxNarrowWidth))
	}
	titleWidth := contentWidth - idWidth - dateWidth - 6*cellPad
	return tableGeom{
		x:      marginLeft,
		width:  contentWidth,
		colX:   []float64{marginLeft, marginLeft + idWidth + 2*cellPad, marginLeft + idWidth + titleWidth + 4*cellPad},
		widths: []float64{idWidth, titleWidth, dateWidth},
	}, nil
}

// drawPatentRows draws the patents table's header between heavy rules,
// then its rows, each followed by a light rule; a row that does not fit
// on the page starts the next one, under the header again.
func (r *renderer) drawPatentRows(header patentRow, rows []patentRow, g tableGeom) error {
	drawHeader := func() error {
		r.tableRule(g, true)
		if err := r.drawPatentRow(header, g); err != nil {
			return err
		}
		r.tableRule(g, true)
		return nil
	}
	if err := drawHeader(); err != nil {
		return err
	}
	for _, row := range rows {
		if r.y+row.height > contentEnd {
			if err := r.newPage(); err != nil {
				return err
			}
			if err := drawHeader(); err != nil {
				return err
			}
		}
		if err := r.drawPatentRow(row, g); err != nil {
			return err
		}
		r.tableRule(g, false)
	}
	return nil
}

// patentRow lays out one row of the patents table in st: empty values
// are shown as "—"; link, when not empty, is shown under the title.
func (r *renderer) patentRow(st style, id, title, date, link string, g tableGeom) (patentRow, error) {
	var (
		row patentRow
		err error
	)
	if row.id, err = r.lines(plainSpans(st, orDash(oneLine(id))), g.widths[0]); err != nil {
		return row, err
	}
	if row.title, err = r.lines(plainSpans(st, orDash(oneLine(title))), g.widths[1]); err != nil {
		return row, err
	}
	if len(row.title) > maxTitleLines {
		row.title = row.title[:maxTitleLines]
		last := row.title[maxTitleLines-1].text()
		cut, err := r.fitted(st, last+" …", g.widths[1])
		if err != nil {
			return row, err
		}
		row.title[maxTitleLines-1] = cut
	}
	if link = oneLine(link); link != "" {
		shown, err := r.fitted(styleLink, shownURL(link), g.widths[1])
		if err != nil {
			return row, err
		}
		row.title = append(row.title, shown)
		if u, err := url.Parse(link); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(link) <= 2048 {
			row.link = u.String()
		}
	}
	if row.date, err = r.lines(plainSpans(st, orDash(oneLine(date))), g.widths[2]); err != nil {
		return row, err
	}
	n := max(len(row.id), len(row.title), len(row.date))
	row.height = float64(n)*styleCell.lead + 2*cellPadV
	return row, nil
}

// shownURL is link as the table shows it: an http or https URL without
// its scheme, its query as "?…", and its path, when that has folders, as
// "/…/" and the file name (patent PDFs sit under folders named by
// hashes: "patentimages.storage.googleapis.com/…/US11696682.pdf"); any
// other link as it is. The link annotation keeps the whole URL.
func shownURL(link string) string {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return link
	}
	shown := u.Host
	if p := strings.Trim(u.Path, "/"); p != "" {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			p = "…/" + p[i+1:]
		}
		shown += "/" + p
	}
	if u.RawQuery != "" {
		shown += "?…"
	}
	return shown
}

// drawPatentRow draws a row from r.y down (r.y ends under it) and puts a
// link annotation over its link line.
func (r *renderer) drawPatentRow(row patentRow, g tableGeom) error {
	r.y += cellPadV
	top := r.y
	for c, lines := range [][]line{row.id, row.title, row.date} {
		for i, l := range lines {
			y := top + float64(i)*styleCell.lead
			if err := r.draw(g.colX[c]+cellPad, baselineOf(y, styleCell.lead, styleCell.size), l); err != nil {
				return err
			}
			if c == 1 && i == len(lines)-1 && row.link != "" {
				r.gp.AddExternalLink(row.link, g.colX[c]+cellPad, y, l.width, styleCell.lead)
			}
		}
	}
	r.y = top + row.height - cellPadV
	return nil
}
