package pdftest

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestMQ codes the test sequence of T.88 Annex H.2 (256 bits in one
// context) and gets the coded bytes the standard lists, marker included.
func TestMQ(t *testing.T) {
	t.Parallel()
	in := []byte{0x00, 0x02, 0x00, 0x51, 0x00, 0x00, 0x00, 0xc0, 0x03, 0x52, 0x87, 0x2a, 0xaa, 0xaa, 0xaa, 0xaa,
		0x82, 0xc0, 0x20, 0x00, 0xfc, 0xd7, 0x9e, 0xf6, 0xbf, 0x7f, 0xed, 0x90, 0x4f, 0x46, 0xa3, 0xbf}
	want := []byte{0x84, 0xc7, 0x3b, 0xfc, 0xe1, 0xa1, 0x43, 0x04, 0x02, 0x20, 0x00, 0x00, 0x41, 0x0d, 0xbb, 0x86,
		0xf4, 0x31, 0x7f, 0xff, 0x88, 0xff, 0x37, 0x47, 0x1a, 0xdb, 0x6a, 0xdf, 0xff, 0xac}
	e := newMQ(1)
	for _, b := range in {
		for i := 7; i >= 0; i-- {
			e.encode(0, b>>i&1)
		}
	}
	if got := e.flush(); !bytes.Equal(got, want) {
		t.Errorf("coded % x\nwant    % x", got, want)
	}
}

// TestJBIG2 decodes JBIG2's streams with jbig2dec, as the embedded
// streams of a PDF, and gets every pixel back: a hand-made pattern of odd
// width with greys either side of the threshold, white and black pages, a
// region that does not start at 0,0, random noise, and a page of 2550 x
// 3300 pixels (Letter at 300 dpi) with text-like marks.
func TestJBIG2(t *testing.T) {
	t.Parallel()
	pattern := []string{
		"#...................................#",
		".#+.......-----.........####.......#.",
		"..#+......-...-........#....#.....#..",
		"...#+.....-----.......#......#...#...",
		"....#+................#......#..#....",
		".....#+...#+#+#+#.....#......#.#.....",
		"....#+................#......#..#....",
		"...#+.....+-+-+-+......#....#....#...",
		"..#+...................+####+.....#..",
		".#+...............................##.",
		"#################################.###",
	}
	grey := map[rune]uint8{'#': 0, '+': 127, '-': 128, '.': 255}
	hand := image.NewGray(image.Rect(0, 0, len(pattern[0]), len(pattern)))
	for y, row := range pattern {
		for x, c := range row {
			hand.Pix[y*hand.Stride+x] = grey[c]
		}
	}
	white, black := image.NewGray(image.Rect(0, 0, 101, 53)), image.NewGray(image.Rect(0, 0, 101, 53))
	for i := range white.Pix {
		white.Pix[i] = 255
	}
	noise := image.NewGray(image.Rect(0, 0, 500, 300))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(r.IntN(256))
	}
	for _, c := range []struct {
		name string
		img  *image.Gray
	}{
		{"37x11 pattern", hand},
		{"white", white},
		{"black", black},
		{"sub-image", textPage(300, 200, 3).SubImage(image.Rect(17, 9, 250, 180)).(*image.Gray)},
		{"500x300 noise", noise},
		{"2550x3300 page", textPage(2550, 3300, 4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := tool(t, "jbig2dec", "jbig2dec")
			dir := t.TempDir()
			in, out := filepath.Join(dir, "page.jb2"), filepath.Join(dir, "page.pbm")
			if err := os.WriteFile(in, JBIG2(c.img), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "--embedded", "--format", "pbm", "--output", out, in)
			if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, msg)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			w, h, dark := readPNM(t, data)
			compare(t, c.img, w, h, dark, false, 0)
		})
	}
}

// TestJBIG2Poppler renders with poppler, at 72 dpi, a one-page document
// of a JBIG2 image the size of the page, and finds the pixels dark where
// the image is black without a /Decode array, and where it is white with
// /Decode [1 0]; poppler says nothing on its standard error, so the
// stream is as the filter wants it. The pixels do not quite line up one
// to one: poppler draws the image about a pixel wider than the page (its
// left edge in place, its right edge a pixel right, the columns between
// shifted by 0 or 1, edges a little grey), so the image is of squares of
// 12 pixels and only the pixels 2 or more from an edge count.
func TestJBIG2Poppler(t *testing.T) {
	t.Parallel()
	img := squares(612, 792, 12, 5)
	data := JBIG2(img)
	for _, c := range []struct {
		name, decode string
		inverted     bool
	}{{"no Decode", "", false}, {"Decode [1 0]", " /Decode [1 0]", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := tool(t, "pdftoppm", "poppler-utils")
			dir := t.TempDir()
			in := filepath.Join(dir, "page.pdf")
			pdf := ImagePDF(612, 792, "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode"+c.decode, data)
			if err := os.WriteFile(in, pdf, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "-r", "72", "-gray", "-singlefile", in, filepath.Join(dir, "page"))
			if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, msg)
			}
			out, err := os.ReadFile(filepath.Join(dir, "page.pgm"))
			if err != nil {
				t.Fatal(err)
			}
			w, h, dark := readPNM(t, out)
			if n := compare(t, img, w, h, dark, c.inverted, 2); n < w*h/3 {
				t.Errorf("only %d of %d pixels away from edges", n, w*h)
			}
		})
	}
}

