package pdf_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf"
)

// benchExtract extracts file b.N times and reports the time per page.
func benchExtract(b *testing.B, extract func(context.Context, *bytes.Reader, int64) (int, error), file string) {
	data := mustReadTestdata(b, file)
	pages := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		n, err := extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		pages += n
	}
	b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond)/float64(pages), "ms/page")
}

// BenchmarkExtract reads the whole documents of the test set, originals
// (their text layers by Google's OCR) and the OCR'd copies (tesseract's
// text layers): section finding on a text layer, no OCR.
func BenchmarkExtract(b *testing.B) {
	extract := func(ctx context.Context, r *bytes.Reader, size int64) (int, error) {
		s, err := pdf.Extract(ctx, r, size)
		return s.Pages, err
	}
	for _, file := range []string{"US8427103.pdf", "US11394072.pdf", filepath.Join("ocr", "US8427103.ocr.pdf"), filepath.Join("ocr", "US11394072.ocr.pdf")} {
		b.Run(file, func(b *testing.B) { benchExtract(b, extract, file) })
	}
}

// BenchmarkExtractOCR reads the image-only scan (two pages, 300 dpi) by
// OCR with tesseract: decoding each page's fax image, tesseract, section
// finding.
func BenchmarkExtractOCR(b *testing.B) {
	ex := pdf.NewExtractor(mustFindTesseract(b), "", pdf.DefaultLimits)
	extract := func(ctx context.Context, r *bytes.Reader, size int64) (int, error) {
		s, err := ex.Extract(ctx, r, size)
		return s.Pages, err
	}
	benchExtract(b, extract, scan+".pdf")
}
