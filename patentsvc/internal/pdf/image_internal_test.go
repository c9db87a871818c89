package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// imagePDF builds a one-page Letter PDF that draws an image XObject of
// w x h pixels with the given dictionary entries and data over the page,
// placed as Google Patents places its scans (a cm a little wider than the
// page).
func imagePDF(w, h int, entries string, data []byte) []byte {
	content := "q 614.4 0 0 792 -1.2 0 cm /Im1 Do Q"
	return pdftest.DocHeader("%PDF-1.4\n",
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
		pdftest.Stream(content),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d %s /Length %d >>\nstream\n%s\nendstream", w, h, entries, len(data), data),
	)
}

// firstPage opens data and returns its first page.
func firstPage(t *testing.T, data []byte) lpdf.Value {
	t.Helper()
	rd, err := lpdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := pageTree(rd.Trailer().Key("Root").Key("Pages"), DefaultLimits.MaxPages)
	if err != nil {
		t.Fatal(err)
	}
	return pages[0]
}

// decodeFirst finds and decodes the image on the first page of data.
func decodeFirst(t *testing.T, data []byte) (*image.Gray, pageImage, error) {
	t.Helper()
	pi, err := findPageImage(context.Background(), firstPage(t, data))
	if err != nil {
		t.Fatal(err)
	}
	g, err := decodeImage(bytes.NewReader(data), pi.v)
	return g, pi, err
}

// mustScan decodes the first page of the scanned test document: a 300
// dpi Group 4 fax image of 2560 x 3300 pixels.
func mustScan(t *testing.T) *image.Gray {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "US11762912.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	g, pi, err := decodeFirst(t, data)
	if err != nil {
		t.Fatalf("decode the scan: %v", err)
	}
	if g.Rect.Dx() != 2560 || g.Rect.Dy() != 3300 || pi.ctm != (mat{614.4, 0, 0, 792, -1.2, 0}) {
		t.Fatalf("scan = %v drawn by %v, want 2560x3300 by [614.4 0 0 792 -1.2 0]", g.Rect, pi.ctm)
	}
	return g
}

func TestDecodeScan(t *testing.T) {
	g := mustScan(t)
	black := 0
	for _, p := range g.Pix {
		if p == 0 {
			black++
		} else if p != 255 {
			t.Fatalf("fax image has a grey pixel %d", p)
		}
	}
	// A page of text is mostly white: a few percent of its pixels are ink.
	if frac := float64(black) / float64(len(g.Pix)); frac < 0.01 || frac > 0.2 {
		t.Errorf("black pixels = %.3f of the page, want a few percent", frac)
	}
}

