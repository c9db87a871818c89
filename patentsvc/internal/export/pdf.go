package export

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/signintech/gopdf"
	"github.com/yuin/goldmark/ast"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// MaxReportPatents is the most patents the report's table lists; a
// longer list ends with a line saying how many more there are. Analyses
// keep far fewer (the search's MAX_PATENTS); this only bounds the report.
const MaxReportPatents = 100

// PDFOptions are how the PDF report is drawn. The zero value draws it
// with the Go fonts alone, as PDF does.
type PDFOptions struct {
	// Fonts are the fonts, built once by NewFonts; nil parses the Go
	// fonts for the one report (a few milliseconds).
	Fonts *Fonts
}

// Page geometry, in points (1/72 inch), on A4.
const (
	pageWidth    = 595.28
	pageHeight   = 841.89
	marginLeft   = 56.7 // 20 mm
	marginRight  = 56.7
	marginTop    = 56.7
	marginBottom = 62.0 // above the footer
	footerY      = pageHeight - 34
	contentWidth = pageWidth - marginLeft - marginRight
	contentEnd   = pageHeight - marginBottom
)

// Text styles: face, size, line height and grey level (0 is black).
type style struct {
	face face
	size float64
	lead float64
	grey uint8
}

// span is text in s.
func (s style) span(text string) span {
	return span{text: text, face: s.face, size: s.size, grey: s.grey}
}

var (
	styleTitle   = style{faceBold, 18, 24, 0}
	stylePart    = style{faceBold, 15, 20, 0} // Portfolio, Tracking, Analyses
	styleSubhead = style{faceBold, 13, 18, 0}
	styleMinor   = style{faceBold, 10.5, 15, 0} // a heading inside a part
	styleMeta    = style{faceRegular, 9, 12.5, 90}
	styleBody    = style{faceRegular, 10, 14, 0}
	styleLabel   = style{faceBold, 10, 14, 0}
	styleFooter  = style{faceRegular, 8, 10, 110}
)

// maxSummaryLines caps the lines of one summary-table value, so that the
// table always fits on a page; a longer list ends in "…".
const maxSummaryLines = 24

// PDF renders the export report of company to w with the Go fonts: the
// title "Patent Analysis Report: <company>", "Generated <YYYY-MM-DD HH:MM
// UTC>" from generated, the portfolio facts of summary, the tracking chart
// when summary.Tracked, then the analyses: the summary table (Total
// Analyses, Analysis Types, Models Used), the chart of analyses per month,
// and one section per record, in the order given, with its type, model,
// time and text, the text rendered as Markdown (the package documentation
// has the layout). When summary.Total is more than len(records), the
// report says it shows only the len(records) most recent. It is
// PDFWithOptions with the zero PDFOptions.
//
// Text is drawn literally ("<", "&" and quotes appear as such; HTML in the
// Markdown is shown as written; see the package documentation for what
// becomes of Markdown, tabs, line breaks and characters the fonts lack).
// Each distinct missing character is logged once at DEBUG on logger, which
// may be nil.
//
// The document is built in memory and written to w at the end; the caller
// bounds its size by capping len(records). The error is a gopdf error or
// the error writing to w, wrapped.
func PDF(w io.Writer, company string, generated time.Time, summary patent.ReportSummary, records []patent.AnalysisRecord, logger *slog.Logger) error {
	return PDFWithOptions(w, PDFOptions{}, company, generated, summary, records, logger)
}

// PDFWithOptions is PDF drawn as opts say: with opts.Fonts, text the Go
// fonts lack is drawn in the fallback font when it has it.
func PDFWithOptions(w io.Writer, opts PDFOptions, company string, generated time.Time, summary patent.ReportSummary, records []patent.AnalysisRecord, logger *slog.Logger) error {
	r, err := newReport(opts, logger)
	if err != nil {
		return fmt.Errorf("export pdf: %w", err)
	}
	r.gp.SetInfo(gopdf.PdfInfo{
		Title:        "Patent Analysis Report: " + company,
		Creator:      "patentsvc",
		CreationDate: generated,
	})
	if err := r.report(company, generated, summary, records); err != nil {
		return fmt.Errorf("export pdf: %w", err)
	}
	if err := r.writeTo(w); err != nil {
		return fmt.Errorf("export pdf: %w", err)
	}
	return nil
}

