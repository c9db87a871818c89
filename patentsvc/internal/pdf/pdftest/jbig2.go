package pdftest

import (
	"encoding/binary"
	"fmt"
	"image"
)

// JBIG2 encodes img as a bi-level image (a pixel darker than 128 is
// black) into the data of a PDF image stream with /Filter /JBIG2Decode:
// the embedded organisation of ITU T.88 (Annex D.3) as ISO 32000-1
// (7.4.7) wants it, without the file header, the end-of-page and the
// end-of-file segments, which the filter forbids. It holds two segments
// of page 1: the page information, and an immediate lossless generic
// region of the whole page, arithmetic-coded with template 0, its default
// adaptive pixels, and typical prediction (TPGDON). Nothing is lossy and
// nothing refers to global segments (no /JBIG2Globals).
//
// JBIG2 codes black as 1, and the filter hands it on as 0, the black of
// /DeviceGray (poppler's JBIG2Stream inverts the bytes it decodes): the
// image needs no /Decode array, and /Decode [1 0] makes the page its
// negative, as TestJBIG2Poppler finds. Give ImagePDF
// "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode".
func JBIG2(img *image.Gray) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	base := img.PixOffset(b.Min.X, b.Min.Y)
	// at is pixel (x, y) of the region, 1 for black; the pixels right of
	// the region and those above it are white, as T.88 has all pixels
	// outside a bitmap.
	at := func(x, y int) uint32 {
		if y < 0 || x >= w || img.Pix[base+y*img.Stride+x] >= 128 {
			return 0
		}
		return 1
	}

	// The generic region decoding procedure (T.88 6.2.5.7) run forwards.
	e := newMQ(1 << 16)
	ltp := uint8(0)
	for y := range h {
		// Typical prediction: a row that repeats the one above (white
		// above the first) is coded as the one bit SLTP, which says whether
		// LTP, that the row is typical, changes from the row before.
		typical := uint8(1)
		for x := range w {
			if at(x, y) != at(x, y-1) {
				typical = 0
				break
			}
		}
		e.encode(0x9b25, typical^ltp) // the context of SLTP for template 0
		if ltp = typical; typical == 1 {
			continue
		}
		// The context of template 0 (T.88 Figure 3) is 16 pixels in three
		// windows that slide right: r2, pixels x-2..x+2 of row y-2 (bits
		// 15..11, the outer ones adaptive pixels A4 (-2,-2) and A3 (2,-2));
		// r1, pixels x-3..x+3 of row y-1 (bits 10..4, the outer ones A2
		// (-3,-1) and A1 (3,-1)); and r0, pixels x-4..x-1 of row y (bits
		// 3..0). This is the bit order of jbig2dec and of the other
		// decoders, which the standard fixes only through the figure.
		r2 := at(0, y-2)<<2 | at(1, y-2)<<1 | at(2, y-2)
		r1 := at(0, y-1)<<3 | at(1, y-1)<<2 | at(2, y-1)<<1 | at(3, y-1)
		r0 := uint32(0)
		for x := range w {
			d := at(x, y)
			e.encode(int(r2<<11|r1<<4|r0), uint8(d))
			r2 = (r2<<1 | at(x+3, y-2)) & 0x1f
			r1 = (r1<<1 | at(x+4, y-1)) & 0x7f
			r0 = (r0<<1 | d) & 0xf
		}
	}

	// Page information (T.88 7.4.8): the size, an unknown resolution, the
	// flags (eventually lossless, white by default, combined by OR), not
	// striped.
	page := binary.BigEndian.AppendUint32(nil, uint32(w))
	page = binary.BigEndian.AppendUint32(page, uint32(h))
	page = append(page, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0)
	// The generic region (7.4.6): its region information (the size, at
	// 0,0, combined by OR), its flags (not MMR, template 0, TPGDON), the
	// adaptive pixels A1..A4 as signed bytes, then the coded data.
	region := binary.BigEndian.AppendUint32(nil, uint32(w))
	region = binary.BigEndian.AppendUint32(region, uint32(h))
	region = append(region, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08)
	for _, at := range []int8{3, -1, -3, -1, 2, -2, -2, -2} {
		region = append(region, byte(at))
	}
	region = append(region, e.flush()...)
	return segment(segment(nil, 0, 48, page), 1, 39, region)
}

// segment appends to out the segment of the given number and type (48
// page information, 39 immediate lossless generic region) with its data:
// a segment header (T.88 7.2) that refers to no other segment and
// associates it with page 1 in one byte.
func segment(out []byte, number uint32, typ byte, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, number)
	out = append(out, typ, 0, 1)
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	return append(out, data...)
}

// ImagePDF is a one-page document (US Letter) whose only content is the
// image data of w x h pixels, with the entries of its dictionary given
// (the colour space, the bits per component, the filter), drawn over the
// whole page.
func ImagePDF(w, h int, entries string, data []byte) []byte {
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>",
		Stream("q 612 0 0 792 0 0 cm /Im0 Do Q"),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d %s /Length %d >>\nstream\n%s\nendstream", w, h, entries, len(data), data))
}

