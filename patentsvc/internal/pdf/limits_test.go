package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// TestExtractLimits reads the hostile documents of pdftest within the
// default limits: each is refused with the bound it broke (the want texts
// are not the time limit's: the documents are refused by their bounds, not
// by the clock), and without keeping what it decompresses. The times and
// allocations are logged (docs/performance.md, "Hostile documents"), not
// asserted: they vary with the machine and the race detector.
func TestExtractLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
		want string // the error's text holds it
	}{
		{"5000 pages sharing one 40 MiB stream", pdftest.SharedContent(5000, 40<<20), "document not read: more than 500 pages"},
		{"400 pages sharing one 40 MiB stream", pdftest.SharedContent(400, 40<<20), "document not read: a page shows more than 100000 pieces of text"},
		{"a stream inflating a thousand-fold to 400 MiB", pdftest.Bomb(400 << 20), "document not read: its streams decompress to more than 200 MiB"},
		{"400 MiB of text operators", pdftest.TextBomb(400 << 20), "document not read: a page shows more than 100000 pieces of text"},
		{"10,000 pages", pdftest.Pages(10000), "document not read: more than 500 pages"},
		{"an object stream read again for each of 400 pages", pdftest.ObjectStreams(400, 1<<20), "document not read: its streams decompress to more than 200 MiB"},
		{"a page tree that contains itself", pdftest.SelfTree(), "malformed pdf: the page tree contains itself"},
		{"a cross-reference stream of 2e9 objects", pdftest.XrefSize(2_000_000_000), "at most 1048576 objects are read"},
		{"an empty object stream declaring 2^63 objects", pdftest.ObjectStreamCount(math.MaxInt64), "malformed pdf: cannot find object in stream"},
		{"an object stream that extends itself", pdftest.ObjectStreamLoop(), "malformed pdf: object stream Extends chain too long"},
		{"a page tree of 2^40 paths to no page", pdftest.PageDAG(40), "malformed pdf: the page tree has more than 2032 nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			err := extractOrHang(t, tt.data)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Extract = %v, want an error saying %q", err, tt.want)
			}
			if !errors.Is(err, patent.ErrPDFUnreadable) {
				t.Errorf("Extract = %v, want a kind of ErrPDFUnreadable", err)
			}
			var limit *pdf.LimitError
			if strings.HasPrefix(tt.want, "document not read") && (!errors.As(err, &limit) || !errors.Is(err, patent.ErrPDFOverLimit)) {
				t.Errorf("Extract = %v (%T), want a *LimitError matching ErrPDFOverLimit", err, err)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("%d bytes refused in %v, %d MiB allocated on the way", len(tt.data), took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
		})
	}
}

// extractOrHang is pdf.Extract of data under the default limits, failing
// the test when it has not returned long after the time limit: a document
// that keeps the reader busy without reading (a loop on a header's count)
// is one the time limit cannot stop.
func extractOrHang(t *testing.T, data []byte) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := pdf.Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(4 * pdf.DefaultLimits.Timeout):
		t.Fatalf("Extract had not returned after %v, four times its time limit", 4*pdf.DefaultLimits.Timeout)
		return nil
	}
}

// TestCMapCountBounded: a font's character map that announces 50 million
// mappings and gives one costs nothing: the page is read through it, and
// reading allocates a few MiB, not the gigabytes 50 million entries take.
func TestCMapCountBounded(t *testing.T) {
	data := pdftest.CMapCount(50_000_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := extractOrHang(t, data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Extract = %v, want the page read", err)
	}
	if alloc := (after.TotalAlloc - before.TotalAlloc) >> 20; alloc > 64 {
		t.Errorf("reading allocated %d MiB, want a few (the count is not trusted)", alloc)
	}
}

// TestExtractLimitsSettings: the limits are the extractor's, as the
// settings give them: a lower page limit refuses a document the default
// reads, a smaller budget refuses what the default allows, and the time
// limit holds OCR too.
func TestExtractLimitsSettings(t *testing.T) {
	t.Parallel()
	three := textPDF([]string{"(57) ABSTRACT", strings.Repeat("A page of text about a thing. ", 20)},
		[]string{strings.Repeat("More text about the thing. ", 20)}, []string{strings.Repeat("And more of it. ", 30)})
	read := func(lim pdf.Limits, ocr pdf.OCR, data []byte) error {
		_, err := pdf.NewExtractor(ocr, "PDF_OCR is off", lim).Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		return err
	}
	if err := read(pdf.DefaultLimits, nil, three); err != nil {
		t.Fatalf("a 3-page document under the default limits: %v", err)
	}
	lim := pdf.DefaultLimits
	lim.MaxPages = 2
	if err := read(lim, nil, three); err == nil || err.Error() != "document not read: more than 2 pages" {
		t.Errorf("3 pages, PDF_MAX_PAGES=2: %v", err)
	}
	lim = pdf.DefaultLimits
	lim.MaxDecoded = 1 << 20
	bomb := pdftest.Bomb(2 << 20)
	if err := read(pdf.DefaultLimits, nil, bomb); errors.Is(err, patent.ErrPDFOverLimit) {
		t.Errorf("2 MiB of stream under a 200 MiB budget: %v, want it read (and found empty)", err)
	}
	if err := read(lim, nil, bomb); err == nil || err.Error() != "document not read: its streams decompress to more than 1 MiB" {
		t.Errorf("2 MiB of stream, PDF_MAX_DECODED_MB=1: %v", err)
	}
	// A scan whose OCR never answers: the time limit covers OCR.
	lim = pdf.DefaultLimits
	lim.Timeout = 300 * time.Millisecond
	slow := &fakeOCR{WordsFn: func(ctx context.Context, _ *image.Gray, _ int) ([]pdf.Word, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	scan := mustReadTestdata(t, "US11762912.pdf")
	start := time.Now()
	err := read(lim, slow, scan)
	if err == nil || err.Error() != "document not read: reading it took longer than 300ms" || !errors.Is(err, patent.ErrPDFOverLimit) {
		t.Errorf("OCR past PDF_EXTRACT_TIMEOUT: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the time limit of 300ms was kept to %v", took)
	}
	// The caller's own end is not a limit.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pdf.NewExtractor(nil, "off", pdf.DefaultLimits).Extract(ctx, bytes.NewReader(three), int64(len(three))); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract with its context cancelled = %v, want context.Canceled", err)
	}
}

// TestImageCountsAgainstBudget: the pixels of a scan decoded for OCR count
// against the document's budget.
func TestImageCountsAgainstBudget(t *testing.T) {
	t.Parallel()
	scan := mustReadTestdata(t, "US11762912.pdf")
	lim := pdf.DefaultLimits
	lim.MaxDecoded = 1 << 20 // a page's scan is several million pixels
	called := false
	ocr := &fakeOCR{WordsFn: func(context.Context, *image.Gray, int) ([]pdf.Word, error) { called = true; return nil, nil }}
	_, err := pdf.NewExtractor(ocr, "", lim).Extract(context.Background(), bytes.NewReader(scan), int64(len(scan)))
	if err == nil || !strings.Contains(err.Error(), "decompress to more than 1 MiB") || called {
		t.Errorf("a scan over a 1 MiB budget: %v (OCR called: %v), want refused before OCR", err, called)
	}
}