// deflate compresses b with zlib.
func deflate(b []byte) []byte {
	var out bytes.Buffer
	zw := zlib.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// pngFiltered writes the rows of pix (stride bytes each) with PNG filter
// types, cycling through None, Sub, Up, Average and Paeth.
func pngFiltered(pix []byte, stride, bpp int) []byte {
	var out []byte
	prev := make([]byte, stride)
	for y := 0; y*stride < len(pix); y++ {
		cur := pix[y*stride : (y+1)*stride]
		ft := byte(y % 5)
		out = append(out, ft)
		for i := range cur {
			var a, c byte
			if i >= bpp {
				a, c = cur[i-bpp], prev[i-bpp]
			}
			b := prev[i]
			switch ft {
			case 0:
				out = append(out, cur[i])
			case 1:
				out = append(out, cur[i]-a)
			case 2:
				out = append(out, cur[i]-b)
			case 3:
				out = append(out, cur[i]-byte((int(a)+int(b))/2))
			case 4:
				out = append(out, cur[i]-paeth(a, b, c))
			}
		}
		prev = cur
	}
	return out
}

func TestDecodeImageKinds(t *testing.T) {
	const w, h = 7, 5
	gray := make([]byte, w*h)
	for i := range gray {
		gray[i] = byte(i * 7)
	}
	rgb := make([]byte, 3*w*h)
	for i := range gray {
		rgb[3*i], rgb[3*i+1], rgb[3*i+2] = gray[i], gray[i], gray[i]
	}
	// 1 bit: 0 black, 1 white, each row of 7 padded to a byte.
	bits := []byte{0b10101010, 0b01010101, 0b11111110, 0, 0b10000011}
	bitPix := func(x, y int) byte { return 255 * (bits[y] >> (7 - x) & 1) }
	var jpg bytes.Buffer
	src := image.NewGray(image.Rect(0, 0, 64, 48))
	for i := range src.Pix {
		src.Pix[i] = 200
	}
	if err := jpeg.Encode(&jpg, src, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		w, h    int
		entries string
		data    []byte
		want    func(x, y int) byte
		wantErr string
	}{
		{"grey", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 8", gray, func(x, y int) byte { return gray[y*w+x] }, ""},
		{"grey flate", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", deflate(gray), func(x, y int) byte { return gray[y*w+x] }, ""},
		{"grey flate png predictors", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter [/FlateDecode] /DecodeParms [<< /Predictor 15 /Columns 7 >>]", deflate(pngFiltered(gray, w, 1)), func(x, y int) byte { return gray[y*w+x] }, ""},
		{"rgb png predictors", w, h, "/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Colors 3 /Columns 7 >>", deflate(pngFiltered(rgb, 3*w, 3)), func(x, y int) byte { return gray[y*w+x] }, ""},
		{"1 bit", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /FlateDecode", deflate(bits), bitPix, ""},
		{"1 bit negative", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Decode [1 0]", bits, func(x, y int) byte { return 255 - bitPix(x, y) }, ""},
		{"image mask", w, h, "/ImageMask true", bits, bitPix, ""},
		{"jpeg", 64, 48, "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode", jpg.Bytes(), func(x, y int) byte { return 200 }, ""},
		{"jbig2", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode", bits, nil, "JBIG2Decode not supported"},
		{"indexed", w, h, "/ColorSpace [/Indexed /DeviceRGB 1 <000000FFFFFF>] /BitsPerComponent 8", gray, nil, "colour space Indexed not supported"},
		{"short data", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 8", gray[:10], nil, "unexpected EOF"},
		{"too many pixels", 100000, 100000, "/ColorSpace /DeviceGray /BitsPerComponent 8", gray, nil, "at most 40000000 pixels"},
		{"fax columns differ", w, h, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns 9 >>", bits, nil, "9 columns"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, _, err := decodeFirst(t, imagePDF(tt.w, tt.h, tt.entries, tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("decodeImage = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeImage: %v", err)
			}
			if g.Rect.Dx() != tt.w || g.Rect.Dy() != tt.h {
				t.Fatalf("decodeImage = %v, want %dx%d", g.Rect, tt.w, tt.h)
			}
			for y := range tt.h {
				for x := range tt.w {
					if got, want := g.GrayAt(x, y).Y, tt.want(x, y); got != want && (tt.name != "jpeg" || got < want-3 || got > want+3) {
						t.Fatalf("pixel (%d,%d) = %d, want %d", x, y, got, want)
					}
				}
			}
		})
	}
}

func TestShrink(t *testing.T) {
	small := image.NewGray(image.Rect(0, 0, 2550, 3300)) // 300 dpi Letter
	if g, f := shrink(small); g != small || f != 1 {
		t.Errorf("shrink(300 dpi page) = %v, %d, want the page itself", g.Rect, f)
	}
	big := image.NewGray(image.Rect(0, 0, 5100, 6600)) // 600 dpi
	for i := range big.Pix {
		big.Pix[i] = byte(255 * (i % 2))
	}
	g, f := shrink(big)
	if f != 2 || g.Rect.Dx() != 2550 || g.Rect.Dy() != 3300 || g.Pix[0] != 127 {
		t.Errorf("shrink(600 dpi page) = %v, factor %d, pixel %d; want 2550x3300, 2, 127", g.Rect, f, g.Pix[0])
	}
}

// TestExtractOCRImageKinds OCRs the scan re-encoded as the other kinds of
// image scanners write, each in an image-only PDF: JPEG, and deflated
// 8-bit grey at 200 dpi. It needs tesseract.
func TestExtractOCRImageKinds(t *testing.T) {
	tess, err := FindTesseract(context.Background(), "eng", PageTimeout)
	if err != nil {
		if os.Getenv("REQUIRE_OCR") == "1" {
			t.Fatalf("REQUIRE_OCR=1 but %v", err)
		}
		t.Skipf("runtime OCR not tested: %v (Debian: apt-get install tesseract-ocr)", err)
	}
	page := mustScan(t)
	// 200 dpi: every third pixel of two in each direction, averaged.
	small := image.NewGray(image.Rect(0, 0, 1706, 2200))
	for y := range 2200 {
		for x := range 1706 {
			sx, sy := x*3/2, y*3/2
			small.Pix[y*small.Stride+x] = uint8((int(page.GrayAt(sx, sy).Y) + int(page.GrayAt(sx+1, sy).Y) + int(page.GrayAt(sx, sy+1).Y) + int(page.GrayAt(sx+1, sy+1).Y)) / 4)
		}
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, page, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"jpeg 300 dpi", imagePDF(2560, 3300, "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode", jpg.Bytes())},
		{"flate grey 200 dpi", imagePDF(1706, 2200, "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", deflate(small.Pix))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := NewExtractor(tess, "", DefaultLimits).Extract(context.Background(), bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			// The front page's abstract begins so.
			if want := "The invention provides a system and method for providing ttx-based categorization services"; !strings.HasPrefix(s.Abstract, want) {
				t.Errorf("abstract = %q, want it to begin %q", s.Abstract, want)
			}
			t.Logf("%s: %d bytes, abstract of %d words", tt.name, len(tt.data), len(strings.Fields(s.Abstract)))
		})
	}
}

// BenchmarkDecodeScan decodes the scan's first page, a 300 dpi Group 4 fax
// image: the part of OCR at extraction time done in Go.
func BenchmarkDecodeScan(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "US11762912.pdf"))
	if err != nil {
		b.Fatal(err)
	}
	rd, err := lpdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	pages, err := pageTree(rd.Trailer().Key("Root").Key("Pages"), DefaultLimits.MaxPages)
	if err != nil {
		b.Fatal(err)
	}
	pi, err := findPageImage(context.Background(), pages[0])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeImage(bytes.NewReader(data), pi.v); err != nil {
			b.Fatal(err)
		}
	}
}
