package pdf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// This file reads image-only documents by OCR: each page short of text is
// rendered by the engine (pdftoppm, whatever the encoding of its scan),
// handed to an OCR engine, and the words it reads become spans placed on
// the page, which then go through the same line building and section
// finding as a text layer.
//
// The OCR engine is the tesseract program. It lives in this package,
// rather than in a package of its own, because its only input is the page
// images the PDF engine renders here, and adapters do not import each
// other (architecture_test.go).

// OCR reads the words on a page image. *Tesseract implements it.
type OCR interface {
	// Words returns the words on page, a grey image in PGM (P5) form
	// rendered at dpi dots per inch.
	Words(ctx context.Context, page io.Reader, dpi int) ([]Word, error)
}

// Word is a word read by OCR: its text, its box in the image's pixels,
// and its line, a number shared by the words of one line of text.
type Word struct {
	Text string
	Box  image.Rectangle
	Line int
}

// Limits of OCR at extraction time: a page's OCR is stopped after
// PageTimeout (the default for FindTesseract), and a long document has
// only its first and last maxOCRPages/2 pages read (the front page with the
// abstract, the claims at the end).
const (
	PageTimeout = 60 * time.Second
	maxOCRPages = 50
)

// Extractor finds the sections of PDFs like Extract, within its Limits,
// and reads image-only documents by OCR when it has an engine. It is safe
// for concurrent use: it reads at most GOMAXPROCS documents at once and
// OCRs at most GOMAXPROCS pages at a time (each a pdftoppm process under
// the engine's ceiling and a tesseract process of about 70 MB under
// OCRCeiling, the page's image passing between them through a pipe), the
// others waiting their turn.
type Extractor struct {
	ocr    OCR
	noOCR  string
	limits Limits
	slots  chan struct{} // one per page being OCR'd
	// reading has one slot per document being read: at most GOMAXPROCS at
	// once in the process, however many analyses run (reading is CPU
	// work; more at once would only add their memory). A document's
	// PDF_EXTRACT_TIMEOUT starts when it has its slot.
	reading chan struct{}
}

// NewExtractor returns an Extractor that reads documents within limits
// (PDF_EXTRACT_TIMEOUT, PDF_MAX_PAGES, PDF_MAX_DECODED_MB), and those
// without a text layer with ocr. When ocr is nil they give ErrImageOnly
// with a *patent.NotOCRedError whose reason is noOCR ("PDF_OCR is off").
func NewExtractor(ocr OCR, noOCR string, limits Limits) *Extractor {
	if ocr == nil && noOCR == "" {
		noOCR = "OCR unavailable"
	}
	n := max(1, runtime.GOMAXPROCS(0))
	return &Extractor{ocr: ocr, noOCR: noOCR, limits: limits, slots: make(chan struct{}, n), reading: make(chan struct{}, n)}
}

// Limits returns the extractor's limits.
func (e *Extractor) Limits() Limits { return e.limits }

// Extract is Extract with OCR, within the extractor's limits (OCR
// included). A document without a text layer is OCR'd page by page; when
// OCR is unavailable, fails or finds too little text the error is
// ErrImageOnly together with a *patent.NotOCRedError saying why. A
// document past a limit is a *LimitError. It returns ctx.Err() when ctx
// is done first, its wait for a turn included (at most GOMAXPROCS
// documents are read at once).
func (e *Extractor) Extract(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error) {
	select {
	case e.reading <- struct{}{}:
		defer func() { <-e.reading }()
	case <-ctx.Done():
		return patent.Sections{}, ctx.Err()
	}
	return extract(ctx, r, size, e, e.limits)
}

