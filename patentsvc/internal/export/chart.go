package export

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The charts of the PDF report (decisions.md, "The analyst's report"): a
// step chart of a tracked company's patent count over time, with its
// alerts marked, and a bar chart of its analyses per month. They are drawn
// as vector graphics in black and greys only, and every distinction is a
// shape as well as a shade (an alert is a triangle, a run without a count a
// cross), so they read the same printed in black and white.
//
// A chart draws into the box it is given, on the current page, and nothing
// outside it; it leaves the line width, colours, dash and font set as it
// last used them, so the caller sets its own before drawing again, and a
// caller that remembers the font or grey it last set must forget them (the
// report's renderer: its family, size and grey). Its text is ASCII
// (digits, month names) apart from the title and labels the caller passes,
// which are drawn as given: a caller passing text the fonts may lack passes
// it through the report's glyph substitution first (company names are
// ASCII: patent.ParseCompanyName).

// ChartPoint is one point of a chart: Value at At. In the line chart, Mark
// draws the point with the alert marker, and a Value that is NaN (or
// infinite) is a point without a value, such as a run whose search failed:
// the line goes on from the previous value and a cross on the time axis
// shows the point. In the bar chart, each point is one bar, labelled with
// At's month.
type ChartPoint struct {
	At    time.Time
	Value float64
	Mark  bool
}

// Chart is what a chart says besides its points.
type Chart struct {
	// Title is drawn in bold at the top left of the box.
	Title string
	// Unit names the values, above the value axis ("patents").
	Unit string
	// Empty is drawn in the middle of the plot when there are no points
	// ("No runs yet").
	Empty string
	// MarkLabel and MissingLabel are the legend of marked points and of
	// points without a value, shown when the chart has some (line chart
	// only; "alert" and "no count" when empty).
	MarkLabel, MissingLabel string
	// Yearly makes the bars of a bar chart years (YearPoints'), labelled
	// with At's year, rather than months.
	Yearly bool
}

// Chart geometry, in points, and type sizes.
const (
	chartTitleSize = 10.5
	chartLabelSize = 7
	chartEmptySize = 9
	chartTickGap   = 8.0 // least room between two tick labels
	// markDotsBelow is the smallest average distance between points at
	// which each point gets a dot; closer points are the line alone.
	markDotsBelow = 7.0
	// maxTimeTicks is the most labels of the time axis.
	maxTimeTicks = 13
)

// Greys (0 black, 255 white).
const (
	greyInk   = 0
	greyTicks = 70  // tick labels, unit
	greyGrid  = 222 // grid lines
	greyBar   = 150 // bar fill
	greyEmpty = 120 // the empty message and its frame
)

// The font families the charts draw with: the report's regular and bold
// Go faces, under the names the report registers them by.
var (
	familyRegular = faceRegular.family()
	familyBold    = faceBold.family()
)

// AddChartFonts registers the Go regular and bold fonts under the font
// families the charts draw with, in a document other than the report. In
// the report, the renderer adds its fonts to the document when it first
// uses them: it must have used both before drawing a chart.
func AddChartFonts(pdf *gopdf.GoPdf) error {
	for _, f := range []struct {
		family string
		ttf    []byte
	}{{familyRegular, goregular.TTF}, {familyBold, gobold.TTF}} {
		// With the report's hyphen (cmap.go).
		ttf, err := withTextHyphen(f.ttf)
		if err == nil {
			err = pdf.AddTTFFontData(f.family, ttf)
		}
		if err != nil {
			return fmt.Errorf("chart font %s: %w", f.family, err)
		}
	}
	return nil
}

// RunPoints turns a tracked company's history (TrackingHistory's runs,
// oldest first) into the points of its patent count chart: each run's
// count, NaN for a run whose search failed, marked when it raised an
// alert.
func RunPoints(runs []patent.TrackingRun) []ChartPoint {
	out := make([]ChartPoint, len(runs))
	for i, r := range runs {
		out[i] = ChartPoint{At: r.RunAt, Value: math.NaN(), Mark: r.Alert}
		if r.PatentCount != nil {
			out[i].Value = float64(*r.PatentCount)
		}
	}
	return out
}