// mqState is a row of T.88 Table E.1: the estimate Qe of the probability
// of the less probable symbol, the states after coding the more (NMPS) and
// the less probable one (NLPS), and whether the latter swaps which symbol
// is the more probable (SWITCH).
type mqState struct {
	qe         uint32
	nmps, nlps uint8
	swap       bool
}

// mqStates is Table E.1.
var mqStates = [...]mqState{
	{0x5601, 1, 1, true}, {0x3401, 2, 6, false}, {0x1801, 3, 9, false}, {0x0ac1, 4, 12, false},
	{0x0521, 5, 29, false}, {0x0221, 38, 33, false}, {0x5601, 7, 6, true}, {0x5401, 8, 14, false},
	{0x4801, 9, 14, false}, {0x3801, 10, 14, false}, {0x3001, 11, 17, false}, {0x2401, 12, 18, false},
	{0x1c01, 13, 20, false}, {0x1601, 29, 21, false}, {0x5601, 15, 14, true}, {0x5401, 16, 14, false},
	{0x5101, 17, 15, false}, {0x4801, 18, 16, false}, {0x3801, 19, 17, false}, {0x3401, 20, 18, false},
	{0x3001, 21, 19, false}, {0x2801, 22, 19, false}, {0x2401, 23, 20, false}, {0x2201, 24, 21, false},
	{0x1c01, 25, 22, false}, {0x1801, 26, 23, false}, {0x1601, 27, 24, false}, {0x1401, 28, 25, false},
	{0x1201, 29, 26, false}, {0x1101, 30, 27, false}, {0x0ac1, 31, 28, false}, {0x09c1, 32, 29, false},
	{0x08a1, 33, 30, false}, {0x0521, 34, 31, false}, {0x0441, 35, 32, false}, {0x02a1, 36, 33, false},
	{0x0221, 37, 34, false}, {0x0141, 38, 35, false}, {0x0111, 39, 36, false}, {0x0085, 40, 37, false},
	{0x0049, 41, 38, false}, {0x0025, 42, 39, false}, {0x0015, 43, 40, false}, {0x0009, 44, 41, false},
	{0x0005, 45, 42, false}, {0x0001, 45, 43, false}, {0x5601, 46, 46, false},
}

// mqEncoder is the arithmetic (MQ) encoder of T.88 Annex E: its registers
// A, C, CT and B, the bytes written before B, and for each context its
// state in Table E.1 and its more probable symbol.
type mqEncoder struct {
	a, c  uint32
	ct    int
	b     byte
	begun bool // B is a byte of the output (BP >= BPST), not the one before it
	out   []byte
	index []uint8
	mps   []uint8
}

// newMQ is INITENC, with n contexts in state 0 whose more probable symbol
// is 0.
func newMQ(n int) *mqEncoder {
	return &mqEncoder{a: 0x8000, ct: 12, index: make([]uint8, n), mps: make([]uint8, n)}
}

// encode codes the bit d in context cx: ENCODE, CODEMPS and CODELPS.
func (e *mqEncoder) encode(cx int, d uint8) {
	s := mqStates[e.index[cx]]
	e.a -= s.qe
	if d == e.mps[cx] {
		if e.a&0x8000 != 0 {
			e.c += s.qe
			return
		}
		if e.a < s.qe {
			e.a = s.qe
		} else {
			e.c += s.qe
		}
		e.index[cx] = s.nmps
	} else {
		if e.a < s.qe {
			e.c += s.qe
		} else {
			e.a = s.qe
		}
		if s.swap {
			e.mps[cx] ^= 1
		}
		e.index[cx] = s.nlps
	}
	// RENORME: double A until it is at least 0x8000 again, C with it.
	for {
		e.a <<= 1
		e.c <<= 1
		if e.ct--; e.ct == 0 {
			e.byteOut()
		}
		if e.a&0x8000 != 0 {
			return
		}
	}
}

// byteOut is BYTEOUT: B goes to the output, after a carry from C into it
// when there is one, and the next byte of C becomes B; a byte after 0xFF
// takes 7 bits only, so that a carry never reaches the 0xFF.
func (e *mqEncoder) byteOut() {
	if e.b != 0xff && e.c >= 0x8000000 {
		e.b++
		e.c &= 0x7ffffff
	}
	if e.begun {
		e.out = append(e.out, e.b)
	}
	e.begun = true
	if e.b == 0xff {
		e.b, e.c, e.ct = byte(e.c>>20), e.c&0xfffff, 7
	} else {
		e.b, e.c, e.ct = byte(e.c>>19), e.c&0x7ffff, 8
	}
}

// flush is FLUSH: it ends the code inside the interval with as many 1
// bits as it can (SETBITS), writes out the rest of C and B, and the marker
// 0xFF 0xAC, and returns the coded bytes.
func (e *mqEncoder) flush() []byte {
	top := e.c + e.a
	e.c |= 0xffff
	if e.c >= top {
		e.c -= 0x8000
	}
	e.c <<= e.ct
	e.byteOut()
	e.c <<= e.ct
	e.byteOut()
	e.out = append(e.out, e.b)
	if e.b != 0xff {
		e.out = append(e.out, 0xff)
	}
	return append(e.out, 0xac)
}
