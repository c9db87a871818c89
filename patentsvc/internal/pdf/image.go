package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
	"golang.org/x/image/ccitt"
)

// This file finds the scanned image of a page and decodes it, in pure Go,
// for OCR: the library reads no image data (its stream reader knows only
// FlateDecode and ASCII85Decode, and panics on the rest).

// Limits on the images decoded for OCR. A page is decoded into 8-bit
// grey, one byte a pixel, so maxImagePixels bounds that allocation (a
// 600 dpi A4 scan is 35 million pixels); images larger than maxOCRPixels
// (a 300 dpi page is 8.4 to 8.7 million) are scaled down by a whole factor
// before OCR, which bounds tesseract's memory (about 50 MB for a 300 dpi
// page, measured with tesseract 5.3).
const (
	maxImagePixels = 40_000_000
	maxOCRPixels   = 12_000_000
	maxImageBytes  = 64 << 20 // encoded
)

// errNoImage is returned for a page that draws no image.
var errNoImage = errors.New("no image on the page")

// pageImage is an image XObject drawn on a page.
type pageImage struct {
	v   lpdf.Value // the XObject
	ctm mat        // maps the image's unit square onto the page
}

// area is the area the image covers on the page, in square points.
func (p pageImage) area() float64 {
	return math.Abs(p.ctm[0]*p.ctm[3] - p.ctm[1]*p.ctm[2])
}

// findPageImage returns the image that covers the most of the page: the
// scan, on a scanned page. Images inside form XObjects and inline images
// (BI ... EI) are not looked at. It may panic on malformed content; the
// caller recovers.
func findPageImage(ctx context.Context, page lpdf.Value) (pageImage, error) {
	contents := page.Key("Contents")
	xobjects := inherited(page, "Resources").Key("XObject")
	var best pageImage
	ctm := identity
	var stack []mat
	ops := 0
	interpretContents(contents, func(stk *lpdf.Stack, op string) {
		ops++
		if ops%opCheckEvery == 0 && ctx.Err() != nil {
			panic(abortWalk{ctx.Err()})
		}
		args := popArgs(stk)
		switch op {
		case "q":
			if len(stack) < maxSavedStates {
				stack = append(stack, ctm)
			}
		case "Q":
			if n := len(stack); n > 0 {
				ctm, stack = stack[n-1], stack[:n-1]
			}
		case "cm":
			if len(args) == 6 {
				ctm = matrix(args).mul(ctm)
			}
		case "Do":
			if len(args) != 1 {
				return
			}
			x := xobjects.Key(args[0].Name())
			if x.Kind() == lpdf.Stream && x.Key("Subtype").Name() == "Image" {
				if img := (pageImage{v: x, ctm: ctm}); img.area() > best.area() {
					best = img
				}
			}
		}
	})
	if best.v.IsNull() {
		return pageImage{}, errNoImage
	}
	return best, nil
}

// rawStream returns the bytes of stream v as they are in the file, before
// any filter. The library keeps a stream's offset to itself but prints it
// at the end of the value's String ("<<...>>@1234").
func rawStream(r io.ReaderAt, v lpdf.Value) ([]byte, error) {
	s := v.String()
	i := strings.LastIndexByte(s, '@')
	off, err := strconv.ParseInt(s[i+1:], 10, 64)
	if i < 0 || err != nil || off < 0 {
		return nil, errors.New("stream offset unknown")
	}
	n := v.Key("Length").Int64()
	if n <= 0 || n > maxImageBytes {
		return nil, fmt.Errorf("image stream of %d bytes", n)
	}
	// A Length past the end of the file is a lie: refuse it before
	// allocating for it.
	if sized, ok := r.(interface{ Size() int64 }); ok && off+n > sized.Size() {
		return nil, fmt.Errorf("image stream of %d bytes past the end of the file", n)
	}
	buf := make([]byte, n)
	if got, err := r.ReadAt(buf, off); got < len(buf) {
		return nil, fmt.Errorf("image stream truncated (%d of %d bytes): %w", got, n, err)
	}
	return buf, nil
}

