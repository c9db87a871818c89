package export_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signintech/gopdf"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var chartOut = flag.String("chartout", "", "write the chart page the golden test renders (PDF and PNG) into this directory, to look at it")

// newChartDoc starts an A4 document with the charts' fonts and one page.
func newChartDoc(tb testing.TB) *gopdf.GoPdf {
	tb.Helper()
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	if err := export.AddChartFonts(pdf); err != nil {
		tb.Fatal(err)
	}
	pdf.AddPage()
	return pdf
}

func mustBytes(tb testing.TB, pdf *gopdf.GoPdf) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if _, err := pdf.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

var chartStart = time.Date(2025, 1, 6, 6, 0, 0, 0, time.UTC)

// patentRuns is a tracked company's history as the report charts it:
// weekly runs over a year and a month, the count rising with two alerts
// (a jump and a drop) and two runs whose search failed.
func patentRuns() []export.ChartPoint {
	var pts []export.ChartPoint
	count := 120.0
	for i := range 58 {
		p := export.ChartPoint{At: chartStart.AddDate(0, 0, 7*i), Value: count}
		switch i {
		case 17:
			p.Value, p.Mark = 152, true // +25%: an alert
		case 40:
			p.Value, p.Mark = 131, true // -22%: an alert
		case 23, 49:
			p.Value = math.NaN() // the search failed
		}
		if !math.IsNaN(p.Value) {
			count = p.Value
		}
		if i%5 == 2 {
			count += 3
		}
		pts = append(pts, p)
	}
	return pts
}

// analysesPerMonth is 14 months of analysis counts, two of them 0.
func analysesPerMonth() []export.ChartPoint {
	var pts []export.ChartPoint
	for i, n := range []float64{3, 5, 0, 2, 8, 12, 7, 4, 0, 1, 6, 9, 11, 4} {
		pts = append(pts, export.ChartPoint{At: time.Date(2025, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC), Value: n})
	}
	return pts
}

// manyRuns is n daily runs of a drifting count: every 61st from the 31st
// an alert, every 97th from the 51st a failed search (500 runs: 8 alerts,
// 5 failures).
func manyRuns(n int) []export.ChartPoint {
	pts := make([]export.ChartPoint, n)
	v, seed := 2000.0, uint32(1)
	for i := range pts {
		seed = seed*1664525 + 1013904223 // a fixed sequence
		v += float64(int(seed>>24)%21 - 9)
		pts[i] = export.ChartPoint{At: chartStart.AddDate(0, 0, i), Value: v}
		switch {
		case i%97 == 50:
			pts[i].Value = math.NaN()
		case i%61 == 30:
			v += 400
			pts[i].Value, pts[i].Mark = v, true
		}
	}
	return pts
}

var (
	countChart = export.Chart{Title: "Patent count: Acme Corp", Unit: "patents", Empty: "No runs yet",
		MarkLabel: "alert", MissingLabel: "search failed"}
	monthChart = export.Chart{Title: "Analyses per month", Unit: "analyses", Empty: "No analyses yet"}
)

// drawChartPage draws the fixed page of the golden test: the report's two
// charts, then the line chart with no point, one point and 500 points.
func drawChartPage(tb testing.TB) []byte {
	tb.Helper()
	pdf := newChartDoc(tb)
	const left, width = 56.7, 481.9
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(export.DrawLineChart(pdf, left, 50, width, 200, countChart, patentRuns()))
	must(export.DrawBarChart(pdf, left, 270, width, 170, monthChart, analysesPerMonth()))
	half := (width - 20) / 2
	empty := countChart
	empty.Title = "Patent count: New Co"
	must(export.DrawLineChart(pdf, left, 460, half, 130, empty, nil))
	one := countChart
	one.Title = "Patent count: Solo Inc"
	must(export.DrawLineChart(pdf, left+half+20, 460, half, 130, one,
		[]export.ChartPoint{{At: time.Date(2026, 2, 10, 6, 0, 0, 0, time.UTC), Value: 42}}))
	many := countChart
	many.Title = "Patent count: 500 daily runs"
	must(export.DrawLineChart(pdf, left, 610, width, 170, many, manyRuns(500)))
	return mustBytes(tb, pdf)
}

