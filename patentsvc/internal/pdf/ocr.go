package pdf

import (
	"bufio"
	"bytes"
	"cmp"
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
	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
)

// This file reads image-only documents by OCR: each page's scan is
// decoded (image.go), handed to an OCR engine, and the words it reads
// become spans placed on the page, which then go through the same line
// building and section finding as a text layer.
//
// The engine is the tesseract program. It lives in this package, rather
// than in a package of its own, because its only input is the page images
// this package decodes, and adapters do not import each other
// (architecture_test.go).

// OCR reads the words on a page image. *Tesseract implements it.
type OCR interface {
	// Words returns the words on img, scanned at dpi dots per inch.
	Words(ctx context.Context, img *image.Gray, dpi int) ([]Word, error)
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
// OCRs at most GOMAXPROCS pages at a time (each holds a decoded image of up to
// 40 MB and a tesseract process of about 50 MB), the others waiting their
// turn.
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

// ocrPages replaces the pages of doc that have almost no text with what
// OCR reads on their scans. It returns the reason why OCR gave nothing,
// for the image-only error, when no page was read.
func (e *Extractor) ocrPages(ctx context.Context, r io.ReaderAt, d *doc) (string, error) {
	if !d.rd.Trailer().Key("Encrypt").IsNull() {
		return "OCR unavailable: the document is encrypted", nil
	}
	read, firstErr := 0, ""
	for i := range d.refs {
		if len(d.refs) > maxOCRPages && i >= maxOCRPages/2 && i < len(d.refs)-maxOCRPages/2 {
			continue
		}
		if letters(d.pages[i]) >= minCharsPerPage {
			continue
		}
		lines, err := e.ocrPage(ctx, r, d.refs[i], d.budget)
		if err := cmp.Or(ctx.Err(), d.budget.exceeded()); err != nil {
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

// ocrPage reads one page's scan by OCR and returns its lines in reading
// order.
func (e *Extractor) ocrPage(ctx context.Context, r io.ReaderAt, page lpdf.Value, b *budget) (lines []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			if a, ok := p.(abortWalk); ok {
				err = a.err
				return
			}
			err = fmt.Errorf("malformed page: %v", p)
		}
	}()
	pi, err := findPageImage(ctx, page)
	if err != nil {
		return nil, err
	}
	select {
	case e.slots <- struct{}{}:
		defer func() { <-e.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Its pixels (a byte each) count against the document's budget; decodeImage
	// refuses images past maxImagePixels.
	if w, h := pi.v.Key("Width").Int64(), pi.v.Key("Height").Int64(); w > 0 && h > 0 && w <= maxImagePixels && h <= maxImagePixels {
		if err := b.charge(min(w*h, maxImagePixels)); err != nil {
			return nil, err
		}
	}
	g, err := decodeImage(r, pi.v)
	if err != nil {
		return nil, err
	}
	g, _ = shrink(g)
	w, h := g.Rect.Dx(), g.Rect.Dy()
	// Dots per inch across the image as drawn (72 points an inch).
	dpi := int(math.Round(float64(w) / (math.Hypot(pi.ctm[0], pi.ctm[1]) / 72)))
	words, err := e.ocr.Words(ctx, g, max(dpi, 1))
	if err != nil {
		return nil, err
	}
	return pageLines(wordSpans(words, w, h, pi.ctm), pageWidth(page)), nil
}

// wordSpans places OCR'd words on the page, as spans of a text layer: each
// word runs along the bottom of its line's box (image pixels, y down,
// mapped through the image's unit square by ctm), with the line's height
// as its size, so that a line's words make one row.
func wordSpans(words []Word, w, h int, ctm mat) []span {
	type extent struct{ top, bottom int }
	lines := map[int]extent{}
	for _, wd := range words {
		e, ok := lines[wd.Line]
		if !ok {
			e = extent{wd.Box.Min.Y, wd.Box.Max.Y}
		}
		lines[wd.Line] = extent{min(e.top, wd.Box.Min.Y), max(e.bottom, wd.Box.Max.Y)}
	}
	place := func(px, py int) (float64, float64) {
		return ctm.apply(float64(px)/float64(w), 1-float64(py)/float64(h))
	}
	spans := make([]span, 0, len(words))
	for _, wd := range words {
		e := lines[wd.Line]
		x0, y := place(wd.Box.Min.X, e.bottom)
		x1, _ := place(wd.Box.Max.X, e.bottom)
		_, top := place(wd.Box.Min.X, e.top)
		spans = append(spans, span{x0: x0, x1: x1, y: y, size: math.Abs(top - y), text: wd.Text + " "})
	}
	return spans
}

// Tesseract reads page images with the tesseract program, one process a
// page: "tesseract stdin stdout -l LANG --dpi N tsv" fed the page as a PGM
// image, its TSV output giving each word's box and line. The process is
// killed after the page timeout, runs with OMP_THREAD_LIMIT=1 (tesseract's
// own threads only slow it down when several pages are read at once), and
// what it prints is capped at 8 MB.
type Tesseract struct {
	path    string
	lang    string
	timeout time.Duration
}

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
			return &Tesseract{path: path, lang: lang, timeout: pageTimeout}, nil
		}
	}
	return nil, fmt.Errorf("OCR unavailable: tesseract has no %s language data", lang)
}

// Words runs tesseract on img.
func (t *Tesseract) Words(ctx context.Context, img *image.Gray, dpi int) ([]Word, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.path, "stdin", "stdout", "-l", t.lang, "--dpi", strconv.Itoa(dpi), "tsv")
	// The environment passes through (TESSDATA_PREFIX may be set for it).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	cmd.Stdin = io.MultiReader(strings.NewReader(fmt.Sprintf("P5\n%d %d\n255\n", img.Rect.Dx(), img.Rect.Dy())), grayRows(img))
	var stdout, stderr capped
	stdout.limit, stderr.limit = maxTSV, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if err := parent.Err(); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tesseract: page not read within %v", t.timeout)
		}
		return nil, fmt.Errorf("tesseract: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if stdout.over {
		return nil, fmt.Errorf("tesseract: more than %d bytes of output", maxTSV)
	}
	return parseTSV(stdout.Bytes())
}

// grayRows reads img's pixels row by row, without copying the image.
func grayRows(img *image.Gray) io.Reader {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if img.Stride == w {
		return bytes.NewReader(img.Pix[:w*h])
	}
	readers := make([]io.Reader, h)
	for y := range h {
		readers[y] = bytes.NewReader(img.Pix[y*img.Stride : y*img.Stride+w])
	}
	return io.MultiReader(readers...)
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