// ocrPages replaces the pages of d that have almost no text with what
// OCR reads on them. It returns the reason why OCR gave nothing, for the
// image-only error, when no page was read.
func (e *Extractor) ocrPages(ctx context.Context, d *doc) (string, error) {
	read, firstErr := 0, ""
	for i := range d.pages {
		if len(d.pages) > maxOCRPages && i >= maxOCRPages/2 && i < len(d.pages)-maxOCRPages/2 {
			continue
		}
		if letters(d.pages[i]) >= minCharsPerPage {
			continue
		}
		lines, err := e.ocrPage(ctx, d, i)
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if isLimit(err) { // the page's rendering passed the ceiling
			return "", err
		}
		if err != nil {
			if firstErr == "" {
				firstErr = fmt.Sprintf("OCR failed on page %d: %v", i+1, err)
			}
			continue
		}
		d.pages[i] = lines
		read++
	}
	if read == 0 && firstErr != "" {
		return firstErr, nil
	}
	return "OCR found too little text", nil
}

// maxOCRPixels bounds the image of a page given to OCR: a Letter page at
// 300 dpi has 8.4 million pixels; a larger page is rendered at a lower
// resolution.
const (
	ocrDPI       = 300
	maxOCRPixels = 12_000_000
)

// ocrDPIFor is the resolution page i is rendered at for OCR: ocrDPI, or
// less on a page so large that it would pass maxOCRPixels.
func ocrDPIFor(width, height float64) int {
	dpi := float64(ocrDPI)
	if area := width * height / (72 * 72); area > 0 && area*dpi*dpi > maxOCRPixels {
		dpi = math.Sqrt(maxOCRPixels / area)
	}
	return max(1, int(dpi))
}