// MonthPoints turns counts per calendar month (AnalysesPerMonth's, Month
// "YYYY-MM") into the bars of the analyses chart, in the order given; a
// month that does not parse is left out.
func MonthPoints(months []patent.MonthCount) []ChartPoint {
	out := make([]ChartPoint, 0, len(months))
	for _, m := range months {
		at, err := time.Parse("2006-01", m.Month)
		if err != nil {
			continue
		}
		out = append(out, ChartPoint{At: at, Value: float64(m.Count)})
	}
	return out
}

// maxYearBars is the most years YearPoints makes bars of: the latest.
const maxYearBars = 100

// YearPoints turns counts per year (Portfolio.ByYear's) into the bars of
// a yearly bar chart: one bar per calendar year from the first to the
// last, oldest first, a year without a count a bar of 0, at most the
// latest maxYearBars years.
func YearPoints(years []patent.YearCount) []ChartPoint {
	if len(years) == 0 {
		return nil
	}
	first, last := years[0].Year, years[0].Year
	for _, y := range years {
		first, last = min(first, y.Year), max(last, y.Year)
	}
	first = max(first, last-maxYearBars+1)
	out := make([]ChartPoint, last-first+1)
	for i := range out {
		out[i].At = time.Date(first+i, time.January, 1, 0, 0, 0, 0, time.UTC)
	}
	for _, y := range years {
		if y.Year >= first {
			out[y.Year-first].Value += float64(y.Count)
		}
	}
	return out
}

// DrawLineChart draws a step chart of pts in the box whose upper left
// corner is x, y and whose size is w by h (points, gopdf's page
// coordinates): each value holds until the next point, the way a count
// re-measured at each run does. Points are drawn in time order whatever
// their order in pts. The time axis is labelled with round dates (hours,
// days, weeks, months or years, as many as fit, with the year, or the day
// for hours, below the first label and wherever it changes); the value
// axis with round values, from 0 unless the values stay above half their
// maximum. Marked points get a black triangle, and each point a dot while
// they are at least 7 points apart on average. With no point the box
// shows the title and c.Empty; one point is drawn alone, in the middle
// of a week.
//
// It returns an error when the box is too small to hold a chart (under
// 120 by 80 points) or gopdf fails (a font family not registered).
func DrawLineChart(pdf *gopdf.GoPdf, x, y, w, h float64, c Chart, pts []ChartPoint) error {
	d, err := newChartDrawer(pdf, x, y, w, h)
	if err != nil {
		return err
	}
	pts = slices.Clone(pts)
	slices.SortStableFunc(pts, func(a, b ChartPoint) int { return a.At.Compare(b.At) })
	var values []float64
	marked, missing := false, false
	for _, p := range pts {
		if finite(p.Value) {
			values = append(values, p.Value)
		} else {
			missing = true
		}
		marked = marked || p.Mark && finite(p.Value)
	}
	d.title(c.Title)
	var legend []legendEntry
	if marked {
		legend = append(legend, legendEntry{shapeTriangle, orDefault(c.MarkLabel, "alert")})
	}
	if missing {
		legend = append(legend, legendEntry{shapeCross, orDefault(c.MissingLabel, "no count")})
	}
	d.legend(legend)
	if len(pts) == 0 {
		d.empty(c.Empty)
		return d.err
	}

	lo, hi := valueRange(values, false)
	d.valueAxis(lo, hi, c.Unit)
	t0, t1 := pts[0].At, pts[len(pts)-1].At
	if !t1.After(t0) {
		t0, t1 = t0.Add(-3*24*time.Hour), t1.Add(3*24*time.Hour)
	} else {
		pad := t1.Sub(t0) / 50
		t0, t1 = t0.Add(-pad), t1.Add(pad)
	}
	d.timeAxis(t0, t1)
	xOf := func(t time.Time) float64 { return d.left + float64(t.Sub(t0))/float64(t1.Sub(t0))*d.width() }
	d.steps(pts, xOf)
	size := d.markers(pts, xOf, len(values))
	d.frame()
	d.latest(pts, xOf, size)
	return d.err
}