// decodeImage decodes image XObject v, whose encoded bytes are read from
// r, into grey. It knows CCITTFaxDecode (Group 3 one-dimensional and
// Group 4, as scanners and Google Patents write), DCTDecode (JPEG) and
// FlateDecode or no filter (1 or 8 bits, grey, RGB or CMYK, PNG
// predictors); JBIG2Decode, JPXDecode, Indexed colour and chains of
// filters are errors. Images over maxImagePixels are refused before any
// decoding.
func decodeImage(r io.ReaderAt, v lpdf.Value) (*image.Gray, error) {
	w, h := int(v.Key("Width").Int64()), int(v.Key("Height").Int64())
	if w <= 0 || h <= 0 || w > maxImagePixels/h {
		return nil, fmt.Errorf("image of %dx%d pixels (at most %d pixels are read)", w, h, maxImagePixels)
	}
	filter, parms := v.Key("Filter"), v.Key("DecodeParms")
	if filter.Kind() == lpdf.Array {
		if filter.Len() != 1 {
			return nil, fmt.Errorf("image filters %v not supported", filter)
		}
		filter, parms = filter.Index(0), parms.Index(0)
	}
	raw, err := rawStream(r, v)
	if err != nil {
		return nil, err
	}
	var g *image.Gray
	switch name := filter.Name(); name {
	case "CCITTFaxDecode":
		g, err = decodeCCITT(raw, parms, w, h)
	case "DCTDecode":
		g, err = decodeJPEG(raw)
	case "FlateDecode", "":
		g, err = decodeSamples(raw, name == "FlateDecode", v, parms, w, h)
	default:
		return nil, fmt.Errorf("image encoding %s not supported", name)
	}
	if err != nil {
		return nil, err
	}
	if d := v.Key("Decode"); d.Len() >= 2 && d.Index(0).Float64() > d.Index(1).Float64() {
		invert(g) // [1 0]: a negative
	}
	return g, nil
}

// decodeCCITT decodes fax-encoded data. A BlackIs1 image has black as 1;
// the default, like the ccitt package's, is black as 0.
func decodeCCITT(raw []byte, parms lpdf.Value, w, h int) (*image.Gray, error) {
	sf := ccitt.Group3
	switch k := parms.Key("K").Int64(); {
	case k < 0:
		sf = ccitt.Group4
	case k > 0:
		return nil, errors.New("two-dimensional Group 3 fax images not supported")
	}
	if c := parms.Key("Columns"); !c.IsNull() && int(c.Int64()) != w {
		return nil, fmt.Errorf("fax image of %d columns in an image %d wide", c.Int64(), w)
	}
	g := image.NewGray(image.Rect(0, 0, w, h))
	opts := &ccitt.Options{Align: parms.Key("EncodedByteAlign").Bool(), Invert: parms.Key("BlackIs1").Bool()}
	if err := ccitt.DecodeIntoGray(g, bytes.NewReader(raw), ccitt.MSB, sf, opts); err != nil {
		return nil, fmt.Errorf("fax image: %w", err)
	}
	return g, nil
}

// decodeJPEG decodes a JPEG into grey, after checking its size.
func decodeJPEG(raw []byte) (*image.Gray, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("jpeg image: %w", err)
	}
	// A colour JPEG decodes into up to four bytes a pixel.
	perPixel := 1
	if cfg.ColorModel != color.GrayModel {
		perPixel = 4
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImagePixels/perPixel/cfg.Height {
		return nil, fmt.Errorf("jpeg image of %dx%d pixels", cfg.Width, cfg.Height)
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("jpeg image: %w", err)
	}
	b := img.Bounds()
	switch m := img.(type) {
	case *image.Gray:
		return m, nil
	case *image.YCbCr:
		// Y is the grey already.
		g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
		for y := range b.Dy() {
			copy(g.Pix[y*g.Stride:y*g.Stride+b.Dx()], m.Y[y*m.YStride:])
		}
		return g, nil
	}
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g.Set(x-b.Min.X, y-b.Min.Y, img.At(x, y))
		}
	}
	return g, nil
}