// TestChartText: the charts' words and numbers are on the page as text:
// the titles, the units, the legend, round value labels, months and
// years, and the empty chart's message.
func TestChartText(t *testing.T) {
	text := flat(strings.Join(mustPageTexts(t, drawChartPage(t)), " "))
	for _, want := range []string{
		"Patent count: Acme Corp", "patents", "alert", "search failed",
		"Analyses per month", "analyses", "Jan", "2025", "2026", "12", "11",
		"Patent count: New Co", "No runs yet",
		"Patent count: Solo Inc", "42", "10 Feb",
		"Patent count: 500 daily runs", "4,000",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("chart page text lacks %q:\n%s", want, text)
		}
	}
}

// TestChartMarkers counts the shapes drawn in the PDF's content stream
// (uncompressed): a triangle (a filled and stroked polygon, " b") per
// marked point and one in the legend, a dot (a filled polygon, " f") per
// other point that has a value while there is room for dots, and none
// when the points are dense.
func TestChartMarkers(t *testing.T) {
	for _, tt := range []struct {
		name            string
		pts             []export.ChartPoint
		triangles, dots int
	}{
		{"weekly runs", patentRuns(), 2 + 1, 58 - 2 - 2},
		{"500 daily runs", manyRuns(500), 8 + 1, 0},
		{"one run", []export.ChartPoint{{At: chartStart, Value: 3}}, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pdf := newChartDoc(t)
			pdf.SetNoCompression()
			if err := export.DrawLineChart(pdf, 50, 50, 480, 200, countChart, tt.pts); err != nil {
				t.Fatal(err)
			}
			page := string(mustBytes(t, pdf))
			if n := strings.Count(page, " b\n"); n != tt.triangles {
				t.Errorf("%d triangles, want %d", n, tt.triangles)
			}
			if n := strings.Count(page, " f\n"); n != tt.dots {
				t.Errorf("%d dots, want %d", n, tt.dots)
			}
		})
	}
}

// TestChartPoints: a history becomes the count chart's points (NaN for a
// run without a count, marked for an alert), months the bars.
func TestChartPoints(t *testing.T) {
	n := 12
	at := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	pts := export.RunPoints([]patent.TrackingRun{
		{RunAt: at, PatentCount: &n, Success: true, Alert: true},
		{RunAt: at.Add(time.Hour)},
	})
	if len(pts) != 2 || !pts[0].At.Equal(at) || pts[0].Value != 12 || !pts[0].Mark ||
		!math.IsNaN(pts[1].Value) || pts[1].Mark {
		t.Errorf("RunPoints = %+v", pts)
	}
	bars := export.MonthPoints([]patent.MonthCount{{Month: "2026-02", Count: 3}, {Month: "bad"}, {Month: "2026-03"}})
	if len(bars) != 2 || !bars[0].At.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) || bars[0].Value != 3 || bars[1].Value != 0 {
		t.Errorf("MonthPoints = %+v", bars)
	}
	// Years: one bar a year from the first to the last, gaps 0, in any
	// order given; at most the latest 100 years.
	years := export.YearPoints([]patent.YearCount{{Year: 2024, Count: 2}, {Year: 2021, Count: 1}})
	var got []string
	for _, y := range years {
		got = append(got, fmt.Sprintf("%d:%g", y.At.Year(), y.Value))
	}
	if strings.Join(got, " ") != "2021:1 2022:0 2023:0 2024:2" {
		t.Errorf("YearPoints = %s", got)
	}
	years = export.YearPoints([]patent.YearCount{{Year: 1790, Count: 1}, {Year: 2025, Count: 4}})
	if len(years) != 100 || years[0].At.Year() != 1926 || years[99].Value != 4 {
		t.Errorf("YearPoints over 236 years: %d bars from %v", len(years), years[0].At)
	}
	if export.YearPoints(nil) != nil {
		t.Errorf("YearPoints(nil) is not nil")
	}
}

