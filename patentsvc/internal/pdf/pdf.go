package pdf

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
	lpdf "github.com/ledongthuc/pdf"
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

// maxPages bounds the number of pages read, so that a hostile page tree
// cannot make Extract run for ever.
const maxPages = 5000

// Extract reads a PDF of size bytes from r and finds its sections.
//
// It returns ErrMalformed (wrapped with detail) when the document cannot be
// parsed, ErrImageOnly when it has no usable text layer (fewer than about
// 200 letters and digits per page on average), and ctx.Err() when ctx is
// done first; ctx is checked between pages and while a page's content is
// read. Extract never panics: panics inside the PDF library are recovered
// into ErrMalformed. It does no OCR: see Extractor.
func Extract(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
	return extract(ctx, r, size, nil)
}

// doc is an open document: its pages, and each page's lines.
type doc struct {
	rd    *lpdf.Reader
	refs  []lpdf.Value
	pages [][]string
}

// extract is Extract, reading image-only documents with e's OCR when e is
// not nil.
func extract(ctx context.Context, r io.ReaderAt, size int64, e *Extractor) (s patent.Sections, err error) {
	defer func() {
		if p := recover(); p != nil {
			s = patent.Sections{}
			err = fmt.Errorf("%w: %v", ErrMalformed, p)
			if ctx.Err() != nil {
				err = ctx.Err()
			}
		}
	}()
	if err := ctx.Err(); err != nil {
		return patent.Sections{}, err
	}
	d, err := readPages(ctx, r, size)
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
			if why, err = e.ocrPages(ctx, io.NewSectionReader(r, 0, size), d); err != nil { // sized: image streams are checked against the end
				return patent.Sections{}, err
			}
		}
		if chars := letters(d.pages...); chars < minCharsPerPage*len(d.pages) {
			return patent.Sections{}, fmt.Errorf("%w: %d characters on %d pages: %w", ErrImageOnly, chars, len(d.pages), &patent.NotOCRedError{Reason: why})
		}
	}
	s = findSections(d.pages)
	s.Pages = len(d.pages)
	return s, nil
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

// source is the document as the PDF library sees it.
//
// It fails every read once ctx is done. The library turns a failed read
// into a panic, which unwinds whatever loop it is in: this is how a
// cancelled ctx stops work inside the library, including loops that a
// hostile file could make endless.
//
// It also shows the library a header it accepts. The library wants exactly
// "%PDF-1.[0-7]" and a line end, but scanners (libtiff, ImageMagick) write
// "%PDF-1.3 " with a space before the line end, and PDF 2.0 files say
// "%PDF-2.0"; both are patched in place, at the same length, so no offset
// moves.
type source struct {
	ctx  context.Context
	r    io.ReaderAt
	head []byte // replacement for the first len(head) bytes, or nil
}

func newSource(ctx context.Context, r io.ReaderAt) *source {
	s := &source{ctx: ctx, r: r}
	buf := make([]byte, 10)
	n, _ := r.ReadAt(buf, 0)
	buf = buf[:n]
	if n < 9 || !bytes.HasPrefix(buf, []byte("%PDF-")) || buf[6] != '.' {
		return s
	}
	head := bytes.Clone(buf[:9])
	if head[5] != '1' || head[7] < '0' || head[7] > '7' {
		copy(head[5:8], "1.7")
	}
	if head[8] == ' ' || head[8] == '\t' {
		head[8] = '\n'
	}
	if !bytes.Equal(head, buf[:9]) {
		s.head = head
	}
	return s
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.r.ReadAt(p, off)
	if off >= 0 && off < int64(len(s.head)) {
		for i := off; i < int64(len(s.head)) && i-off < int64(n); i++ {
			p[i-off] = s.head[i]
		}
	}
	return n, err
}

// readPages opens the document and reads each page's lines in reading
// order.
func readPages(ctx context.Context, r io.ReaderAt, size int64) (*doc, error) {
	rd, err := lpdf.NewReader(newSource(ctx, r), size)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	refs := pageTree(rd.Trailer().Key("Root").Key("Pages"))
	if len(refs) == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: no pages", ErrMalformed)
	}
	pages := make([][]string, 0, len(refs))
	failed := 0
	var firstErr error
	for _, p := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lines, err := readPage(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failed++
			if firstErr == nil {
				firstErr = err
			}
		}
		pages = append(pages, lines)
	}
	if failed == len(refs) {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, firstErr)
	}
	return &doc{rd: rd, refs: refs, pages: pages}, nil
}

// readPage returns one page's lines, turning the library's panics into an
// error. When a page breaks part way, the text before the break is kept.
func readPage(ctx context.Context, page lpdf.Value) ([]string, error) {
	var t pageText
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				if a, ok := p.(abortWalk); ok {
					err = a.err
					return
				}
				err = fmt.Errorf("page: %v", p)
			}
		}()
		pageSpans(ctx, page, &t)
		return nil
	}()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && len(t.spans) == 0 {
		return nil, err
	}
	return pageLines(t.spans, t.width), nil
}

// pageTree lists the leaves of the page tree in order. It walks the tree
// itself, with a depth and a size limit, because the library's Page(i)
// loops for ever on a Kids array that contains its own parent.
func pageTree(root lpdf.Value) []lpdf.Value {
	var pages []lpdf.Value
	visits := 0
	var walk func(v lpdf.Value, depth int)
	walk = func(v lpdf.Value, depth int) {
		visits++
		if depth > maxTreeDepth || visits > 2*maxPages || len(pages) >= maxPages || v.Kind() != lpdf.Dict {
			return
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Page" || kids.Kind() != lpdf.Array {
			if v.Key("Type").Name() == "Page" || !v.Key("Contents").IsNull() {
				pages = append(pages, v)
			}
			return
		}
		for i := 0; i < kids.Len() && len(pages) < maxPages; i++ {
			walk(kids.Index(i), depth+1)
		}
	}
	walk(root, 0)
	return pages
}