// steps draws the line: each value held until the next point that has
// one, then a vertical step to it.
func (d *chartDrawer) steps(pts []ChartPoint, xOf func(time.Time) float64) {
	d.pdf.SetLineType("")
	d.pdf.SetStrokeColor(greyInk, greyInk, greyInk)
	d.pdf.SetLineWidth(1.2)
	var prev *ChartPoint
	for i := range pts {
		p := &pts[i]
		if !finite(p.Value) {
			continue
		}
		if prev != nil {
			px, nx := xOf(prev.At), xOf(p.At)
			py, ny := d.yOf(prev.Value), d.yOf(p.Value)
			d.pdf.Line(px, py, nx, py)
			if ny != py {
				d.pdf.Line(nx, py, nx, ny)
			}
		}
		prev = p
	}
}

// markers draws a dot on each point that has a value while they are at
// least markDotsBelow apart on average (values of them), a cross above the
// time axis for each point without one, and a triangle on each marked
// point, last, on top (smaller when they crowd). It returns the
// triangles' size.
func (d *chartDrawer) markers(pts []ChartPoint, xOf func(time.Time) float64, values int) float64 {
	dots := values > 0 && d.width()/float64(values) >= markDotsBelow
	for _, p := range pts {
		switch {
		case !finite(p.Value):
			d.cross(xOf(p.At), d.bottom-3.5, 2.5)
		case dots && !p.Mark:
			d.dot(xOf(p.At), d.yOf(p.Value), 1.7)
		}
	}
	size := 4.5
	if n := countMarks(pts); n > 0 && d.width()/float64(n) < 3*size {
		size = 3
	}
	for _, p := range pts {
		if p.Mark && finite(p.Value) {
			d.triangle(xOf(p.At), d.yOf(p.Value), size)
		}
	}
	return size
}

// latest labels the last point that has a value with that value, in bold:
// the figure a reader looks for first. The label goes on the side of the
// point the line does not come from (above it, or below it when the last
// step goes down), or left of it when that side has no room.
func (d *chartDrawer) latest(pts []ChartPoint, xOf func(time.Time) float64, markSize float64) {
	last, prev := -1, -1
	for i := len(pts) - 1; i >= 0 && prev < 0; i-- {
		if finite(pts[i].Value) {
			if last < 0 {
				last = i
			} else {
				prev = i
			}
		}
	}
	if last < 0 {
		return
	}
	p := pts[last]
	s := formatValue(p.Value)
	d.font(familyBold, chartLabelSize)
	d.textColor(greyInk)
	w := d.measure(s)
	px, py := xOf(p.At), d.yOf(p.Value)
	r := 2.0 // the marker's half size
	if p.Mark {
		r = markSize
	}
	cx := min(max(px-w/2, d.left+2), d.x+d.w-w)
	below := prev >= 0 && pts[prev].Value > p.Value
	switch {
	case !below && py-r-2-chartLabelSize >= d.top-6:
		d.text(cx, py-r-2, s)
	case below && py+r+2+chartLabelSize <= d.bottom-2:
		d.text(cx, py+r+1+chartLabelSize, s)
	default:
		d.text(max(px-r-3-w, d.left+2), py+chartLabelSize*0.35, s)
	}
}

