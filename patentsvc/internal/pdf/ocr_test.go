package pdf_test

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// mustFindTesseract returns the tesseract engine, or skips the test
// visibly when tesseract or its English data is missing. REQUIRE_OCR=1
// (set by .ci/run) turns the skip into a failure.
func mustFindTesseract(tb testing.TB) *pdf.Tesseract {
	tb.Helper()
	tess, err := pdf.FindTesseract(context.Background(), "eng", pdf.PageTimeout)
	if err != nil {
		if os.Getenv("REQUIRE_OCR") == "1" {
			tb.Fatalf("REQUIRE_OCR=1 but %v (Debian: apt-get install tesseract-ocr)", err)
		}
		tb.Skipf("runtime OCR not tested: %v (Debian: apt-get install tesseract-ocr)", err)
	}
	return tess
}

// scan is the image-only test document: two scanned pages of a US grant,
// without a text layer.
const scan = "US11762912"

// TestExtractOCR reads the scan by OCR at extraction time and scores its
// abstract against the published one.
func TestExtractOCR(t *testing.T) {
	t.Parallel()
	tess := mustFindTesseract(t)
	doc := mustLoadAbstracts(t, "testdata")[scan]
	data := mustReadTestdata(t, doc.File)
	start := time.Now()
	s, err := pdf.NewExtractor(tess, "", pdf.DefaultLimits).Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Extract(%s) with OCR: %v", doc.File, err)
	}
	score := f1(s.Abstract, doc.Abstract)
	t.Logf("%s by OCR: abstract F1 %.3f, %d pages in %v", doc.File, score, s.Pages, time.Since(start).Round(time.Millisecond))
	if s.Pages != 2 || score < minF1 {
		t.Errorf("%s by OCR: %d pages, abstract F1 %.3f, want 2 and >= %v\ngot:  %s\nwant: %s", doc.File, s.Pages, score, minF1, s.Abstract, doc.Abstract)
	}
	checkNotCut(t, doc.File, s.Abstract, doc.Abstract)
}

// wantNotOCRed checks that err reports an image-only document with reason.
func wantNotOCRed(t *testing.T, err error, reason string) {
	t.Helper()
	var no *patent.NotOCRedError
	if !errors.Is(err, pdf.ErrImageOnly) || !errors.Is(err, patent.ErrPDFUnreadable) || !errors.As(err, &no) || no.Reason != reason {
		t.Errorf("Extract(scan) error = %v, want ErrImageOnly with the reason %q", err, reason)
	}
}

