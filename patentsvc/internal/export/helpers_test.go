package export_test

import (
	"bytes"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// rowsOf is a Rows over records, stopping at the first error of yield.
func rowsOf(records ...patent.AnalysisRecord) export.Rows {
	return func(yield func(patent.AnalysisRecord) error) error {
		for _, r := range records {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// generatedRows is a Rows of n records made on the fly, as a database
// cursor would hand them out: nothing is kept between rows. Every
// sampleEvery rows it calls sample, if not nil.
func generatedRows(n int, text string, sample func()) export.Rows {
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return func(yield func(patent.AnalysisRecord) error) error {
		for i := range n {
			if sample != nil && i%sampleEvery == 0 {
				sample()
			}
			err := yield(patent.AnalysisRecord{
				ID:           int64(n - i),
				CompanyName:  "Acme Corp",
				AnalysisType: patent.AnalysisPortfolio,
				Model:        "openai/gpt-4o-mini",
				Response:     text,
				Timestamp:    start.Add(-time.Duration(i) * time.Minute),
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

const sampleEvery = 1000

// heapPeak tracks how far the live heap grows above a baseline taken after
// a full collection.
type heapPeak struct {
	base, peak uint64
}

func newHeapPeak() *heapPeak {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &heapPeak{base: ms.HeapAlloc, peak: ms.HeapAlloc}
}

func (h *heapPeak) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
}

// growth is the largest heap seen above the baseline, in bytes.
func (h *heapPeak) growth() uint64 {
	if h.peak < h.base {
		return 0
	}
	return h.peak - h.base
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct {
	limit, n int
}

var errWrite = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, errWrite
	}
	w.n += len(p)
	return len(p), nil
}

// countingWriter counts what is written to it and drops it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// mustRenderPDF renders a report and returns the PDF bytes.
func mustRenderPDF(tb testing.TB, company string, generated time.Time, summary patent.ReportSummary, records []patent.AnalysisRecord, logger *slog.Logger) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := export.PDF(&buf, company, generated, summary, records, logger); err != nil {
		tb.Fatalf("PDF: %v", err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
		tb.Fatalf("PDF output starts %q, want %%PDF-", buf.Bytes()[:min(buf.Len(), 16)])
	}
	return buf.Bytes()
}

// mustPageTexts extracts the text of each page of a PDF with poppler's
// pdftotext, which reads gopdf's Type0 fonts through their ToUnicode maps,
// so the text is what a reader copying from the page gets.
func mustPageTexts(tb testing.TB, data []byte) []string {
	tb.Helper()
	return pdftest.PageTexts(tb, data, "-layout")
}

// flat collapses all runs of whitespace (line breaks from wrapping
// included) into single spaces.
func flat(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