// ocrPage renders page i of d (pdftoppm, in a child process bounded as the
// text's) and reads it by OCR, the image passing from one program to the
// other through a pipe; it returns the page's lines in reading order.
func (e *Extractor) ocrPage(ctx context.Context, d *doc, i int) ([]string, error) {
	select {
	case e.slots <- struct{}{}:
		defer func() { <-e.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	w, h := d.sizes[i][0], d.sizes[i][1]
	dpi := ocrDPIFor(w, h)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	wait, err := d.en.render(ctx, d.ceiling, io.NewSectionReader(d.src, 0, d.src.Size()), i+1, dpi, pw)
	pw.Close() // the child holds its own copy
	if err != nil {
		return nil, err
	}
	words, oerr := e.ocr.Words(ctx, pr, dpi)
	pr.Close() // a renderer still writing ends (SIGPIPE)
	rerr := wait()
	switch {
	case isLimit(rerr): // the page is past the memory ceiling
		return nil, rerr
	case oerr != nil && rerr != nil && !errors.Is(rerr, errOutputClosed):
		return nil, rerr // the page was not rendered: OCR's error follows from it
	case oerr != nil:
		return nil, oerr
	}
	// OCR read the page: how the renderer ended after that (the pipe
	// closed under it) does not matter.
	return pageLines(wordSpans(words, 72/float64(dpi), h), w), nil
}

// isLimit reports whether err is a *LimitError.
func isLimit(err error) bool {
	var limit *LimitError
	return errors.As(err, &limit)
}

// wordSpans places OCR'd words on the page, as spans of a text layer: each
// word runs along the bottom of its line's box (image pixels of scale
// points each, y down from the top of a page height points high), with
// the line's height as its size, so that a line's words make one row.
func wordSpans(words []Word, scale, height float64) []span {
	type extent struct{ top, bottom int }
	lines := map[int]extent{}
	for _, wd := range words {
		e, ok := lines[wd.Line]
		if !ok {
			e = extent{wd.Box.Min.Y, wd.Box.Max.Y}
		}
		lines[wd.Line] = extent{min(e.top, wd.Box.Min.Y), max(e.bottom, wd.Box.Max.Y)}
	}
	spans := make([]span, 0, len(words))
	for _, wd := range words {
		e := lines[wd.Line]
		spans = append(spans, span{
			x0:   float64(wd.Box.Min.X) * scale,
			x1:   float64(wd.Box.Max.X) * scale,
			y:    height - float64(e.bottom)*scale,
			size: float64(e.bottom-e.top) * scale,
			text: wd.Text + " ",
		})
	}
	return spans
}

// Tesseract reads page images with the tesseract program, one process a
// page: "tesseract stdin stdout -l LANG --dpi N tsv" fed the page as a PGM
// image, its TSV output giving each word's box and line. The process runs
// inside the engine's boundary (an address space of OCRCeiling, its own
// process group killed after the page timeout or when the caller ends),
// with OMP_THREAD_LIMIT=1 (tesseract's own threads only slow it down when
// several pages are read at once), and what it prints is capped at 8 MB.
type Tesseract struct {
	path    string
	lang    string
	timeout time.Duration
	ceiling int64 // address space, bytes: OCRCeiling
}

// OCRCeiling is the address space a tesseract process may take. The
// largest image it is given (maxOCRPixels) needs 190 MiB of memory and
// 200-250 MiB of address space at worst (a page of random black and white
// pixels; a scanned patent page less than 150 MiB: docs/architecture.md),
// so twice that: a page that would need more fails with "tesseract: page
// needs more than 512 MiB of memory", the rest of the document is read.
const OCRCeiling = 512 << 20

// maxTSV caps the output read from tesseract for one page; a dense page
// gives about 100 KB.
const maxTSV = 8 << 20

// FindTesseract looks for the tesseract program on PATH and checks that it
// has the language data for lang ("eng"), within ctx. Each page read is
// stopped after pageTimeout. The error says why OCR is unavailable, in
// words fit to show a client ("OCR unavailable: no tesseract on PATH").
func FindTesseract(ctx context.Context, lang string, pageTimeout time.Duration) (*Tesseract, error) {
	path, err := exec.LookPath("tesseract")
	if err != nil {
		return nil, errors.New("OCR unavailable: no tesseract on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--list-langs").Output()
	if err != nil {
		return nil, fmt.Errorf("OCR unavailable: tesseract --list-langs failed: %v", err)
	}
	for _, l := range strings.Fields(string(out)) {
		if l == lang {
			return &Tesseract{path: path, lang: lang, timeout: pageTimeout, ceiling: OCRCeiling}, nil
		}
	}
	return nil, fmt.Errorf("OCR unavailable: tesseract has no %s language data", lang)
}

// Words runs tesseract on page.
func (t *Tesseract) Words(ctx context.Context, page io.Reader, dpi int) ([]Word, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cmd := bounded(ctx, t.ceiling, t.path, "stdin", "stdout", "-l", t.lang, "--dpi", strconv.Itoa(dpi), "tsv")
	// The environment passes through (TESSDATA_PREFIX may be set for it).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	cmd.Stdin = page
	var stdout, stderr capped
	stdout.limit, stderr.limit = maxTSV, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if err := parent.Err(); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tesseract: page not read within %v", t.timeout)
		}
		// A failed allocation under the ceiling: C++'s bad_alloc, or
		// leptonica's own message.
		if msg := stderr.String(); strings.Contains(msg, "bad_alloc") || strings.Contains(msg, "Out of memory") ||
			strings.Contains(msg, "out of memory") {
			return nil, fmt.Errorf("tesseract: page needs more than %d MiB of memory", t.ceiling>>20)
		}
		return nil, fmt.Errorf("tesseract: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if stdout.over {
		return nil, fmt.Errorf("tesseract: more than %d bytes of output", maxTSV)
	}
	return parseTSV(stdout.Bytes())
}

// capped is a buffer that keeps the first limit bytes written to it.
type capped struct {
	bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// parseTSV reads the words of tesseract's TSV output: the rows of level 5,
// "5 page block par line word left top width height conf text", skipping
// empty words and those tesseract gives no confidence.
func parseTSV(out []byte) ([]Word, error) {
	var words []Word
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 12 || f[0] != "5" {
			continue
		}
		var n [10]int
		for i := range 10 {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				return nil, fmt.Errorf("tesseract: bad tsv row %q", sc.Text())
			}
			n[i] = v
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		text := strings.TrimSpace(f[11])
		if err != nil || conf < 0 || text == "" {
			continue
		}
		// Blocks, paragraphs and lines are numbered within a page.
		line := (n[2]*1000+n[3])*1000 + n[4]
		words = append(words, Word{Text: text, Box: image.Rect(n[6], n[7], n[6]+n[8], n[7]+n[9]), Line: line})
	}
	return words, sc.Err()
}