// engineOnly returns a directory holding the PDF engine's programs and
// nothing else, for a PATH without tesseract.
func engineOnly(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"pdftotext", "pdftoppm"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("the PDF engine is needed: %v (Debian: apt-get install poppler-utils)", err)
		}
		if err := os.Symlink(path, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExtractWithoutOCR: with PDF_OCR=off, or without tesseract on PATH,
// a scan is reported as before, image-only, with the reason.
func TestExtractWithoutOCR(t *testing.T) {
	t.Setenv("PATH", engineOnly(t)) // no tesseract there
	_, err := pdf.FindTesseract(context.Background(), "eng", pdf.PageTimeout)
	const missing = "OCR unavailable: no tesseract on PATH"
	if err == nil || err.Error() != missing {
		t.Fatalf("FindTesseract with an empty PATH = %v, want %q", err, missing)
	}
	for _, tt := range []struct {
		name   string
		reason string
	}{
		{"PDF_OCR=off", "PDF_OCR is off"},
		{"no tesseract", err.Error()},
	} {
		for _, file := range []string{scan + ".pdf", "CN104766014B.pdf"} {
			t.Run(tt.name+"/"+file, func(t *testing.T) {
				data := mustReadTestdata(t, file)
				_, err := pdf.NewExtractor(nil, tt.reason, pdf.DefaultLimits).Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
				wantNotOCRed(t, err, tt.reason)
			})
		}
	}
}

// fakeOCR is an OCR engine whose answer the test gives.
type fakeOCR struct {
	WordsFn func(ctx context.Context, page io.Reader, dpi int) ([]pdf.Word, error)
}

var _ pdf.OCR = (*fakeOCR)(nil)

func (f *fakeOCR) Words(ctx context.Context, page io.Reader, dpi int) ([]pdf.Word, error) {
	return f.WordsFn(ctx, page, dpi)
}

// pgmSize reads the size of the PGM image on r (its header, "P5 W H
// 255"), and the rest of it.
func pgmSize(t *testing.T, r io.Reader) image.Point {
	br := bufio.NewReader(r)
	var magic string
	var size image.Point
	var maxVal int
	if _, err := fmt.Fscan(br, &magic, &size.X, &size.Y, &maxVal); err != nil || magic != "P5" || maxVal != 255 {
		t.Errorf("the page image is not a grey PGM: %q %v %d: %v", magic, size, maxVal, err)
	}
	br.ReadByte() // the white space after the header
	n, _ := io.Copy(io.Discard, br)
	if n != int64(size.X*size.Y) {
		t.Errorf("the page image has %d bytes of pixels, want %d x %d", n, size.X, size.Y)
	}
	return size
}

// frontPageWords lays lines out as OCR reads them on a 300 dpi scan: one
// word box after another, each line 50 pixels below the last.
func frontPageWords(lines ...string) []pdf.Word {
	var out []pdf.Word
	for i, l := range lines {
		x, y := 300, 300+50*i
		for _, w := range strings.Fields(l) {
			out = append(out, pdf.Word{Text: w, Box: image.Rect(x, y, x+18*len(w), y+30), Line: i})
			x += 18*len(w) + 15
		}
	}
	return out
}

// TestExtractOCRPipeline runs the OCR path with a fake engine: the scan's
// page is rendered and handed over at 300 dpi, the words come back
// placed on the page and go through section finding; a failing engine is
// reported as the reason, and a cancelled ctx as itself.
func TestExtractOCRPipeline(t *testing.T) {
	t.Parallel()
	data := mustReadTestdata(t, scan+".pdf")
	extract := func(ctx context.Context, ocr pdf.OCR) (patent.Sections, error) {
		return pdf.NewExtractor(ocr, "", pdf.DefaultLimits).Extract(ctx, bytes.NewReader(data), int64(len(data)))
	}
	text := []string{
		"(12) United States Patent", "(54) WIDGET WITH A BLADE HELD BY A PIN",
		"(71) Applicant: Widget Works Incorporated, Springfield, IL (US)",
		"(72) Inventors: Ada Lovelace, London (GB); Charles Babbage, London (GB)",
		"(57) ABSTRACT",
		"A widget has a handle and a blade that is held in the handle by a pin, so",
		"that the blade can be changed without tools. The blade is sharp and is made",
		"of hardened steel.", "10 Claims, 3 Drawing Sheets",
	}
	var sizes []image.Point
	var dpis []int
	s, err := extract(context.Background(), &fakeOCR{WordsFn: func(_ context.Context, page io.Reader, dpi int) ([]pdf.Word, error) {
		sizes, dpis = append(sizes, pgmSize(t, page)), append(dpis, dpi)
		return frontPageWords(text...), nil
	}})
	if err != nil {
		t.Fatalf("Extract with a fake OCR: %v", err)
	}
	if want := "A widget has a handle and a blade that is held in the handle by a pin, so that the blade can be changed without tools. The blade is sharp and is made of hardened steel."; s.Abstract != want || s.Pages != 2 {
		t.Errorf("Extract with a fake OCR = %d pages, abstract %q, want 2 pages, %q", s.Pages, s.Abstract, want)
	}
	if want := []image.Point{{2550, 3300}, {2550, 3300}}; len(sizes) != 2 || sizes[0] != want[0] || sizes[1] != want[1] || dpis[0] != 300 {
		t.Errorf("OCR given images %v at %v dpi, want %v at 300", sizes, dpis, want)
	}

	_, err = extract(context.Background(), &fakeOCR{WordsFn: func(context.Context, io.Reader, int) ([]pdf.Word, error) {
		return nil, errors.New("engine broke")
	}})
	wantNotOCRed(t, err, "OCR failed on page 1: engine broke")

	ctx, cancel := context.WithCancel(context.Background())
	_, err = extract(ctx, &fakeOCR{WordsFn: func(context.Context, io.Reader, int) ([]pdf.Word, error) {
		cancel()
		return nil, context.Canceled
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Extract cancelled during OCR: %v, want context.Canceled", err)
	}
}

// fakeTesseract puts a shell script named tesseract first on PATH: it
// lists langs for --list-langs and runs body otherwise.
func fakeTesseract(t *testing.T, langs, body string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake tesseract is a shell script")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = --list-langs ]; then echo 'List of available languages (1):'; echo " + langs + "; exit 0; fi\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tesseract"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestTesseractBounds: a page that tesseract does not read within the
// page timeout stops it and is reported; tesseract without the English
// data is unavailable; a tesseract that fails is reported with its error.
func TestTesseractBounds(t *testing.T) {
	data := mustReadTestdata(t, scan+".pdf")
	t.Run("timeout", func(t *testing.T) {
		fakeTesseract(t, "eng", "exec sleep 30")
		tess, err := pdf.FindTesseract(context.Background(), "eng", 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = pdf.NewExtractor(tess, "", pdf.DefaultLimits).Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		wantNotOCRed(t, err, "OCR failed on page 1: tesseract: page not read within 300ms")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("two pages over a 300ms page timeout took %v", d)
		}
	})
	t.Run("failure", func(t *testing.T) {
		fakeTesseract(t, "eng", "echo 'Error: bad image' >&2; exit 1")
		tess, err := pdf.FindTesseract(context.Background(), "eng", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pdf.NewExtractor(tess, "", pdf.DefaultLimits).Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
		wantNotOCRed(t, err, "OCR failed on page 1: tesseract: exit status 1: Error: bad image")
	})
	t.Run("no English data", func(t *testing.T) {
		fakeTesseract(t, "osd", "exit 1")
		_, err := pdf.FindTesseract(context.Background(), "eng", time.Minute)
		if want := "OCR unavailable: tesseract has no eng language data"; err == nil || err.Error() != want {
			t.Errorf("FindTesseract without eng = %v, want %q", err, want)
		}
	})
}

// TestExtractOCRConcurrency: however many scans are read at once, at most
// GOMAXPROCS pages are OCR'd at a time, and as many as that are. On
// synctest's clock an OCR call's 20 ms pass only once every page that can
// be in OCR is.
func TestExtractOCRConcurrency(t *testing.T) {
	t.Parallel()
	data := mustReadTestdata(t, scan+".pdf")
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		running, most := 0, 0
		ex := pdf.NewExtractor(&fakeOCR{WordsFn: func(_ context.Context, page io.Reader, _ int) ([]pdf.Word, error) {
			// The renderer is a process: synctest's clock stands still
			// until it is done, and it is done once its page is read.
			io.Copy(io.Discard, page)
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return nil, nil
		}}, "", pdf.DefaultLimits)
		var wg sync.WaitGroup
		for range 4 * runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				ex.Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
			})
		}
		wg.Wait()
		if most != runtime.GOMAXPROCS(0) {
			t.Errorf("%d pages OCR'd at once, want GOMAXPROCS (%d)", most, runtime.GOMAXPROCS(0))
		}
	})
}

