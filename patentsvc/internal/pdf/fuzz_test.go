package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf"
)

// FuzzExtract checks that Extract neither panics nor hangs on any input,
// and returns only its documented errors.
func FuzzExtract(f *testing.F) {
	small := mustReadTestdata(f, "US20090043621A1.pdf")
	synthetic := textPDF([]string{"(57) ABSTRACT", "A short abstract.", "What is claimed is:", "1. A thing.", "2. The thing of claim 1."})
	for _, seed := range [][]byte{
		small,
		small[:len(small)/10],
		small[:len(small)/2],
		small[:len(small)*9/10],
		synthetic,
		synthetic[:len(synthetic)/2],
		nil,
		[]byte("%PDF-1.7\n%%EOF\n"),
		[]byte("garbage \x00\xff\x7f garbage"),
	} {
		f.Add(seed)
	}
	for _, h := range hostile() {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := pdf.Extract(ctx, bytes.NewReader(data), int64(len(data)))
		if err != nil && !errors.Is(err, pdf.ErrMalformed) && !errors.Is(err, pdf.ErrImageOnly) {
			t.Errorf("Extract error = %v, want nil, ErrMalformed or ErrImageOnly", err)
		}
	})
}