// DrawBarChart draws one bar per point, in the order given, in the box
// whose upper left corner is x, y and whose size is w by h: meant for
// counts per calendar month (AnalysesPerMonth's), each bar labelled with
// At's month, as many labels as fit (every month, or every 2, 3, 4, 6,
// 12, 24, 60 or 120, on round months), with the year below the first label
// and each January; with c.Yearly, for counts per year (YearPoints'),
// each bar labelled with At's year (every year, or every 2, 5, 10, 20 or
// 50, on round years). Bars are grey with a black outline, at most
// maxBarWidth wide; a bar whose value
// is 0 is not drawn, and each bar shows its value above it (0 for an empty
// month) while there is room. The value axis starts at 0. With no point
// the box shows the title and c.Empty. Mark and non-finite values are
// ignored (a NaN bar is not drawn).
//
// It returns an error when the box is too small to hold a chart (under
// 120 by 80 points) or gopdf fails.
func DrawBarChart(pdf *gopdf.GoPdf, x, y, w, h float64, c Chart, bars []ChartPoint) error {
	d, err := newChartDrawer(pdf, x, y, w, h)
	if err != nil {
		return err
	}
	d.title(c.Title)
	if len(bars) == 0 {
		d.empty(c.Empty)
		return d.err
	}
	var values []float64
	for _, b := range bars {
		if finite(b.Value) {
			values = append(values, b.Value)
		}
	}
	lo, hi := valueRange(values, true)
	d.valueAxis(lo, hi, c.Unit)

	slot := d.width() / float64(len(bars))
	barW := min(max(slot*0.66, 0.6), maxBarWidth)
	if c.Yearly {
		d.yearLabels(bars, slot)
	} else {
		d.monthLabels(bars, slot)
	}

	// Value labels above the bars while each fits its slot.
	d.font(familyRegular, chartLabelSize)
	widest := 0.0
	for _, b := range bars {
		if finite(b.Value) && b.Value > 0 {
			widest = max(widest, d.measure(formatValue(b.Value)))
		}
	}
	showValues := widest+2 <= slot
	pdf.SetLineType("")
	pdf.SetLineWidth(0.5)
	for i, b := range bars {
		if !finite(b.Value) {
			continue
		}
		cx := d.left + (float64(i)+0.5)*slot
		if b.Value == 0 {
			if showValues { // an empty month says so
				d.textColor(greyTicks)
				d.text(cx-d.measure("0")/2, d.bottom-2.5, "0")
			}
			continue
		}
		// From 0 to the value (the axis starts at 0 unless a value is
		// negative).
		top, base := d.yOf(b.Value), d.yOf(max(d.lo, 0))
		pdf.SetStrokeColor(greyInk, greyInk, greyInk)
		pdf.SetFillColor(greyBar, greyBar, greyBar)
		pdf.RectFromUpperLeftWithStyle(cx-barW/2, min(top, base), barW, math.Abs(base-top), "FD")
		top = min(top, base)
		if showValues {
			s := formatValue(b.Value)
			d.textColor(greyInk)
			d.text(cx-d.measure(s)/2, top-2.5, s)
		}
	}
	d.frame()
	return d.err
}

// chartDrawer draws one chart; the first gopdf error sticks in err and
// makes the rest do nothing.
type chartDrawer struct {
	pdf *gopdf.GoPdf
	err error
	// The box, and the plot area inside it.
	x, y, w, h               float64
	left, right, top, bottom float64
	lo, hi                   float64 // the value axis's range
}

// newChartDrawer lays out the box: the title line, the unit line, the
// plot, and two lines of time labels below it. The plot's left edge is
// set by valueAxis, once the widest value label is known.
func newChartDrawer(pdf *gopdf.GoPdf, x, y, w, h float64) (*chartDrawer, error) {
	if pdf == nil {
		return nil, errors.New("chart: no document")
	}
	if w < 120 || h < 80 {
		return nil, fmt.Errorf("chart: box %.0fx%.0f pt is too small (120x80 at least)", w, h)
	}
	return &chartDrawer{pdf: pdf, x: x, y: y, w: w, h: h,
		left: x + 24, right: x + w - 14, top: y + 31, bottom: y + h - 22}, nil
}

func (d *chartDrawer) width() float64  { return d.right - d.left }
func (d *chartDrawer) height() float64 { return d.bottom - d.top }

// yOf is the page y of value v.
func (d *chartDrawer) yOf(v float64) float64 {
	return d.bottom - (v-d.lo)/(d.hi-d.lo)*d.height()
}

