package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// FuzzExtract checks that an extractor within small limits neither panics
// nor outlasts its time limit on any input, and returns only its
// documented errors.
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
	for _, h := range [][]byte{pdftest.SharedContent(60, 1<<20), pdftest.Bomb(8 << 20), pdftest.SelfTree(), pdftest.Pages(80),
		pdftest.ObjectStreams(20, 64<<10), pdftest.XrefSize(1 << 30), pdftest.HugeImage(20000, 20000), pdftest.CMapCount(1 << 30),
		pdftest.ObjectStreamCount(1 << 40), pdftest.ObjectStreamLoop(), pdftest.PageDAG(30)} {
		f.Add(h)
	}
	lim := pdf.Limits{Timeout: 2 * time.Second, MaxPages: 50, MaxDecoded: 4 << 20}
	ex := pdf.NewExtractor(nil, "PDF_OCR is off", lim)
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		_, err := ex.Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		var limit *pdf.LimitError
		if err != nil && !errors.Is(err, pdf.ErrMalformed) && !errors.Is(err, pdf.ErrImageOnly) && !errors.As(err, &limit) {
			t.Errorf("Extract error = %v, want nil, ErrMalformed, ErrImageOnly or a *LimitError", err)
		}
		// The time limit is checked between reads and every few thousand
		// operators: a little past it is the most one document costs.
		if took := time.Since(start); took > lim.Timeout+3*time.Second {
			t.Errorf("Extract took %v, past its %v limit", took, lim.Timeout)
		}
	})
}
