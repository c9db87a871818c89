package pdf

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// ErrImageOnly is returned when a document has no usable text layer, as with
// scanned documents that were never OCRed: there is nothing to analyse.
// It is a kind of patent.ErrPDFUnreadable.
var ErrImageOnly = patent.NewKindError(patent.ErrPDFUnreadable, "pdf has no text layer")

// ErrMalformed is returned when a document cannot be parsed at all. It is a
// kind of patent.ErrPDFUnreadable.
var ErrMalformed = patent.NewKindError(patent.ErrPDFUnreadable, "malformed pdf")

// minCharsPerPage is the average number of letters and digits per page
// below which a document counts as having no text layer. A scanned page
// without OCR has none; a front page or a drawing sheet with an OCR layer
// has hundreds.
const minCharsPerPage = 200

// Extract reads a PDF of size bytes from r and finds its sections, within
// DefaultLimits.
//
// It returns ErrMalformed (wrapped with detail) when the document cannot be
// parsed, ErrImageOnly when it has no usable text layer (fewer than about
// 200 letters and digits per page on average), a *LimitError when the
// document is past one of its limits, and ctx.Err() when ctx is done
// first (the engine's programs are killed then). A crash of the engine is
// ErrMalformed: it happens in a child process, never in this one. Without
// the engine installed the error says so (poppler-utils): a kind of
// patent.ErrPDFEngine, not of ErrPDFUnreadable, for the document is not at
// fault. It does no OCR: see Extractor.
func Extract(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
	return extract(ctx, r, size, nil, DefaultLimits)
}

// doc is a document read by the engine: each page's lines and size, and
// the document itself, which OCR gives the engine again.
type doc struct {
	src     *io.SectionReader
	en      *engine
	ceiling int64
	pages   [][]string
	sizes   [][2]float64 // width and height of each page, in points
}

// extract is Extract within lim, reading image-only documents with e's
// OCR when e is not nil. A document past lim is a *LimitError; the end of
// ctx itself is ctx's error.
func extract(ctx context.Context, r io.ReaderAt, size int64, e *Extractor, lim Limits) (patent.Sections, error) {
	en, err := findEngine()
	if err != nil {
		return patent.Sections{}, err
	}
	parent := ctx
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, lim.Timeout, tooSlow(lim.Timeout))
		defer cancel()
	}
	s, err := extractWithin(ctx, en, io.NewSectionReader(r, 0, size), e, lim)
	switch {
	case err == nil:
		return s, nil
	case parent.Err() != nil:
		return patent.Sections{}, parent.Err()
	case ctx.Err() != nil:
		return patent.Sections{}, context.Cause(ctx)
	}
	return patent.Sections{}, err
}

// extractWithin is extract's work.
func extractWithin(ctx context.Context, en *engine, src *io.SectionReader, e *Extractor, lim Limits) (patent.Sections, error) {
	if err := ctx.Err(); err != nil {
		return patent.Sections{}, err
	}
	d, err := readPages(ctx, en, src, lim)
	if err != nil {
		return patent.Sections{}, err
	}
	if chars := letters(d.pages...); chars < minCharsPerPage*len(d.pages) {
		if e == nil {
			return patent.Sections{}, fmt.Errorf("%w: %d characters on %d pages", ErrImageOnly, chars, len(d.pages))
		}
		why := e.noOCR
		if e.ocr != nil {
			markOCR(ctx)
			if why, err = e.ocrPages(ctx, d); err != nil {
				return patent.Sections{}, err
			}
		}
		if chars := letters(d.pages...); chars < minCharsPerPage*len(d.pages) {
			return patent.Sections{}, fmt.Errorf("%w: %d characters on %d pages: %w", ErrImageOnly, chars, len(d.pages), &patent.NotOCRedError{Reason: why})
		}
	}
	s := cleanSections(findSections(d.pages))
	s.Pages = len(d.pages)
	return s, nil
}

// cleanSections is where a document's text leaves the package: every
// section cleaned of NUL characters and invalid UTF-8 (patent.CleanText),
// as it is stored (the patent's summary) and sent to the model
// (decisions.md, "Both services: hostile input answered, never a 5xx").
// A text layer's strings are clean already (show drops control characters,
// and strings.Map replaces invalid bytes); the words of an OCR engine are
// taken as it gives them. One rule here covers both.
func cleanSections(s patent.Sections) patent.Sections {
	s.Abstract = cleanText(s.Abstract)
	s.Summary = cleanText(s.Summary)
	s.Description = cleanText(s.Description)
	for i := range s.Claims {
		s.Claims[i].Text = cleanText(s.Claims[i].Text)
	}
	return s
}

// cleanText is patent.CleanText keeping the sections' white space rule
// (single spaces, trimmed): a NUL removed between two spaces leaves two.
func cleanText(s string) string {
	c := patent.CleanText(s)
	if c == s {
		return s
	}
	return strings.Join(strings.Fields(c), " ")
}

// markOCR notes on the span in ctx (the analysis's "extract pdf" span)
// that the document was read by OCR. The span's other attributes are the
// caller's; without a span in ctx it does nothing.
func markOCR(ctx context.Context) {
	trace.SpanFromContext(ctx).SetAttributes(attribute.Bool("pdf.ocr", true))
}

// letters counts the letters and digits on pages.
func letters(pages ...[]string) int {
	n := 0
	for _, p := range pages {
		for _, l := range p {
			for _, c := range l {
				if unicode.IsLetter(c) || unicode.IsDigit(c) {
					n++
				}
			}
		}
	}
	return n
}

// ExtractFile is Extract on the file at path. Errors opening the file are
// returned as they are, not as ErrMalformed.
func ExtractFile(ctx context.Context, path string) (patent.Sections, error) {
	f, err := os.Open(path)
	if err != nil {
		return patent.Sections{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return patent.Sections{}, err
	}
	return Extract(ctx, f, fi.Size())
}

// readPages reads the document's pages with the engine, each page's
// lines in reading order: at most lim.MaxPages, a document with one more
// being a *LimitError as soon as the engine reaches it.
func readPages(ctx context.Context, en *engine, src *io.SectionReader, lim Limits) (*doc, error) {
	ceiling := lim.MaxDecoded + EngineBase
	d := &doc{src: src, en: en, ceiling: ceiling}
	err := en.words(ctx, ceiling, io.NewSectionReader(src, 0, src.Size()), lim.MaxPages+1, func(p textPage) error {
		if len(d.pages) == lim.MaxPages {
			return tooManyPages(lim.MaxPages)
		}
		d.pages = append(d.pages, pageLines(p.spans, p.width))
		d.sizes = append(d.sizes, [2]float64{p.width, p.height})
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(d.pages) == 0 {
		return nil, fmt.Errorf("%w: no pages", ErrMalformed)
	}
	return d, nil
}