// TestChartEdgeCases: a box too small, or no document, is an error; any
// number of points draws, whatever their order and values.
func TestChartEdgeCases(t *testing.T) {
	pdf := newChartDoc(t)
	if err := export.DrawLineChart(pdf, 0, 0, 100, 200, countChart, nil); err == nil {
		t.Error("DrawLineChart in a 100 pt wide box = nil, want an error")
	}
	if err := export.DrawBarChart(pdf, 0, 0, 300, 60, monthChart, nil); err == nil {
		t.Error("DrawBarChart in a 60 pt high box = nil, want an error")
	}
	if err := export.DrawLineChart(nil, 0, 0, 300, 200, countChart, nil); err == nil {
		t.Error("DrawLineChart(nil) = nil, want an error")
	}
	unregistered := &gopdf.GoPdf{}
	unregistered.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	unregistered.AddPage()
	if err := export.DrawLineChart(unregistered, 50, 50, 300, 200, countChart, patentRuns()); err == nil {
		t.Error("DrawLineChart without the fonts = nil, want an error")
	}

	at := func(d int) time.Time { return chartStart.AddDate(0, 0, d) }
	for _, tt := range []struct {
		name string
		pts  []export.ChartPoint
	}{
		{"unsorted", []export.ChartPoint{{At: at(5), Value: 3}, {At: at(1), Value: 9, Mark: true}, {At: at(3), Value: 1}}},
		{"all failed", []export.ChartPoint{{At: at(1), Value: math.NaN()}, {At: at(2), Value: math.Inf(1)}}},
		{"one failed", []export.ChartPoint{{At: at(1), Value: math.NaN()}}},
		{"same time", []export.ChartPoint{{At: at(1), Value: 5}, {At: at(1), Value: 7}}},
		{"flat zero", []export.ChartPoint{{At: at(1)}, {At: at(2)}}},
		{"negative", []export.ChartPoint{{At: at(1), Value: -5}, {At: at(2), Value: 5}}},
		{"huge", []export.ChartPoint{{At: at(1), Value: 1e9}, {At: at(2), Value: 3e9}}},
		{"fractions", []export.ChartPoint{{At: at(1), Value: 0.25}, {At: at(2), Value: 0.5}}},
		{"seconds apart", []export.ChartPoint{{At: chartStart, Value: 1}, {At: chartStart.Add(20 * time.Second), Value: 2}}},
		{"minutes apart", []export.ChartPoint{{At: chartStart, Value: 1}, {At: chartStart.Add(40 * time.Minute), Value: 2}}},
		{"ten years", []export.ChartPoint{{At: at(0), Value: 1}, {At: at(3650), Value: 2}}},
		{"5000 points", manyRuns(5000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pdf := newChartDoc(t)
			if err := export.DrawLineChart(pdf, 50, 50, 480, 200, countChart, tt.pts); err != nil {
				t.Errorf("DrawLineChart = %v", err)
			}
			if err := export.DrawBarChart(pdf, 50, 300, 480, 200, monthChart, tt.pts); err != nil {
				t.Errorf("DrawBarChart = %v", err)
			}
			yearly := monthChart
			yearly.Yearly = true
			if err := export.DrawBarChart(pdf, 50, 550, 480, 200, yearly, tt.pts); err != nil {
				t.Errorf("DrawBarChart, yearly = %v", err)
			}
			mustPageTexts(t, mustBytes(t, pdf))
		})
	}
}

// TestChartGolden renders the fixed chart page, rasterises it with
// pdftoppm (poppler-utils) at 100 dpi in grey and compares it with
// testdata/charts.golden.png: less than 1% of the ink may differ, a pixel
// differing when nothing within a pixel of it in the other image is within
// a sixth of the grey scale (see pixelDifference). Measured: the same
// page 0%; the page with vector anti-aliasing off 1.4%; the bar chart
// moved down 2 pt 8.5%; the two alert triangles of the first chart missing
// only 0.4%, which TestChartMarkers catches instead. -update rewrites the
// golden file; -chartout=DIR writes the PDF and the PNG, to look at them.
func TestChartGolden(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not found (Debian: apt-get install poppler-utils); the chart page is not compared with its golden image")
	}
	matchesGolden(t, drawChartPage(t), "testdata/charts.golden.png", "charts")
}