// TestExtractDocumentsAtOnce: an Extractor reads at most GOMAXPROCS
// documents at once, however many analyses ask. With that many held in
// OCR, one more document (with a text layer: nothing to wait for but its
// turn) is not read before its context ends; once one is done, it is.
func TestExtractDocumentsAtOnce(t *testing.T) {
	t.Parallel()
	scanned := mustReadTestdata(t, scan+".pdf")
	text := mustReadTestdata(t, "US8427103.pdf")
	n := runtime.GOMAXPROCS(0)
	inOCR, release := make(chan struct{}, n), make(chan struct{})
	var once sync.Once
	ex := pdf.NewExtractor(&fakeOCR{WordsFn: func(context.Context, io.Reader, int) ([]pdf.Word, error) {
		inOCR <- struct{}{}
		<-release
		return nil, nil
	}}, "", pdf.DefaultLimits)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer once.Do(func() { close(release) })
	for range n {
		wg.Go(func() { ex.Extract(context.Background(), bytes.NewReader(scanned), int64(len(scanned))) })
	}
	for range n {
		<-inOCR // every slot is held by a document in OCR
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := ex.Extract(ctx, bytes.NewReader(text), int64(len(text))); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with %d documents being read, one more = %v, want it to wait for its turn until its context ends", n, err)
	}
	once.Do(func() { close(release) })
	s, err := ex.Extract(context.Background(), bytes.NewReader(text), int64(len(text)))
	if err != nil || s.Abstract == "" {
		t.Fatalf("once the others are done: %v, abstract %q", err, s.Abstract)
	}
}