func (d *chartDrawer) font(family string, size float64) {
	if d.err == nil {
		d.err = d.pdf.SetFont(family, "", size)
	}
}

func (d *chartDrawer) textColor(grey uint8) { d.pdf.SetTextColor(grey, grey, grey) }

func (d *chartDrawer) measure(s string) float64 {
	if d.err != nil {
		return 0
	}
	w, err := d.pdf.MeasureTextWidth(s)
	if err != nil {
		d.err = err
	}
	return w
}

// text draws s with its baseline at y.
func (d *chartDrawer) text(x, baseline float64, s string) {
	if d.err != nil || s == "" {
		return
	}
	d.pdf.SetXY(x, baseline)
	d.err = d.pdf.Text(s)
}

// title draws the chart's title on the first line of the box, cut to the
// box's width.
func (d *chartDrawer) title(s string) {
	d.font(familyBold, chartTitleSize)
	d.textColor(greyInk)
	d.text(d.x, d.y+chartTitleSize, d.fit(s, d.w*0.62))
}

// fit cuts s, ending it with "...", to at most width in the current font.
func (d *chartDrawer) fit(s string, width float64) string {
	if d.measure(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && d.err == nil {
		r = r[:len(r)-1]
		if t := strings.TrimRight(string(r), " ") + "..."; d.measure(t) <= width {
			return t
		}
	}
	return ""
}

type shape int

const (
	shapeTriangle shape = iota
	shapeCross
)

type legendEntry struct {
	shape shape
	label string
}

// legend draws the entries right-aligned on the title line, each its
// marker then its label.
func (d *chartDrawer) legend(entries []legendEntry) {
	if len(entries) == 0 {
		return
	}
	d.font(familyRegular, chartLabelSize+0.5)
	const marker, gap = 9.0, 10.0
	total := 0.0
	for _, e := range entries {
		total += marker + d.measure(e.label) + gap
	}
	x := d.x + d.w - total + gap
	mid := d.y + chartTitleSize - 2.6
	for _, e := range entries {
		switch e.shape {
		case shapeTriangle:
			d.triangle(x+3.5, mid, 4)
		case shapeCross:
			d.cross(x+3.5, mid, 2.5)
		}
		d.font(familyRegular, chartLabelSize+0.5)
		d.textColor(greyInk)
		d.text(x+marker, d.y+chartTitleSize, e.label)
		x += marker + d.measure(e.label) + gap
	}
}

// empty draws the plot's frame in grey and msg in its middle.
func (d *chartDrawer) empty(msg string) {
	msg = orDefault(msg, "No data")
	d.left = d.x
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.5)
	d.pdf.SetStrokeColor(greyEmpty+60, greyEmpty+60, greyEmpty+60)
	d.pdf.RectFromUpperLeftWithStyle(d.left, d.top, d.width(), d.height(), "D")
	d.font(familyRegular, chartEmptySize)
	d.textColor(greyEmpty)
	d.text(d.left+(d.width()-d.measure(msg))/2, d.top+d.height()/2+chartEmptySize*0.35, msg)
}

// valueAxis sets the value range to round values around lo..hi, moves the
// plot's left edge right of the widest label, and draws the grid lines,
// the labels and the unit.
func (d *chartDrawer) valueAxis(lo, hi float64, unit string) {
	maxTicks := max(2, int(d.height()/22))
	// Some room above the highest value, for its label.
	start, step, n := niceScale(lo, hi+(hi-lo)*0.04, maxTicks)
	d.lo, d.hi = start, start+step*float64(n)
	labels := make([]string, n+1)
	d.font(familyRegular, chartLabelSize)
	widest := 0.0
	for i := range labels {
		labels[i] = formatValue(start + step*float64(i))
		widest = max(widest, d.measure(labels[i]))
	}
	d.left = d.x + widest + 5
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.4)
	d.pdf.SetStrokeColor(greyGrid, greyGrid, greyGrid)
	d.textColor(greyTicks)
	for i, l := range labels {
		yy := d.yOf(start + step*float64(i))
		if i > 0 {
			d.pdf.Line(d.left, yy, d.right, yy)
		}
		d.text(d.left-4-d.measure(l), yy+chartLabelSize*0.35, l)
	}
	if unit != "" {
		d.text(d.x, d.top-6, unit)
	}
}

