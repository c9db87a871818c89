package pdf

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
)

// TestTesseractCeiling: tesseract runs under its address-space ceiling.
// A scanned page it reads under OCRCeiling is, under a ceiling too small
// for its work (but large enough for the program to load), a page that
// "needs more than N MiB of memory", not a crash or an empty page.
func TestTesseractCeiling(t *testing.T) {
	t.Parallel()
	tess, err := FindTesseract(context.Background(), "eng", PageTimeout)
	if err != nil {
		if os.Getenv("REQUIRE_OCR") == "1" {
			t.Fatalf("REQUIRE_OCR=1 but %v", err)
		}
		t.Skipf("tesseract not tested: %v", err)
	}
	if tess.ceiling != OCRCeiling {
		t.Fatalf("FindTesseract's ceiling = %d, want OCRCeiling", tess.ceiling)
	}
	en := mustEngine(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	wait, err := en.render(context.Background(), DefaultLimits.MaxDecoded+EngineBase, readTestdata(t, "US11762912.pdf"), 1, ocrDPI, pw)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(pr)
	if err := wait(); err != nil {
		t.Fatal(err)
	}

	words, err := tess.Words(context.Background(), bytes.NewReader(page), ocrDPI)
	if err != nil || len(words) < 100 {
		t.Fatalf("the front page under OCRCeiling: %d words, %v", len(words), err)
	}
	small := *tess
	small.ceiling = 100 << 20 // tesseract loads in 60-100 MiB; this page needs about 150
	words, err = small.Words(context.Background(), bytes.NewReader(page), ocrDPI)
	if want := "tesseract: page needs more than 100 MiB of memory"; err == nil || err.Error() != want {
		t.Errorf("the front page under 100 MiB: %d words, %v; want %q", len(words), err, want)
	}
}
