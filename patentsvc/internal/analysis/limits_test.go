package analysis_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// TestDocumentsPastLimits: a company whose patents include documents past
// the limits on reading a document is analysed with the others; each
// patent's entry says whether its PDF was read and why not; the verdicts
// are stored with the PDFs, so the next analysis reads only the others,
// while a document that is merely unreadable is tried again.
func TestDocumentsPastLimits(t *testing.T) {
	w := newWorld(t)
	var reads atomic.Int64
	w.Extract = func(next analysis.Extractor) analysis.Extractor {
		return func(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
			reads.Add(1)
			return next(ctx, r, size)
		}
	}
	pns := w.CompanyDocs("Acme Corp", nil, pdftest.Pages(600), pdftest.TextBomb(1<<20), pdftest.XrefSize(2_000_000_000), nil)
	// The limits under test are pages and the engine's memory: the time
	// limit is out of the way, or a busy machine (the race detector, other
	// packages' tests) could read the page of text operators past it
	// before the engine passes its ceiling, and the verdict be the time's.
	// A page of 1 MiB of text operators takes poppler about 190 MiB; an
	// 8 MiB budget (a 72 MiB ceiling) stops it in a fraction of a second.
	w.Limits.Timeout = 10 * time.Minute
	w.Limits.MaxDecoded = 8 << 20
	an := w.Analyzer(nil)

	want := []struct {
		read bool
		err  string
	}{
		{true, ""},
		{false, "document not read: more than 500 pages"},
		{false, "document not read: reading it takes more than 8 MiB of memory"},
		{false, "document not read: not a readable PDF"},
		{true, ""},
	}
	check := func(res patent.CompanyAnalysis) {
		t.Helper()
		if !res.Success || res.PatentCount != len(pns) || len(res.Patents) != len(pns) {
			t.Fatalf("analysis = %+v, want a success over all %d patents", res, len(pns))
		}
		for i, p := range res.Patents {
			got := ""
			if p.Error != nil {
				got = *p.Error
			}
			if p.PatentID != pns[i] || p.Read != want[i].read || got != want[i].err {
				t.Errorf("patent %d (%s): read %v, error %q; want %v, %q", i, p.PatentID, p.Read, got, want[i].read, want[i].err)
			}
		}
	}
	check(an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true}))
	if got := reads.Load(); got != 5 {
		t.Fatalf("first analysis read %d documents, want 5", got)
	}
	for i, v := range map[int]string{1: want[1].err, 2: want[2].err, 3: ""} {
		p, err := w.Store.Analyses().Patent(ctx, pns[i])
		if err != nil || p.PDFVerdict != v || (v != "" && p.PDFLimits != w.Limits.String()) {
			t.Errorf("stored patent %d = %+v, %v; want the verdict %q under %q", i, p, err, v, w.Limits.String())
		}
	}
	// The prompt holds the readable documents' text, and only the
	// snippets of the others.
	calls := w.LLM.Calls()
	prompt := string(calls[len(calls)-1].Body)
	if !strings.Contains(prompt, pns[1]) || strings.Contains(prompt, "A patent page with lines of text") {
		t.Errorf("prompt of the first analysis lacks the unread patent or holds its text:\n%.2000s", prompt)
	}

	reads.Store(0)
	check(an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true}))
	if got := reads.Load(); got != 3 {
		t.Errorf("second analysis read %d documents, want 3 (not the two past the limits again)", got)
	}

	// The single-patent endpoint gives the verdict too, without reading.
	reads.Store(0)
	_, err := an.AnalyzePatent(ctx, pns[1], "Acme Corp", patent.AnalyzeOptions{})
	if !errors.Is(err, patent.ErrPDFOverLimit) || err.Error() != want[1].err || reads.Load() != 0 {
		t.Errorf("AnalyzePatent(%s) = %v after %d reads, want the stored verdict and none", pns[1], err, reads.Load())
	}

	// Under other limits, a verdict does not hold: the document is read.
	w.Limits.MaxPages = 1000
	reads.Store(0)
	res := w.Analyzer(nil).AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true})
	if got := reads.Load(); got != 5 || !res.Patents[1].Read || res.Patents[2].Read {
		t.Errorf("under PDF_MAX_PAGES=1000: %d documents read, patents 1 and 2 read %v, %v; want 5, the 600 pages read, the page of text operators refused again",
			got, res.Patents[1].Read, res.Patents[2].Read)
	}
}

// TestPDFEngineMissing: without the PDF engine installed, a company is
// analysed from its patents' snippets, each entry saying why its PDF was
// not read, and no verdict is stored: once the engine is there, the same
// documents are read.
func TestPDFEngineMissing(t *testing.T) {
	w := newWorld(t)
	missing := true
	w.Extract = func(next analysis.Extractor) analysis.Extractor {
		return func(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
			if missing {
				return patent.Sections{}, patent.NewKindError(patent.ErrPDFEngine, "pdf engine unavailable: no pdftotext")
			}
			return next(ctx, r, size)
		}
	}
	pns := w.CompanyDocs("Acme Corp", nil, nil)
	an := w.Analyzer(nil)
	res := an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true})
	if !res.Success || len(res.Patents) != len(pns) {
		t.Fatalf("analysis = %+v, want a success over all %d patents", res, len(pns))
	}
	for i, p := range res.Patents {
		if p.Read || p.Error == nil || *p.Error != "document not read: the PDF engine is not installed" {
			t.Errorf("patent %d: read %v, error %v; want the engine's absence", i, p.Read, p.Error)
		}
		if stored, err := w.Store.Analyses().Patent(ctx, p.PatentID); err != nil || stored.PDFVerdict != "" {
			t.Errorf("stored patent %d = %+v, %v; want no verdict", i, stored, err)
		}
	}
	missing = false
	res = an.AnalyzeCompany(ctx, "Acme Corp", patent.AnalyzeOptions{Fresh: true})
	for i, p := range res.Patents {
		if !p.Read {
			t.Errorf("with the engine, patent %d: not read (%v)", i, p.Error)
		}
	}
}