// writeTo writes the document laid out to w. gopdf ignores the errors of
// its writes (v0.33.0, compilePdf); bufio.Writer keeps the first one,
// refuses the writes after it and returns it from Flush. It also turns
// gopdf's many small writes into few large ones.
func (r *renderer) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := r.gp.WriteTo(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// newReport is a renderer for one report drawn as opts say.
func newReport(opts PDFOptions, logger *slog.Logger) (*renderer, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	fonts := opts.Fonts
	if fonts == nil {
		var err error
		if fonts, err = NewFonts(nil, nil); err != nil {
			return nil, err
		}
	}
	return newRenderer(logger, fonts), nil
}

// renderer lays out one report. It is used once and then dropped.
type renderer struct {
	gp     *gopdf.GoPdf
	fonts  *Fonts
	glyphs *glyphs
	page   int
	y      float64 // top of the next line on the current page
	widths map[fontKey]map[rune]float64

	added  map[string]bool // font families added to gp
	family string          // the font gp draws in
	size   float64
	grey   int // the text grey gp draws in; -1 before the first

	bars    []float64 // x of the block-quote bars drawn beside each line
	markers []marker  // list markers waiting for their item's first line

	drawn box // where text was drawn, for the tests
}

// marker is a list item's bullet or number, drawn on the item's first
// line, its right edge at right.
type marker struct {
	text  string
	right float64
	left  float64 // never drawn left of this
}

// box is a rectangle in page coordinates (y down).
type box struct {
	minX, minY, maxX, maxY float64
	empty                  bool
}

func (b *box) add(x0, y0, x1, y1 float64) {
	if b.empty {
		*b = box{x0, y0, x1, y1, false}
		return
	}
	b.minX, b.minY = math.Min(b.minX, x0), math.Min(b.minY, y0)
	b.maxX, b.maxY = math.Max(b.maxX, x1), math.Max(b.maxY, y1)
}

func newRenderer(logger *slog.Logger, fonts *Fonts) *renderer {
	gp := &gopdf.GoPdf{}
	gp.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	return &renderer{
		gp:     gp,
		fonts:  fonts,
		glyphs: newGlyphs(logger, fonts),
		widths: make(map[fontKey]map[rune]float64),
		added:  make(map[string]bool),
		grey:   -1,
		drawn:  box{empty: true},
	}
}

// setFont makes family at size the font gp draws and measures in. A font
// is added to the document when it is first used, so that a report
// embeds only the fonts it draws with (subset to the characters used).
// gopdf's SetFont looks the font up among all the document's objects, so
// it is called only on a change.
func (r *renderer) setFont(family string, size float64) error {
	if family == r.family && size == r.size {
		return nil
	}
	if !r.added[family] {
		if err := r.gp.AddTTFFontFromFontContainer(family, r.fonts.container); err != nil {
			return fmt.Errorf("font %s: %w", family, err)
		}
		r.added[family] = true
	}
	if err := r.gp.SetFont(family, "", size); err != nil {
		return err
	}
	r.family, r.size = family, size
	return nil
}

// Vertical gaps of the report's layout, in points.
const (
	partGap  = 22.0 // above a part's heading
	itemGap  = 14.0 // between the tables and charts of a part
	afterGap = 5.0  // under a part's heading and its meta line
)

// report lays out the whole document: the title, then the three parts
// (decisions.md, "patentsvc: what changed, and what the portfolio
// covers"): the portfolio facts, the tracking chart of a tracked company,
// and the analyses, opened by their summary and their chart per month.
func (r *renderer) report(company string, generated time.Time, summary patent.ReportSummary, records []patent.AnalysisRecord) error {
	if err := r.newPage(); err != nil {
		return err
	}
	if err := r.paragraph(styleTitle, marginLeft, contentWidth, "Patent Analysis Report: "+company); err != nil {
		return err
	}
	r.y += 2
	if err := r.paragraph(styleMeta, marginLeft, contentWidth, "Generated "+generated.UTC().Format("2006-01-02 15:04")+" UTC"); err != nil {
		return err
	}
	r.y += 6
	if err := r.portfolio(summary); err != nil {
		return err
	}
	if summary.Tracked {
		if err := r.tracking(summary); err != nil {
			return err
		}
	}
	r.space(partGap)
	rows, err := r.layFacts(summaryRows(summary))
	if err != nil {
		return err
	}
	// The heading keeps the first two rows of the summary table.
	if err := r.heading(stylePart, "Analyses", afterGap+factsHeight(rows, 2)); err != nil {
		return err
	}
	r.y += afterGap
	if err := r.factsTable(rows); err != nil {
		return err
	}
	if summary.Total > len(records) {
		r.y += 6
		note := fmt.Sprintf("This report shows the %d most recent of %d analyses.", len(records), summary.Total)
		if err := r.paragraph(styleMeta, marginLeft, contentWidth, note); err != nil {
			return err
		}
	}
	r.space(itemGap)
	if err := r.monthChart(summary); err != nil {
		return err
	}
	for i, rec := range records {
		r.space(20)
		if err := r.section(i+1, len(records), rec); err != nil {
			return err
		}
	}
	return nil
}

// heading draws text in style st at the left margin, on a new page unless
// the heading's lines and need points below it fit on this one: a heading
// is never the last line of a page. need is capped at a page, so that a
// heading at the top of a page stays there.
func (r *renderer) heading(st style, text string, need float64) error {
	lines, err := r.lines(plainSpans(st, text), contentWidth)
	if err != nil {
		return err
	}
	if err := r.keep(float64(len(lines))*st.lead + need); err != nil {
		return err
	}
	return r.paragraph(st, marginLeft, contentWidth, text)
}

// keep starts a new page unless h points fit below r.y on this one (or
// the page is empty, or h is more than a page).
func (r *renderer) keep(h float64) error {
	if r.y > marginTop && r.y+h > contentEnd && h <= contentEnd-marginTop {
		return r.newPage()
	}
	return nil
}

// Chart heights, in points.
const (
	countChartHeight = 190.0
	monthChartHeight = 150.0
	yearChartHeight  = 140.0
)

// useChartFonts prepares the document for a chart: the charts draw in
// the Go faces, which the renderer adds to the document when it first
// uses them, so it uses both first.
func (r *renderer) useChartFonts() error {
	for _, f := range []face{faceRegular, faceBold} {
		if err := r.setFont(f.family(), styleBody.size); err != nil {
			return err
		}
	}
	return nil
}

// chartDrawn moves r.y below a chart of height h and makes the renderer
// set its font and colours again: the charts set them behind its back.
func (r *renderer) chartDrawn(h float64) {
	r.y += h
	r.family, r.size, r.grey = "", 0, -1
}

// tracking draws the tracking part of a tracked company: its patent count
// per scheduled run, alerts marked.
func (r *renderer) tracking(s patent.ReportSummary) error {
	r.space(partGap)
	if err := r.heading(stylePart, "Tracking", afterGap+countChartHeight); err != nil {
		return err
	}
	r.y += afterGap
	if err := r.useChartFonts(); err != nil {
		return err
	}
	count := Chart{Title: "Patent count per scheduled run", Unit: "patents", Empty: "No runs yet",
		MarkLabel: "alert", MissingLabel: "search failed"}
	if err := DrawLineChart(r.gp, marginLeft, r.y, contentWidth, countChartHeight, count, RunPoints(s.Runs)); err != nil {
		return err
	}
	r.chartDrawn(countChartHeight)
	return nil
}

// monthChart draws the company's analyses per month (every company has
// analyses: the chart is not a tracking one), or a line saying there are
// none in the period when the caller gave no months.
func (r *renderer) monthChart(s patent.ReportSummary) error {
	if len(s.Months) == 0 {
		return r.paragraph(styleMeta, marginLeft, contentWidth, "No analyses per month to chart.")
	}
	if err := r.keep(monthChartHeight); err != nil {
		return err
	}
	if err := r.useChartFonts(); err != nil {
		return err
	}
	months := Chart{Title: "Analyses per month", Unit: "analyses", Empty: "No analyses in the period"}
	if err := DrawBarChart(r.gp, marginLeft, r.y, contentWidth, monthChartHeight, months, MonthPoints(s.Months)); err != nil {
		return err
	}
	r.chartDrawn(monthChartHeight)
	return nil
}

// summaryRows are the rows of the summary of the analyses: Total
// Analyses, Analysis Types, Models Used.
func summaryRows(s patent.ReportSummary) [][2]string {
	return [][2]string{
		{"Total Analyses", strconv.Itoa(s.Total)},
		{"Analysis Types", list(s.Types)},
		{"Models Used", list(s.Models)},
	}
}

// Geometry of the label and value tables, in points.
const (
	summaryLabelWidth = 130.0
	summaryPad        = 5.0
)

// factsRow is a row of a label and value table, laid out.
type factsRow struct {
	label, value []line
	height       float64
}

// layFacts lays out rows of labels and values for factsTable: a value
// wraps within its column, at most maxSummaryLines lines (a longer one
// ends in "…"), so that a row always fits on a page.
func (r *renderer) layFacts(rows [][2]string) ([]factsRow, error) {
	const pad = summaryPad
	valueWidth := contentWidth - summaryLabelWidth
	out := make([]factsRow, len(rows))
	for i, row := range rows {
		// Narrower than the cell by the width of the "…" a cut list ends in.
		lines, err := r.lines(plainSpans(styleBody, row[1]), valueWidth-2*pad-12)
		if err != nil {
			return nil, err
		}
		if len(lines) > maxSummaryLines {
			lines = lines[:maxSummaryLines]
			ellipsis, err := r.lines([]span{styleBody.span(" …")}, valueWidth)
			if err != nil {
				return nil, err
			}
			for _, p := range ellipsis[0].pieces {
				lines[maxSummaryLines-1].add(p)
			}
		}
		label, err := r.lines(plainSpans(styleLabel, row[0]), summaryLabelWidth-2*pad)
		if err != nil {
			return nil, err
		}
		n := max(len(lines), len(label))
		out[i] = factsRow{label: label, value: lines, height: float64(n)*styleBody.lead + 2*pad}
	}
	return out, nil
}

// factsHeight is the height of the first n rows.
func factsHeight(rows []factsRow, n int) float64 {
	h := 0.0
	for _, row := range rows[:min(n, len(rows))] {
		h += row.height
	}
	return h
}

// factsTable draws rows laid out by layFacts: a grey label column and a
// value column, a row that does not fit on the page on the next one.
func (r *renderer) factsTable(rows []factsRow) error {
	const (
		labelWidth = summaryLabelWidth
		pad        = summaryPad
	)
	valueWidth := contentWidth - labelWidth
	for _, row := range rows {
		h := row.height
		if r.y+h > contentEnd {
			if err := r.newPage(); err != nil {
				return err
			}
		}
		r.gp.SetLineWidth(0.6)
		r.gp.SetStrokeColor(160, 160, 160)
		r.gp.SetFillColor(238, 238, 238)
		r.gp.RectFromUpperLeftWithStyle(marginLeft, r.y, labelWidth, h, "FD")
		r.gp.RectFromUpperLeftWithStyle(marginLeft+labelWidth, r.y, valueWidth, h, "D")
		top := r.y + pad
		for i := range max(len(row.label), len(row.value)) {
			baseline := baselineOf(top+float64(i)*styleBody.lead, styleBody.lead, styleBody.size)
			if i < len(row.label) {
				if err := r.draw(marginLeft+pad, baseline, row.label[i]); err != nil {
					return err
				}
			}
			if i < len(row.value) {
				if err := r.draw(marginLeft+labelWidth+pad, baseline, row.value[i]); err != nil {
					return err
				}
			}
		}
		r.y += h
	}
	return nil
}

// list joins values for the summary table; an empty list is a dash.
func list(values []string) string {
	var b strings.Builder
	for _, v := range values {
		if v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v)
	}
	if b.Len() == 0 {
		return "—"
	}
	return b.String()
}

