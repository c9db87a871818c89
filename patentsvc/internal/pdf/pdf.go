package pdf

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
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
// first; ctx and the limits are checked between pages and while a page's
// content is read. Extract never panics: panics inside the PDF library are
// recovered into ErrMalformed. It does no OCR: see Extractor.
func Extract(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
	return extract(ctx, r, size, nil, DefaultLimits)
}

// doc is an open document: its pages, each page's lines, and the budget
// of its decompressed bytes.
type doc struct {
	rd     *lpdf.Reader
	refs   []lpdf.Value
	pages  [][]string
	budget *budget
}

// extract is Extract within lim, reading image-only documents with e's
// OCR when e is not nil. A document past lim is a *LimitError; the end of
// ctx itself is ctx's error.
func extract(ctx context.Context, r io.ReaderAt, size int64, e *Extractor, lim Limits) (patent.Sections, error) {
	parent := ctx
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, lim.Timeout, tooSlow(lim.Timeout))
		defer cancel()
	}
	b := newBudget(lim.MaxDecoded)
	s, err := extractWithin(ctx, r, size, e, lim.MaxPages, b)
	switch {
	case err == nil:
		return s, nil
	case parent.Err() != nil:
		return patent.Sections{}, parent.Err()
	case b.exceeded() != nil:
		return patent.Sections{}, b.exceeded()
	case ctx.Err() != nil:
		return patent.Sections{}, context.Cause(ctx)
	}
	return patent.Sections{}, err
}

// extractWithin is extract's work: at most maxPages pages, their streams'
// decompressed bytes counted against b.
func extractWithin(ctx context.Context, r io.ReaderAt, size int64, e *Extractor, maxPages int, b *budget) (s patent.Sections, err error) {
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
	d, err := readPages(ctx, r, size, maxPages, b)
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
	s = cleanSections(findSections(d.pages))
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
// order: at most maxPages pages and maxTextBytes of text, their streams'
// decompressed bytes counted against b.
func readPages(ctx context.Context, r io.ReaderAt, size int64, maxPages int, b *budget) (*doc, error) {
	rd, err := lpdf.NewReaderWith(newSource(ctx, r), size, b.wrap)
	if err != nil {
		if err := cmp.Or(ctx.Err(), b.exceeded()); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	refs, err := pageTree(rd.Trailer().Key("Root").Key("Pages"), maxPages)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		if err := cmp.Or(ctx.Err(), b.exceeded()); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: no pages", ErrMalformed)
	}
	pages := make([][]string, 0, len(refs))
	failed, text := 0, 0
	var firstErr error
	for _, p := range refs {
		lines, err := readPage(ctx, p)
		if err := cmp.Or(ctx.Err(), b.exceeded()); err != nil {
			return nil, err
		}
		var limit *LimitError
		if errors.As(err, &limit) {
			return nil, err
		}
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
		}
		for _, l := range lines {
			text += len(l)
		}
		if text > maxTextBytes {
			return nil, &LimitError{Reason: fmt.Sprintf("more than %d MiB of text", maxTextBytes>>20)}
		}
		pages = append(pages, lines)
	}
	if failed == len(refs) {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, firstErr)
	}
	return &doc{rd: rd, refs: refs, pages: pages, budget: b}, nil
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
	var limit *LimitError
	if err != nil && (len(t.spans) == 0 || errors.As(err, &limit)) {
		return nil, err
	}
	return pageLines(t.spans, t.width), nil
}

// pageTree lists the leaves of the page tree in order, at most maxPages:
// a tree that declares (Count) or holds more is a *LimitError, before any
// page is read. It walks the tree itself, with a depth limit, because the
// library's Page(i) loops for ever on a Kids array that contains its own
// parent; a node that is its own ancestor makes the document malformed,
// and so does a tree of more nodes than its pages could need (nodes listed
// again and again: 2^depth paths to walk).
func pageTree(root lpdf.Value, maxPages int) ([]lpdf.Value, error) {
	if n := root.Key("Count").Int64(); n > int64(maxPages) {
		return nil, tooManyPages(maxPages)
	}
	maxNodes := 4*maxPages + maxTreeDepth
	var (
		pages []lpdf.Value
		path  []string // the nodes above the one walked, by their text
		nodes int
		err   error
		walk  func(v lpdf.Value, depth int)
	)
	walk = func(v lpdf.Value, depth int) {
		if depth > maxTreeDepth || v.Kind() != lpdf.Dict {
			return
		}
		if nodes++; nodes > maxNodes {
			err = fmt.Errorf("%w: the page tree has more than %d nodes", ErrMalformed, maxNodes)
			return
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Page" || kids.Kind() != lpdf.Array {
			if v.Key("Type").Name() == "Page" || !v.Key("Contents").IsNull() {
				if len(pages) == maxPages {
					err = tooManyPages(maxPages)
					return
				}
				pages = append(pages, v)
			}
			return
		}
		// A node's text holds its Kids as references ("3 0 R"): equal
		// text is the same node, or one that could only repeat it.
		node := v.String()
		if slices.Contains(path, node) {
			err = fmt.Errorf("%w: the page tree contains itself", ErrMalformed)
			return
		}
		path = append(path, node)
		for i := 0; i < kids.Len() && err == nil; i++ {
			walk(kids.Index(i), depth+1)
		}
		path = path[:len(path)-1]
	}
	walk(root, 0)
	if err != nil {
		return nil, err
	}
	return pages, nil
}
