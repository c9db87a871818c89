package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// hostile returns documents that are valid enough to open but try to make
// a reader loop or recurse for ever.
func hostile() map[string][]byte {
	return map[string][]byte{
		// The page tree's Kids contain the tree itself.
		"cyclic page tree": buildPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R 2 0 R 2 0 R] /Count 3 >>",
		),
		// A page whose Parent chain loops, with no resources to find.
		"cyclic parent": buildPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>",
			pdftest.Stream("BT /F1 12 Tf (Hello) Tj ET"),
		),
		// Q without q, operators without operands, an unknown font.
		"unbalanced content": buildPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
			pdftest.Stream("Q Q Q BT Tf Td Tm TJ Tj ' \" /F9 12 Tf (x) Tj [(a) -300 (b)] TJ ET"),
		),
		"no pages": buildPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [] /Count 0 >>",
		),
		"no catalog": buildPDF("<< /Type /Font >>"),
	}
}

func TestExtractMalformed(t *testing.T) {
	t.Parallel()
	real := mustReadTestdata(t, "US20090043621A1.pdf")
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rnd.UintN(256))
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"random bytes", random},
		{"random bytes after a header", append([]byte("%PDF-1.7\n"), random...)},
		{"truncated to 30%", real[:len(real)*3/10]},
		{"text file", []byte(strings.Repeat("This is not a PDF file.\n", 100))},
		{"header only", []byte("%PDF-1.4\n%%EOF\n")},
	}
	for name, data := range hostile() {
		tests = append(tests, struct {
			name string
			data []byte
		}{name, data})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := pdf.Extract(ctx, bytes.NewReader(tt.data), int64(len(tt.data)))
			if !errors.Is(err, pdf.ErrMalformed) && !errors.Is(err, pdf.ErrImageOnly) {
				t.Errorf("Extract(%s) = %+v, %v, want ErrMalformed or ErrImageOnly", tt.name, s, err)
			}
		})
	}
}

func TestExtractCanceled(t *testing.T) {
	t.Parallel()
	data := mustReadTestdata(t, "US8427103.pdf")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pdf.Extract(ctx, bytes.NewReader(data), int64(len(data))); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract(canceled ctx) error = %v, want context.Canceled", err)
	}
}

// TestExtractDeadline stops a long document part way: the deadline is
// honoured between pages and inside the library.
func TestExtractDeadline(t *testing.T) {
	t.Parallel()
	data := mustReadTestdata(t, "US11394072.pdf")
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := pdf.Extract(ctx, bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Extract(expiring ctx) error = %v, want nil or context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Extract(expiring ctx) took %v", d)
	}
}

func TestExtractFileMissing(t *testing.T) {
	t.Parallel()
	_, err := pdf.ExtractFile(context.Background(), "testdata/no-such-file.pdf")
	if err == nil || errors.Is(err, pdf.ErrMalformed) {
		t.Errorf("ExtractFile(missing) error = %v, want the open error", err)
	}
}