// decodeSamples decodes raw samples, deflated when flate is set: 1 or 8
// bits per component, 1 (grey), 3 (RGB) or 4 (CMYK) components. An image
// mask is 1 bit deep, 0 painting black.
func decodeSamples(raw []byte, flate bool, v, parms lpdf.Value, w, h int) (*image.Gray, error) {
	bpc, comps := int(v.Key("BitsPerComponent").Int64()), 1
	if v.Key("ImageMask").Bool() {
		bpc = 1
	} else {
		var err error
		if comps, err = components(v.Key("ColorSpace")); err != nil {
			return nil, err
		}
	}
	if bpc != 8 && !(bpc == 1 && comps == 1) {
		return nil, fmt.Errorf("images of %d bits and %d components not supported", bpc, comps)
	}
	stride := (w*comps*bpc + 7) / 8
	if stride > maxImagePixels/h {
		return nil, fmt.Errorf("image of %dx%d pixels and %d components (at most %d bytes of samples are read)", w, h, comps, maxImagePixels)
	}
	pred := int(parms.Key("Predictor").Int64())
	rowLen := stride
	if pred >= 10 {
		rowLen++ // each row starts with its PNG filter type
	}
	var rd io.Reader = bytes.NewReader(raw)
	if flate {
		zr, err := zlib.NewReader(rd)
		if err != nil {
			return nil, fmt.Errorf("image data: %w", err)
		}
		rd = zr
	}
	data := make([]byte, rowLen*h)
	if _, err := io.ReadFull(rd, data); err != nil {
		return nil, fmt.Errorf("image data: %w", err)
	}
	switch {
	case pred >= 10:
		var err error
		if data, err = unpredictPNG(data, stride, (comps*bpc+7)/8, h); err != nil {
			return nil, err
		}
	case pred > 1:
		return nil, fmt.Errorf("image predictor %d not supported", pred)
	}
	g := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		row := data[y*stride : (y+1)*stride]
		out := g.Pix[y*g.Stride : y*g.Stride+w]
		for x := range w {
			switch {
			case bpc == 1:
				out[x] = 255 * (row[x/8] >> (7 - x%8) & 1)
			case comps == 1:
				out[x] = row[x]
			case comps == 3:
				p := row[3*x:]
				out[x] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
			default: // CMYK
				p := row[4*x:]
				ink := (299*int(p[0])+587*int(p[1])+114*int(p[2]))/1000 + int(p[3])
				out[x] = uint8(255 - min(ink, 255))
			}
		}
	}
	return g, nil
}

// components returns the number of colour components of a colour space.
func components(cs lpdf.Value) (int, error) {
	name := cs.Name()
	if cs.Kind() == lpdf.Array && cs.Len() > 0 {
		name = cs.Index(0).Name()
		if name == "ICCBased" {
			if n := cs.Index(1).Key("N").Int64(); n == 1 || n == 3 || n == 4 {
				return int(n), nil
			}
		}
	}
	switch name {
	case "DeviceGray", "CalGray":
		return 1, nil
	case "DeviceRGB", "CalRGB":
		return 3, nil
	case "DeviceCMYK":
		return 4, nil
	}
	return 0, fmt.Errorf("image colour space %s not supported", name)
}

// unpredictPNG undoes the PNG filters of rows rows of stride bytes, each
// led by its filter type, with bpp bytes per pixel.
func unpredictPNG(data []byte, stride, bpp, rows int) ([]byte, error) {
	out := make([]byte, stride*rows)
	prev := make([]byte, stride)
	for y := range rows {
		in := data[y*(stride+1) : (y+1)*(stride+1)]
		cur := out[y*stride : (y+1)*stride]
		copy(cur, in[1:])
		for i := range cur {
			var a, c byte
			if i >= bpp {
				a, c = cur[i-bpp], prev[i-bpp]
			}
			b := prev[i]
			switch in[0] {
			case 0:
			case 1:
				cur[i] += a
			case 2:
				cur[i] += b
			case 3:
				cur[i] += byte((int(a) + int(b)) / 2)
			case 4:
				cur[i] += paeth(a, b, c)
			default:
				return nil, fmt.Errorf("png filter type %d", in[0])
			}
		}
		prev = cur
	}
	return out, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func invert(g *image.Gray) {
	for i := range g.Pix {
		g.Pix[i] = 255 - g.Pix[i]
	}
}

// shrink scales g down by a whole factor, averaging boxes of pixels, until
// it has at most maxOCRPixels. It returns g itself when it is small
// enough, and the factor.
func shrink(g *image.Gray) (*image.Gray, int) {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	f := 1
	for (w/f)*(h/f) > maxOCRPixels {
		f++
	}
	if f == 1 {
		return g, 1
	}
	out := image.NewGray(image.Rect(0, 0, w/f, h/f))
	for y := range h / f {
		for x := range w / f {
			sum := 0
			for dy := range f {
				row := g.Pix[(y*f+dy)*g.Stride+x*f:]
				for dx := range f {
					sum += int(row[dx])
				}
			}
			out.Pix[y*out.Stride+x] = uint8(sum / (f * f))
		}
	}
	return out, f
}