// frame draws the two axes, over the plot.
func (d *chartDrawer) frame() {
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.7)
	d.pdf.SetStrokeColor(greyInk, greyInk, greyInk)
	d.pdf.Line(d.left, d.top, d.left, d.bottom)
	d.pdf.Line(d.left, d.bottom, d.right, d.bottom)
}

// tickLabel is a label of the time axis: its position, its text and the
// context line below it (the year, or the day), drawn where it changes.
type tickLabel struct {
	x             float64
	text, context string
}

// labelRow draws the labels below the plot, each centred on its x and kept
// inside the box, the contexts only where they change and do not run into
// the previous one, and a tick mark at each.
func (d *chartDrawer) labelRow(labels []tickLabel) {
	d.font(familyRegular, chartLabelSize)
	d.textColor(greyTicks)
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.7)
	d.pdf.SetStrokeColor(greyInk, greyInk, greyInk)
	lastContext, contextEnd := "", math.Inf(-1)
	for _, l := range labels {
		d.pdf.Line(l.x, d.bottom, l.x, d.bottom+2.5)
		d.text(d.clampX(l.x, d.measure(l.text)), d.bottom+10, l.text)
		if l.context == "" || l.context == lastContext {
			continue
		}
		w := d.measure(l.context)
		cx := d.clampX(l.x, w)
		if cx < contextEnd+chartTickGap {
			continue
		}
		d.text(cx, d.bottom+19, l.context)
		lastContext, contextEnd = l.context, cx+w
	}
}

// clampX is the left x of a label of width w centred on x, moved inside
// the box.
func (d *chartDrawer) clampX(x, w float64) float64 {
	return min(max(x-w/2, d.x), d.x+d.w-w)
}

// timeStep is one spacing of time-axis ticks: a fixed duration or a
// number of calendar months, the layout of a tick's label and that of its
// context line.
type timeStep struct {
	d               time.Duration
	months          int
	layout, context string
}

var timeSteps = func() []timeStep {
	var s []timeStep
	for _, m := range []int{1, 5, 15, 30, 60, 120, 180, 360, 720} {
		s = append(s, timeStep{d: time.Duration(m) * time.Minute, layout: "15:04", context: "2 Jan 2006"})
	}
	for _, n := range []int{1, 2, 7, 14} {
		s = append(s, timeStep{d: time.Duration(n) * 24 * time.Hour, layout: "2 Jan", context: "2006"})
	}
	for _, n := range []int{1, 2, 3, 6} {
		s = append(s, timeStep{months: n, layout: "Jan", context: "2006"})
	}
	for _, n := range []int{12, 24, 60, 120, 240} {
		s = append(s, timeStep{months: n, layout: "2006"})
	}
	return s
}()

// ticks returns the round times of step within t0..t1, or nil when there
// are more than limit.
func (s timeStep) ticks(t0, t1 time.Time, limit int) []time.Time {
	t0, t1 = t0.UTC(), t1.UTC()
	var out []time.Time
	if s.d > 0 {
		if t1.Sub(t0)/s.d > time.Duration(limit) {
			return nil
		}
		// Truncate counts from the zero time, a Monday at midnight UTC:
		// days start at midnight, weeks on Mondays.
		for t := t0.Truncate(s.d); !t.After(t1); t = t.Add(s.d) {
			if !t.Before(t0) {
				out = append(out, t)
			}
		}
		return out
	}
	if int(t1.Sub(t0).Hours()/24/30) > limit*s.months {
		return nil
	}
	for t := time.Date(t0.Year(), t0.Month(), 1, 0, 0, 0, 0, time.UTC); !t.After(t1); t = t.AddDate(0, 1, 0) {
		if t.Before(t0) || !roundMonth(t, s.months) {
			continue
		}
		out = append(out, t)
		if len(out) > limit {
			return nil
		}
	}
	return out
}

