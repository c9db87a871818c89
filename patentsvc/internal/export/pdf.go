package export

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// PDFSummary is what the summary table of the PDF report shows. The
// caller computes it over all of the company's analyses, which may be more
// than the ones it passes to PDF.
type PDFSummary struct {
	// Total is the number of analyses ("Total Analyses").
	Total int
	// Types are the distinct analysis types, sorted ("Analysis Types").
	Types []string
	// Models are the distinct models, sorted ("Models Used").
	Models []string
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

// Font families registered with gopdf.
const (
	familyRegular = "go-regular"
	familyBold    = "go-bold"
)

// Text styles: font, size, line height and grey level (0 is black).
type style struct {
	family string
	size   float64
	lead   float64
	grey   uint8
}

var (
	styleTitle   = style{familyBold, 18, 24, 0}
	styleSubhead = style{familyBold, 13, 18, 0}
	styleMeta    = style{familyRegular, 9, 12.5, 90}
	styleBody    = style{familyRegular, 10, 14, 0}
	styleLabel   = style{familyBold, 10, 14, 0}
	styleFooter  = style{familyRegular, 8, 10, 110}
)

// maxSummaryLines caps the lines of one summary-table value, so that the
// table always fits on a page; a longer list ends in "…".
const maxSummaryLines = 24

// PDF renders the export report of company to w: the title "Patent
// Analysis Report: <company>", "Generated <YYYY-MM-DD HH:MM UTC>" from
// generated, the summary table (Total Analyses, Analysis Types, Models
// Used), then one section per record, in the order given, with its type,
// model, time and text. When summary.Total is more than len(records), the
// report says it shows only the len(records) most recent.
//
// Text is drawn literally ("<", "&" and quotes appear as such; see the
// package documentation for what becomes of tabs, line breaks and
// characters the embedded fonts lack). Each distinct missing character is
// logged once at DEBUG on logger, which may be nil.
//
// The document is built in memory and written to w at the end; the caller
// bounds its size by capping len(records). The error is a gopdf error or
// the error writing to w, wrapped.
func PDF(w io.Writer, company string, generated time.Time, summary PDFSummary, records []patent.AnalysisRecord, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r, err := newRenderer(logger)
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
	// gopdf ignores the errors of its writes (v0.33.0, compilePdf);
	// bufio.Writer keeps the first one, refuses the writes after it and
	// returns it from Flush. It also turns gopdf's many small writes into
	// few large ones.
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := r.gp.WriteTo(bw); err != nil {
		return fmt.Errorf("export pdf: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export pdf: %w", err)
	}
	return nil
}

// renderer lays out one report. It is used once and then dropped.
type renderer struct {
	gp     *gopdf.GoPdf
	glyphs *glyphs
	page   int
	y      float64 // top of the next line on the current page
	cur    style   // the style text is drawn in
	widths map[widthKey]float64
}

func newRenderer(logger *slog.Logger) (*renderer, error) {
	fonts := []font{{familyRegular, goregular.TTF}, {familyBold, gobold.TTF}}
	g, err := newGlyphs(logger, fonts)
	if err != nil {
		return nil, err
	}
	gp := &gopdf.GoPdf{}
	gp.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	for _, f := range fonts {
		// glyphs substitutes missing characters before gopdf sees the
		// text. gopdf's own default would be a space (research 6.4), so
		// whatever slips through still becomes a visible substitute.
		opt := gopdf.TtfOption{
			OnGlyphNotFound:           g.missing,
			OnGlyphNotFoundSubstitute: func(rune) rune { return substitute },
		}
		if err := gp.AddTTFFontDataWithOption(f.family, f.ttf, opt); err != nil {
			return nil, fmt.Errorf("font %s: %w", f.family, err)
		}
	}
	return &renderer{gp: gp, glyphs: g, widths: make(map[widthKey]float64)}, nil
}

// report lays out the whole document.
func (r *renderer) report(company string, generated time.Time, summary PDFSummary, records []patent.AnalysisRecord) error {
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
	r.y += 16
	if err := r.paragraph(styleSubhead, marginLeft, contentWidth, "Summary"); err != nil {
		return err
	}
	r.y += 4
	if err := r.summaryTable(summary); err != nil {
		return err
	}
	if summary.Total > len(records) {
		r.y += 6
		note := fmt.Sprintf("This report shows the %d most recent of %d analyses.", len(records), summary.Total)
		if err := r.paragraph(styleMeta, marginLeft, contentWidth, note); err != nil {
			return err
		}
	}
	for i, rec := range records {
		r.y += 20
		if err := r.section(i+1, len(records), rec); err != nil {
			return err
		}
	}
	return nil
}

// summaryTable draws the three-row table: a grey label column and a
// value column whose text wraps.
func (r *renderer) summaryTable(s PDFSummary) error {
	const (
		labelWidth = 130.0
		pad        = 5.0
	)
	valueWidth := contentWidth - labelWidth
	rows := [][2]string{
		{"Total Analyses", strconv.Itoa(s.Total)},
		{"Analysis Types", list(s.Types)},
		{"Models Used", list(s.Models)},
	}
	r.gp.SetLineWidth(0.6)
	r.gp.SetStrokeColor(160, 160, 160)
	for _, row := range rows {
		if err := r.use(styleBody); err != nil {
			return err
		}
		// Narrower than the cell by the width of the "…" a cut list ends in.
		lines, err := r.lines(row[1], valueWidth-2*pad-12, maxSummaryLines)
		if err != nil {
			return err
		}
		h := float64(len(lines))*styleBody.lead + 2*pad
		if r.y+h > contentEnd {
			if err := r.newPage(); err != nil {
				return err
			}
		}
		r.gp.SetFillColor(238, 238, 238)
		r.gp.RectFromUpperLeftWithStyle(marginLeft, r.y, labelWidth, h, "FD")
		r.gp.RectFromUpperLeftWithStyle(marginLeft+labelWidth, r.y, valueWidth, h, "D")
		top := r.y
		r.y += pad
		if err := r.use(styleLabel); err != nil {
			return err
		}
		if err := r.text(marginLeft+pad, row[0]); err != nil {
			return err
		}
		r.y = top + pad
		if err := r.use(styleBody); err != nil {
			return err
		}
		for _, l := range lines {
			if err := r.text(marginLeft+labelWidth+pad, l); err != nil {
				return err
			}
		}
		r.y = top + h
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
// its model, time and patent, a rule, then its text.
func (r *renderer) section(n, total int, rec patent.AnalysisRecord) error {
	// Keep the heading, the meta lines and a few lines of text together.
	if need := styleSubhead.lead + 3*styleMeta.lead + 3*styleBody.lead + 10; r.y+need > contentEnd {
		if err := r.newPage(); err != nil {
			return err
		}
	}
	heading := fmt.Sprintf("Analysis %d of %d: %s", n, total, orDash(rec.AnalysisType))
	if err := r.paragraph(styleSubhead, marginLeft, contentWidth, heading); err != nil {
		return err
	}
	r.y += 2
	meta := []string{"Model: " + orDash(rec.Model), "Time: " + timeOrDash(rec.Timestamp)}
	if rec.PatentID != "" {
		meta = append(meta, "Patent: "+rec.PatentID)
	}
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
	if strings.TrimSpace(rec.Response) == "" {
		return r.paragraph(styleMeta, marginLeft, contentWidth, "(no analysis text)")
	}
	return r.paragraph(styleBody, marginLeft, contentWidth, rec.Response)
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
	prev := r.cur
	if err := r.use(styleFooter); err != nil {
		return err
	}
	label := "Page " + strconv.Itoa(r.page)
	w, err := r.gp.MeasureTextWidth(label)
	if err != nil {
		return err
	}
	r.gp.SetXY(pageWidth/2-w/2, footerY)
	if err := r.gp.Text(label); err != nil {
		return err
	}
	r.y = marginTop
	if prev.family != "" {
		return r.use(prev)
	}
	return nil
}

// use makes s the style of the text drawn next.
func (r *renderer) use(s style) error {
	if err := r.gp.SetFont(s.family, "", s.size); err != nil {
		return err
	}
	r.gp.SetTextColor(s.grey, s.grey, s.grey)
	r.cur = s
	return nil
}

// text draws one line at x on the current line and moves down a line,
// starting a new page first when the line does not fit.
func (r *renderer) text(x float64, line string) error {
	if r.y+r.cur.lead > contentEnd {
		if err := r.newPage(); err != nil {
			return err
		}
	}
	// Text takes the baseline; put it where a line of this size sits in
	// its leading (Go fonts: ascent about 0.93 em, descent 0.21 em).
	baseline := r.y + (r.cur.lead-r.cur.size)/2 + 0.86*r.cur.size
	r.gp.SetXY(x, baseline)
	if line != "" {
		if err := r.gp.Text(line); err != nil {
			return err
		}
	}
	r.y += r.cur.lead
	return nil
}

// paragraph draws text in style s at x, wrapped to width, with its own
// line breaks kept and page breaks as needed. Lines are produced and drawn
// one at a time, so a long text costs no more than its output.
func (r *renderer) paragraph(s style, x, width float64, text string) error {
	if err := r.use(s); err != nil {
		return err
	}
	return r.eachLine(text, width, func(line string) error {
		return r.text(x, line)
	})
}

// lines is the wrapped lines of text in the current style, at most max of
// them; when there are more, the last one kept ends in "…".
func (r *renderer) lines(text string, width float64, max int) ([]string, error) {
	var out []string
	err := r.eachLine(text, width, func(line string) error {
		out = append(out, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) > max {
		out = out[:max]
		out[max-1] += " …"
	}
	return out, nil
}