// TestExtractOCREncodings OCRs the scan's front page encoded in each way
// a scanner may write it into a PDF (decisions.md, "patentsvc: PDFs read
// by a maintained engine"): the published file's CCITT Group 4 fax image,
// and the same page, rendered by pdftoppm, re-encoded here as JBIG2
// (pdftest.JBIG2, checked against jbig2dec in its own tests), JPEG,
// JPEG 2000 (opj_compress, Debian's libopenjp2-tools) and deflated grey.
// Each abstract scores F1 >= 0.95 against the published one. It needs
// tesseract and opj_compress; REQUIRE_OCR=1 fails instead of skipping.
func TestExtractOCREncodings(t *testing.T) {
	t.Parallel()
	tess := mustFindTesseract(t)
	opj, err := exec.LookPath("opj_compress")
	if err != nil {
		if os.Getenv("REQUIRE_OCR") == "1" {
			t.Fatalf("REQUIRE_OCR=1 but no opj_compress: %v (Debian: apt-get install libopenjp2-tools)", err)
		}
		t.Skipf("the JPEG 2000 scan is made with opj_compress: %v (Debian: apt-get install libopenjp2-tools)", err)
	}
	doc := mustLoadAbstracts(t, "testdata")[scan]
	published := mustReadTestdata(t, doc.File)
	if !bytes.Contains(published, []byte("/CCITTFaxDecode")) {
		t.Fatalf("%s: want its scans as CCITT fax images", doc.File)
	}
	page := renderGray(t, published)
	w, h := page.Rect.Dx(), page.Rect.Dy()

	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, page, &jpeg.Options{Quality: 75}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pgm := filepath.Join(dir, "page.pgm")
	if err := os.WriteFile(pgm, append(fmt.Appendf(nil, "P5\n%d %d\n255\n", w, h), page.Pix...), 0o644); err != nil {
		t.Fatal(err)
	}
	jp2 := filepath.Join(dir, "page.jp2")
	if out, err := exec.Command(opj, "-i", pgm, "-o", jp2, "-r", "20").CombinedOutput(); err != nil {
		t.Fatalf("opj_compress: %v\n%s", err, out)
	}
	jpx, err := os.ReadFile(jp2)
	if err != nil {
		t.Fatal(err)
	}
	var flate bytes.Buffer
	zw := zlib.NewWriter(&flate)
	zw.Write(page.Pix)
	zw.Close()

	const grey = "/ColorSpace /DeviceGray /BitsPerComponent 8 "
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"CCITT Group 4 (as published)", published},
		{"JBIG2", pdftest.ImagePDF(w, h, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode", pdftest.JBIG2(page))},
		{"JPEG", pdftest.ImagePDF(w, h, grey+"/Filter /DCTDecode", jpg.Bytes())},
		{"JPEG 2000", pdftest.ImagePDF(w, h, grey+"/Filter /JPXDecode", jpx)},
		{"Flate", pdftest.ImagePDF(w, h, grey+"/Filter /FlateDecode", flate.Bytes())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := pdf.NewExtractor(tess, "", pdf.DefaultLimits).Extract(context.Background(), bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			score := f1(s.Abstract, doc.Abstract)
			t.Logf("%s: %d bytes, abstract F1 %.3f", tt.name, len(tt.data), score)
			if score < minF1 {
				t.Errorf("%s: abstract F1 %.3f, want >= %v\ngot:  %s\nwant: %s", tt.name, score, minF1, s.Abstract, doc.Abstract)
			}
			checkNotCut(t, tt.name, s.Abstract, doc.Abstract)
		})
	}
}

// renderGray renders the first page of data at 300 dpi in grey with
// pdftoppm.
func renderGray(t *testing.T, data []byte) *image.Gray {
	t.Helper()
	cmd := exec.Command("pdftoppm", "-f", "1", "-l", "1", "-r", "300", "-gray", "-png", "-singlefile", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftoppm: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	g := image.NewGray(img.Bounds())
	draw.Draw(g, g.Rect, img, img.Bounds().Min, draw.Src)
	return g
}