// roundMonth tells whether t, the first of a month, is a round month for
// steps of n months: every n-th month from January, and for n of 12 or
// more, Januaries of years divisible by n/12.
func roundMonth(t time.Time, n int) bool {
	if n < 12 {
		return (int(t.Month())-1)%n == 0
	}
	return t.Month() == time.January && t.Year()%(n/12) == 0
}

// timeAxis draws the time labels of t0..t1: the finest step whose labels
// all fit side by side.
func (d *chartDrawer) timeAxis(t0, t1 time.Time) {
	d.font(familyRegular, chartLabelSize)
	// At most maxTimeTicks labels: a year shows its months, not its weeks.
	limit := min(int(d.width()/12), maxTimeTicks)
	span := float64(t1.Sub(t0))
	for _, s := range timeSteps {
		ts := s.ticks(t0, t1, limit)
		if len(ts) == 0 {
			continue
		}
		widest := 0.0
		for _, t := range ts {
			widest = max(widest, d.measure(t.Format(s.layout)))
		}
		room := d.width()
		for i := 1; i < len(ts); i++ {
			room = min(room, float64(ts[i].Sub(ts[i-1]))/span*d.width())
		}
		if widest+chartTickGap > room {
			continue
		}
		labels := make([]tickLabel, len(ts))
		for i, t := range ts {
			labels[i] = tickLabel{x: d.left + float64(t.Sub(t0))/span*d.width(), text: t.Format(s.layout)}
			if s.context != "" {
				labels[i].context = t.Format(s.context)
			}
		}
		d.labelRow(labels)
		return
	}
	// Not one round time fits (a span of seconds): label both ends.
	d.labelRow([]tickLabel{
		{x: d.left, text: t0.UTC().Format("15:04:05"), context: t0.UTC().Format("2 Jan 2006")},
		{x: d.right, text: t1.UTC().Format("15:04:05")},
	})
}

// maxBarWidth is the widest a bar is drawn, however few there are.
const maxBarWidth = 40.0

// yearLabels labels the bars with their years: every k-th year, for the
// smallest k of 1, 2, 5, 10, 20 or 50 whose labels fit, on years
// divisible by k (the first bar when none is).
func (d *chartDrawer) yearLabels(bars []ChartPoint, slot float64) {
	d.font(familyRegular, chartLabelSize)
	ks := []int{1, 2, 5, 10, 20, 50}
	for j, k := range ks {
		var labels []tickLabel
		widest := 0.0
		for i, b := range bars {
			y := b.At.UTC().Year()
			if y%k != 0 {
				continue
			}
			l := tickLabel{x: d.left + (float64(i)+0.5)*slot, text: strconv.Itoa(y)}
			widest = max(widest, d.measure(l.text))
			labels = append(labels, l)
		}
		if float64(k)*slot < widest+chartTickGap && j < len(ks)-1 {
			continue
		}
		if len(labels) == 0 {
			labels = []tickLabel{{x: d.left + 0.5*slot, text: strconv.Itoa(bars[0].At.UTC().Year())}}
		}
		d.labelRow(labels)
		return
	}
}