// tool returns the path of the program name, or skips the test visibly
// when it is missing (Debian package pkg). REQUIRE_OCR=1 (set by .ci/run)
// turns the skip into a failure.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("REQUIRE_OCR") == "1" {
			t.Fatalf("REQUIRE_OCR=1 but %v (Debian: apt-get install %s)", err, pkg)
		}
		t.Skipf("not tested without %s: %v (Debian: apt-get install %s)", name, err, pkg)
	}
	return path
}

// readPNM reads a binary PBM (P4, 1 is black) or PGM (P5, 8-bit grey):
// its size and which of its pixels are dark (black, or darker than half).
func readPNM(t *testing.T, data []byte) (w, h int, dark []bool) {
	t.Helper()
	var fields []string
	for len(fields) < 3 || fields[0] == "P5" && len(fields) < 4 {
		data = bytes.TrimLeft(data, " \t\r\n")
		if len(data) > 0 && data[0] == '#' {
			_, data, _ = bytes.Cut(data, []byte("\n"))
			continue
		}
		end := bytes.IndexAny(data, " \t\r\n")
		if end < 0 {
			t.Fatalf("PNM header cut short after %q", fields)
		}
		fields = append(fields, string(data[:end]))
		data = data[end+1:] // a single white space after the last field
	}
	w, _ = strconv.Atoi(fields[1])
	h, _ = strconv.Atoi(fields[2])
	dark = make([]bool, w*h)
	switch {
	case fields[0] == "P4" && len(data) == (w+7)/8*h:
		for y := range h {
			for x := range w {
				dark[y*w+x] = data[y*((w+7)/8)+x/8]>>(7-x%8)&1 == 1
			}
		}
	case fields[0] == "P5" && fields[3] == "255" && len(data) == w*h:
		for i, v := range data {
			dark[i] = v < 128
		}
	default:
		t.Fatalf("not a %d x %d PBM or 8-bit PGM: header %q, %d bytes of pixels", w, h, fields, len(data))
	}
	return w, h, dark
}

// compare fails the test unless dark, w x h pixels, is black where img
// (read as JBIG2 reads it) is, or where it is not when inverted, at every
// pixel whose neighbours up to margin pixels away are all the colour it
// is; it returns the number of such pixels.
func compare(t *testing.T, img *image.Gray, w, h int, dark []bool, inverted bool, margin int) int {
	t.Helper()
	b := img.Bounds()
	if w != b.Dx() || h != b.Dy() {
		t.Fatalf("%d x %d pixels, want %d x %d", w, h, b.Dx(), b.Dy())
	}
	black := make([]bool, w*h)
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range w {
			black[y*w+x] = row[x] < 128
		}
	}
	// uniform: the pixels up to margin away from x, y are its colour.
	uniform := func(x, y int) bool {
		for ny := y - margin; ny <= y+margin; ny++ {
			for nx := x - margin; nx <= x+margin; nx++ {
				if black[ny*w+nx] != black[y*w+x] {
					return false
				}
			}
		}
		return true
	}
	checked, wrong, first := 0, 0, ""
	for y := margin; y < h-margin; y++ {
		for x := margin; x < w-margin; x++ {
			if margin > 0 && !uniform(x, y) {
				continue
			}
			checked++
			if dark[y*w+x] != (black[y*w+x] != inverted) {
				if wrong++; wrong == 1 {
					first = fmt.Sprintf("first at %d,%d", x, y)
				}
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d pixels wrong (%s)", wrong, checked, first)
	}
	return checked
}

// squares is a w x h image of squares of size pixels, black or white at
// random from a fixed seed.
func squares(w, h, size int, seed uint64) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, 0))
	colours := make([]uint8, (w/size+1)*(h/size+1))
	for i := range colours {
		colours[i] = uint8(255 * r.IntN(2))
	}
	for y := range h {
		for x := range w {
			img.Pix[y*img.Stride+x] = colours[y/size*(w/size+1)+x/size]
		}
	}
	return img
}

// textPage is a w x h white page with a frame and lines of text-like
// marks in it: words of glyphs, each a stem, a bar at some height and
// sometimes a dot, placed from a fixed seed.
func textPage(w, h int, seed uint64) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	fill := func(x0, y0, x1, y1 int) {
		r := image.Rect(x0, y0, x1, y1).Intersect(img.Rect)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			clear(img.Pix[y*img.Stride+r.Min.X : y*img.Stride+r.Max.X])
		}
	}
	r := rand.New(rand.NewPCG(seed, 0))
	margin, line := w/12, max(6, h/50)
	glyph, width, pen := line*2/3, max(3, line/2), max(1, line/10)
	fill(margin/2, margin/2, w-margin/2, margin/2+pen)
	fill(margin/2, h-margin/2-pen, w-margin/2, h-margin/2)
	fill(margin/2, margin/2, margin/2+pen, h-margin/2)
	fill(w-margin/2-pen, margin/2, w-margin/2, h-margin/2)
	for y := margin + line; y < h-margin; y += line {
		for x := margin; ; x += width {
			n := 1 + r.IntN(9)
			if x+n*width > w-margin {
				break
			}
			for range n {
				fill(x, y-glyph, x+pen, y)
				bar := y - glyph + r.IntN(glyph)
				fill(x, bar, x+width-pen, bar+pen)
				if r.IntN(4) == 0 {
					fill(x+width/2, y-glyph-2*pen, x+width/2+pen, y-glyph-pen)
				}
				x += width
			}
		}
	}
	return img
}