// section draws one analysis: a bold heading with its number and type,
// its model, time and patent, a rule, then its text as Markdown. The
// heading starts a new page unless it fits with its meta lines and the
// first two lines of the text.
func (r *renderer) section(n, total int, rec patent.AnalysisRecord) error {
	heading := fmt.Sprintf("Analysis %d of %d: %s", n, total, orDash(rec.AnalysisType))
	meta := []string{"Model: " + orDash(rec.Model), "Time: " + timeOrDash(rec.Timestamp)}
	if rec.PatentID != "" {
		meta = append(meta, "Patent: "+rec.PatentID)
	}
	var (
		src  []byte
		doc  ast.Node
		body = block{x: marginLeft, width: contentWidth}
	)
	if strings.TrimSpace(rec.Response) != "" {
		src, doc = parseMarkdown(rec.Response)
	}
	need := 2.0 + 4 + 6 + styleMeta.lead // the gaps and the rule; "(no analysis text)"
	for _, m := range meta {
		lines, err := r.lines(plainSpans(styleMeta, m), contentWidth)
		if err != nil {
			return err
		}
		need += float64(len(lines)) * styleMeta.lead
	}
	if doc != nil && doc.FirstChild() != nil {
		h, _, err := r.leadHeight(src, doc.FirstChild(), body, 2, pageRoom)
		if err != nil {
			return err
		}
		need += h - styleMeta.lead
	}
	if err := r.heading(styleSubhead, heading, need); err != nil {
		return err
	}
	r.y += 2
	for _, m := range meta {
		if err := r.paragraph(styleMeta, marginLeft, contentWidth, m); err != nil {
			return err
		}
	}
	r.y += 4
	r.gp.SetLineWidth(0.5)
	r.gp.SetStrokeColor(200, 200, 200)
	r.gp.Line(marginLeft, r.y, marginLeft+contentWidth, r.y)
	r.y += 6
	if doc == nil {
		return r.paragraph(styleMeta, marginLeft, contentWidth, "(no analysis text)")
	}
	return r.blocks(src, doc, body)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// newPage starts a page with its footer and puts the cursor at the top.
func (r *renderer) newPage() error {
	r.gp.AddPage()
	r.page++
	label := "Page " + strconv.Itoa(r.page)
	lines, err := r.lines([]span{styleFooter.span(label)}, contentWidth)
	if err != nil {
		return err
	}
	if err := r.draw(pageWidth/2-lines[0].width/2, footerY, lines[0]); err != nil {
		return err
	}
	r.y = marginTop
	return nil
}

// baselineOf is where a line of text of size sits in a line of height lead
// whose top is at y (Go fonts: ascent about 0.93 em, descent 0.21 em).
func baselineOf(y, lead, size float64) float64 {
	return y + (lead-size)/2 + 0.86*size
}

// band is a background drawn behind a whole line: a code block's.
type band struct {
	x, width float64
}

// startLine makes room for a line of height lead at r.y, on a new page
// when it does not fit, and draws what the line has beside it: the bars of
// the block quotes it is in, its background, and the markers of the list
// items it starts. It returns the baseline for text of size.
func (r *renderer) startLine(lead, size float64, bg *band) (float64, error) {
	if r.y+lead > contentEnd {
		if err := r.newPage(); err != nil {
			return 0, err
		}
	}
	if bg != nil {
		r.gp.SetFillColor(242, 242, 242)
		r.gp.RectFromUpperLeftWithStyle(bg.x, r.y, bg.width, lead, "F")
	}
	r.drawBars(r.y, lead)
	baseline := baselineOf(r.y, lead, size)
	for _, m := range r.markers {
		l, err := r.lines([]span{styleBody.span(m.text)}, math.Inf(1))
		if err != nil {
			return 0, err
		}
		mb := baselineOf(r.y, lead, styleBody.size)
		if err := r.draw(max(m.left, m.right-l[0].width), mb, l[0]); err != nil {
			return 0, err
		}
	}
	r.markers = r.markers[:0]
	return baseline, nil
}

// drawBars draws the block-quote bars from y down h.
func (r *renderer) drawBars(y, h float64) {
	if len(r.bars) == 0 {
		return
	}
	r.gp.SetLineWidth(1.5)
	r.gp.SetStrokeColor(190, 190, 190)
	for _, x := range r.bars {
		r.gp.Line(x, y, x, y+h)
	}
}

// space moves down by h between blocks, drawing the block-quote bars
// beside the gap; nothing at the top of a page.
func (r *renderer) space(h float64) {
	if r.y <= marginTop {
		return
	}
	if r.y+h <= contentEnd {
		r.drawBars(r.y, h)
	}
	r.y += h
}

// draw draws l with its left edge at x and its baseline at baseline.
func (r *renderer) draw(x, baseline float64, l line) error {
	for _, p := range l.pieces {
		if err := r.setFont(p.family, p.size); err != nil {
			return err
		}
		if p.code {
			r.gp.SetFillColor(236, 236, 236)
			r.gp.RectFromUpperLeftWithStyle(x-1, baseline-0.86*p.size-1, p.width+2, 1.15*p.size+2, "F")
		}
		if int(p.grey) != r.grey {
			r.gp.SetTextColor(p.grey, p.grey, p.grey)
			r.grey = int(p.grey)
		}
		r.gp.SetXY(x, baseline)
		if err := r.gp.Text(p.text); err != nil {
			return err
		}
		r.drawn.add(x, baseline-p.size, x+p.width, baseline+0.25*p.size)
		x += p.width
	}
	return nil
}

// lines lays spans out within width.
func (r *renderer) lines(spans []span, width float64) ([]line, error) {
	words, err := r.words(spans)
	if err != nil {
		return nil, err
	}
	var out []line
	err = r.layout(words, width, func(l line) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// flow draws spans at x, wrapped to width, one line of height st.lead
// after another, with page breaks as needed. Lines are laid out and drawn
// one at a time, so a long text costs no more than its output. bg, when
// not nil, is drawn behind each line.
func (r *renderer) flow(spans []span, x, width float64, st style, bg *band) error {
	words, err := r.words(spans)
	if err != nil {
		return err
	}
	return r.layout(words, width, func(l line) error {
		baseline, err := r.startLine(st.lead, st.size, bg)
		if err != nil {
			return err
		}
		if err := r.draw(x, baseline, l); err != nil {
			return err
		}
		r.y += st.lead
		return nil
	})
}

// paragraph draws text in style s at x, wrapped to width, with its own
// line breaks kept and page breaks as needed.
func (r *renderer) paragraph(s style, x, width float64, text string) error {
	return r.flow(plainSpans(s, text), x, width, s, nil)
}