// matchesGolden compares the first page of data, as pdftoppm draws it,
// with the PNG golden: less than 1% of the ink may differ. -update
// rewrites golden; -chartout=DIR writes the page there (name.pdf and
// name.png) to look at.
func matchesGolden(t *testing.T, data []byte, golden, name string) {
	t.Helper()
	matchesGoldenPage(t, data, 1, golden, name)
}

// matchesGoldenPage is matchesGolden for page (from 1) of data.
func matchesGoldenPage(t *testing.T, data []byte, page int, golden, name string) {
	t.Helper()
	got := rasterise(t, data, page)
	if *chartOut != "" {
		writeFile(t, filepath.Join(*chartOut, name+".pdf"), data)
		writeFile(t, filepath.Join(*chartOut, name+".png"), got)
	}
	if *update {
		writeFile(t, golden, got)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/export -run %s -update writes it)", err, t.Name())
	}
	frac, err := pixelDifference(want, got, 256/6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.3f%% of the ink differs from %s", 100*frac, golden)
	if frac >= 0.01 {
		t.Errorf("%.2f%% of the ink differs from %s (less than 1%% may); look at the page with -chartout=DIR", 100*frac, golden)
	}
}

// rasterise renders a page (from 1) of a PDF to a greyscale PNG at 100
// dpi.
func rasterise(tb testing.TB, data []byte, page int) []byte {
	tb.Helper()
	dir := tb.TempDir()
	in := filepath.Join(dir, "page.pdf")
	writeFile(tb, in, data)
	n := strconv.Itoa(page)
	cmd := exec.Command("pdftoppm", "-r", "100", "-gray", "-png", "-singlefile", "-f", n, "-l", n, in, filepath.Join(dir, "page"))
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	png, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil {
		tb.Fatal(err)
	}
	return png
}

// pixelDifference decodes two greyscale renderings of a page and returns
// the share of their ink (the pixels darker than near-white in either)
// that differs: a pixel of one differs when no pixel of the other, at the
// same place or one pixel away, is within tolerance (0 to 255) of its
// grey. The one pixel of play absorbs rasterisers placing an edge or a
// glyph a pixel apart; ink rather than the page is the base, so a missing
// marker or a moved chart counts for what it is on a mostly white page.
func pixelDifference(a, b []byte, tolerance int) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, fmt.Errorf("golden image: %w", err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("rendered image: %w", err)
	}
	if ia.Bounds() != ib.Bounds() {
		return 0, errors.New("rendered image is " + ib.Bounds().String() + ", golden " + ia.Bounds().String())
	}
	ga, gb := greys(ia), greys(ib)
	w, h := ia.Bounds().Dx(), ia.Bounds().Dy()
	// near reports whether some pixel of o around x, y is within
	// tolerance of v.
	near := func(o []int, x, y, v int) bool {
		for yy := max(y-1, 0); yy <= min(y+1, h-1); yy++ {
			for xx := max(x-1, 0); xx <= min(x+1, w-1); xx++ {
				if d := o[yy*w+xx] - v; d <= tolerance && -d <= tolerance {
					return true
				}
			}
		}
		return false
	}
	ink, differ := 0, 0
	for y := range h {
		for x := range w {
			va, vb := ga[y*w+x], gb[y*w+x]
			if va < 250 || vb < 250 {
				ink++
			}
			if !near(gb, x, y, va) || !near(ga, x, y, vb) {
				differ++
			}
		}
	}
	if ink == 0 {
		return 0, errors.New("the golden image is blank")
	}
	return float64(differ) / float64(ink), nil
}

// greys returns the image's grey levels (0 to 255), row by row.
func greys(img image.Image) []int {
	r := img.Bounds()
	out := make([]int, 0, r.Dx()*r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			out = append(out, int((299*cr+587*cg+114*cb)/1000>>8))
		}
	}
	return out
}

func writeFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}
