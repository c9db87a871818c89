package pdf_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/pdf"
)

// TestExtractCleansText (decisions.md, "Both services: hostile input
// answered, never a 5xx"): words an OCR engine gives with NUL characters
// and bytes that are not UTF-8 leave Extract cleaned, each invalid byte as
// U+FFFD, in single-spaced, trimmed sections (the text of
// TestExtractOCRPipeline, with NUL and invalid bytes added).
func TestExtractCleansText(t *testing.T) {
	t.Parallel()
	data := mustReadTestdata(t, scan+".pdf")
	text := []string{
		"(12) United States Patent", "(54) WIDGET WITH A BLADE HELD BY A PIN",
		"(71) Applicant: Widget Works Incorporated, Springfield, IL (US)",
		"(72) Inventors: Ada Lovelace, London (GB); Charles Babbage, London (GB)",
		"(57) ABSTRACT",
		"\x00A widget\x00 has a handle and a \xff\xfeblade that is held in the handle by a pin, so",
		"that the blade can be changed without tools. The blade is sharp and is made",
		"of hardened\x00 steel.\x00", "10 Claims, 3 Drawing Sheets",
	}
	ocr := &fakeOCR{WordsFn: func(context.Context, io.Reader, int) ([]pdf.Word, error) {
		return frontPageWords(text...), nil
	}}
	s, err := pdf.NewExtractor(ocr, "", pdf.DefaultLimits).Extract(t.Context(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Extract with a fake OCR: %v", err)
	}
	want := "A widget has a handle and a \uFFFD\uFFFDblade that is held in the handle by a pin, so that the blade can be changed without tools. The blade is sharp and is made of hardened steel."
	if s.Abstract != want {
		t.Errorf("Abstract = %q, want %q", s.Abstract, want)
	}
	for name, v := range map[string]string{"Abstract": s.Abstract, "Summary": s.Summary, "Description": s.Description} {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || v != strings.Join(strings.Fields(v), " ") {
			t.Errorf("%s = %q, want valid UTF-8 without NUL, single-spaced and trimmed", name, v)
		}
	}
}