// monthLabels labels the bars with their months: every k-th month, for
// the smallest k of 1, 2, 3, 4, 6, 12, 24, 60 or 120 whose labels fit,
// on round months, with the year below the first label and each January
// (for k of 12 or more, the year alone).
func (d *chartDrawer) monthLabels(bars []ChartPoint, slot float64) {
	d.font(familyRegular, chartLabelSize)
	ks := []int{1, 2, 3, 4, 6, 12, 24, 60, 120}
	for j, k := range ks {
		layout := "Jan"
		if k >= 12 {
			layout = "2006"
		}
		var labels []tickLabel
		widest, year := 0.0, -1
		for i, b := range bars {
			m := time.Date(b.At.UTC().Year(), b.At.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
			if !roundMonth(m, k) {
				continue
			}
			l := tickLabel{x: d.left + (float64(i)+0.5)*slot, text: m.Format(layout)}
			if k < 12 && m.Year() != year {
				l.context, year = m.Format("2006"), m.Year()
			}
			widest = max(widest, d.measure(l.text))
			labels = append(labels, l)
		}
		if float64(k)*slot < widest+chartTickGap && j < len(ks)-1 {
			continue
		}
		if len(labels) == 0 { // no round month among few bars: label the first
			m := bars[0].At.UTC()
			labels = []tickLabel{{x: d.left + 0.5*slot, text: m.Format("Jan"), context: m.Format("2006")}}
		}
		d.labelRow(labels)
		return
	}
}

// The markers. Each is a shape, not a shade: the chart reads in black
// and white.

// dot is a small filled disc (a 12-gon) at x, y.
func (d *chartDrawer) dot(x, y, r float64) {
	pts := make([]gopdf.Point, 12)
	for i := range pts {
		a := float64(i) * math.Pi / 6
		pts[i] = gopdf.Point{X: x + r*math.Cos(a), Y: y + r*math.Sin(a)}
	}
	d.pdf.SetFillColor(greyInk, greyInk, greyInk)
	d.pdf.Polygon(pts, "F")
}

// triangle is a black triangle pointing up, centred on x, y, with a white
// rim that parts it from the line it sits on.
func (d *chartDrawer) triangle(x, y, r float64) {
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.9)
	d.pdf.SetStrokeColor(255, 255, 255)
	d.pdf.SetFillColor(greyInk, greyInk, greyInk)
	d.pdf.Polygon([]gopdf.Point{
		{X: x, Y: y - r},
		{X: x + r*0.95, Y: y + r*0.65},
		{X: x - r*0.95, Y: y + r*0.65},
	}, "DF")
}

// cross is an x of half-width r at x, y.
func (d *chartDrawer) cross(x, y, r float64) {
	d.pdf.SetLineType("")
	d.pdf.SetLineWidth(0.9)
	d.pdf.SetStrokeColor(greyInk, greyInk, greyInk)
	d.pdf.Line(x-r, y-r, x+r, y+r)
	d.pdf.Line(x-r, y+r, x+r, y-r)
}

// valueRange is the range of values to show: from 0 for bars, for lines
// whose values come within half of their maximum of 0, and for a flat
// line (which then shows its level); 0..1 when every value is 0 or there
// is none.
func valueRange(values []float64, fromZero bool) (lo, hi float64) {
	if len(values) == 0 {
		return 0, 1
	}
	lo, hi = slices.Min(values), slices.Max(values)
	if fromZero || lo == hi || lo >= 0 && lo <= hi/2 {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if lo == hi {
		hi = lo + 1
	}
	return lo, hi
}

// niceScale returns round axis values covering lo..hi: start, step and the
// number of steps, at most maxTicks. Whole numbers step by whole numbers
// (1, 2, 5 times a power of ten, or 2.5 from 25 up).
func niceScale(lo, hi float64, maxTicks int) (start, step float64, n int) {
	span := hi - lo
	if span <= 0 {
		span = 1
	}
	step = niceStep(span / float64(maxTicks))
	for {
		start = math.Floor(lo/step) * step
		n = int(math.Ceil((hi-start)/step - 1e-9))
		if n <= maxTicks {
			return start, step, max(n, 1)
		}
		step = niceStep(step * 1.001) // the next round step
	}
}

// niceStep is the smallest of 1, 2, 2.5 and 5 times a power of ten that
// is at least raw, and at least 1 (the charts count things); 2.5 only
// where it makes whole numbers.
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m == 2.5 && mag < 10 {
			continue
		}
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// formatValue writes a whole number with thousands separators
// ("12,345"); anything else with up to two decimals.
func formatValue(v float64) string {
	if v != math.Trunc(v) || math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
	s := strconv.FormatInt(int64(math.Abs(v)), 10)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func countMarks(pts []ChartPoint) int {
	n := 0
	for _, p := range pts {
		if p.Mark && finite(p.Value) {
			n++
		}
	}
	return n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
