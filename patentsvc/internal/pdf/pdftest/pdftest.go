// Package pdftest builds PDF documents in tests: plain ones, and the
// hostile ones that try to make a reader spend without bound (decisions.md,
// "patentsvc: work every replica shares, bounded and fair"): a content
// stream shared by thousands of pages, a stream that inflates a
// thousand-fold, a page tree that contains itself, ten thousand pages, an
// object stream decompressed again for every object resolved from it, a
// scan of 20,000 x 20,000 pixels.
//
// Every document is valid enough for a reader to open and start on; each
// is built in memory, small on the wire, and costly only to read.
package pdftest

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"strings"
)

// Doc builds a PDF of objects (numbered from 1, the first the catalog)
// with a classic cross-reference table.
func Doc(objects ...string) []byte { return DocHeader("%PDF-1.7\n", objects...) }

// DocHeader is Doc with the given header line (the tests of odd headers).
func DocHeader(header string, objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// Stream is a stream object holding content as it is.
func Stream(content string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content)
}

// Flate is a stream object holding content compressed (FlateDecode).
func Flate(content []byte) string {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(content)
	w.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes())
}

// FlateRepeat is Flate(content) for content made of unit repeated to n
// bytes (the last copy cut short), built without compressing all of it:
// one chunk of about 1 MiB of whole units is compressed once and its
// deflate blocks repeated (each chunk's back-references stay inside it),
// a final block holds the rest, and the zlib checksum of the whole is
// combined from the pieces'. A 400 MiB bomb takes milliseconds instead of
// half a minute under the race detector, and inflates to the same bytes.
func FlateRepeat(unit string, n int) string {
	k := max(1, (1<<20)/len(unit))
	chunk := []byte(strings.Repeat(unit, k))
	copies, rest := n/len(chunk), chunk[:n%len(chunk)]

	var block bytes.Buffer
	w, _ := flate.NewWriter(&block, flate.BestCompression)
	w.Write(chunk)
	w.Flush() // byte-aligned, not final: the next copy follows as it is
	var last bytes.Buffer
	w.Reset(&last)
	w.Write(rest)
	w.Close() // the final block

	var z bytes.Buffer
	z.Write([]byte{0x78, 0xda}) // zlib header: deflate, 32 KiB window, best compression
	sum := adler32.Checksum(nil)
	chunkSum := adler32.Checksum(chunk)
	for range copies {
		z.Write(block.Bytes())
		sum = adler32Combine(sum, chunkSum, int64(len(chunk)))
	}
	z.Write(last.Bytes())
	sum = adler32Combine(sum, adler32.Checksum(rest), int64(len(rest)))
	z.Write(binary.BigEndian.AppendUint32(nil, sum))
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes())
}

// adler32Combine is the Adler-32 checksum of A then B from theirs and B's
// length (zlib's adler32_combine).
func adler32Combine(a, b uint32, lenB int64) uint32 {
	const base = 65521
	rem := uint32(lenB % base)
	sum1 := a & 0xffff
	sum2 := uint32((uint64(rem) * uint64(sum1)) % base)
	sum1 += (b & 0xffff) + base - 1
	sum2 += ((a >> 16) & 0xffff) + ((b >> 16) & 0xffff) + base - rem
	if sum1 >= base {
		sum1 -= base
	}
	if sum1 >= base {
		sum1 -= base
	}
	if sum2 >= base<<1 {
		sum2 -= base << 1
	}
	if sum2 >= base {
		sum2 -= base
	}
	return sum1 | sum2<<16
}

// font is the one font resource of the documents built here.
const font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

// textOps are content-stream operators that show text, repeated to fill n
// bytes: every piece of it is work for a reader.
func textOps(n int) []byte { return []byte(strings.Repeat(textLine, n/len(textLine)+1)[:n]) }

// textLine is the unit of textOps.
const textLine = "BT /F1 10 Tf 72 700 Td (Lorem ipsum dolor sit amet consectetur) Tj ET\n"

// page is a page object whose parent is object 2, drawing contents (an
// object number or an array of them) with the font of object 3.
func page(contents string) string {
	return "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents " + contents + " >>"
}

// Pages is a document of n pages, each with a few lines of text (enough
// to count as a text layer): plain but long.
func Pages(n int) []byte {
	line := "(A patent page with lines of text on it, about a thing and how it works.) Tj T*\n"
	objects := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", font,
		Stream("BT /F1 10 Tf 12 TL 72 700 Td\n" + strings.Repeat(line, 5) + "ET")}
	kids := make([]string, n)
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", len(objects)+1)
		objects = append(objects, page("4 0 R"))
	}
	objects[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return Doc(objects...)
}

// SharedContent is a document of pages pages that all draw one content
// stream of n bytes of text operators, deflated: reading every page reads
// the stream again (5,000 pages of a 40 MiB stream: 200 GB to read, from a
// file of about 170 KB). The page tree's Count says 1, as a hostile file
// may.
func SharedContent(pages, n int) []byte {
	objects := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", font, FlateRepeat(textLine, n)}
	kids := make([]string, pages)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", len(objects)+1)
		objects = append(objects, page("4 0 R"))
	}
	objects[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count 1 >>", strings.Join(kids, " "))
	return Doc(objects...)
}

// Bomb is a one-page document whose content stream inflates to n bytes of
// spaces: about a thousand-fold (a 400 KB file for 400 MiB).
func Bomb(n int) []byte {
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>", font,
		page("5 0 R"), FlateRepeat(" ", n))
}

// TextBomb is a one-page document whose content stream inflates to n bytes
// of text operators (a few hundred-fold): costly to decompress and to
// interpret.
func TextBomb(n int) []byte {
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>", font,
		page("5 0 R"), FlateRepeat(textLine, n))
}

// SelfTree is a document whose page tree lists itself among its kids, next
// to a real page, as deep as a reader follows it.
func SelfTree() []byte {
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R 2 0 R] /Count 2 >>", font,
		page("5 0 R"), Stream("BT /F1 10 Tf 72 700 Td (A page.) Tj ET"))
}

// HugeImage is a one-page scan without a text layer whose image declares
// w x h pixels of 8-bit grey (its data a small deflated stream): read by
// OCR, it would take w*h bytes to decode.
func HugeImage(w, h int) []byte {
	img := Flate(bytes.Repeat([]byte{0xff}, 1<<16))
	img = strings.Replace(img, "<< ", fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 ", w, h), 1)
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>",
		img, Stream("q 612 0 0 792 0 0 cm /Im0 Do Q"))
}

// ObjectStreams is a document of pages pages whose page objects are kept
// in one object stream, after padding bytes of filler: the reader
// decompresses the stream from its start again for each page it resolves
// (500 pages after 1 MiB of filler: 500 MiB from a file of a few KB). It
// has a cross-reference stream, as object streams require.
func ObjectStreams(pages, padding int) []byte {
	// Objects: 1 catalog, 2 page tree, 3 font, 4 content, 5 the object
	// stream, 6 the cross-reference stream, then the pages (7...) in 5,
	// after the filler (its own object, the first in 5).
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", 8+i))
	}
	filler := 7
	inStream := []string{"(" + strings.Repeat(" ", padding) + ")"}
	for range pages {
		inStream = append(inStream, page("4 0 R"))
	}
	var header, body strings.Builder
	for i, o := range inStream {
		fmt.Fprintf(&header, "%d %d ", filler+i, body.Len())
		body.WriteString(o)
		body.WriteByte('\n')
	}
	objStm := Flate([]byte(header.String() + body.String()))
	objStm = strings.Replace(objStm, "<< ", fmt.Sprintf("<< /Type /ObjStm /N %d /First %d ", len(inStream), header.Len()), 1)
	normal := []string{"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages), font,
		Stream("BT /F1 10 Tf 72 700 Td (A page.) Tj ET"), objStm}
	return withObjectStream(normal, 5, len(inStream))
}

// withObjectStream writes the objects normal (numbered from 1) with a
// cross-reference stream (the next number, W [1 8 2]), whose entries put
// the inStream objects after it in the object stream objStm, in order.
func withObjectStream(normal []string, objStm, inStream int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offsets := make([]int, len(normal))
	for i, o := range normal {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xrefAt := b.Len()
	self := len(normal) + 1
	var entries bytes.Buffer
	entry := func(typ byte, field2 uint64, field3 uint16) {
		entries.WriteByte(typ)
		for s := 56; s >= 0; s -= 8 {
			entries.WriteByte(byte(field2 >> s))
		}
		entries.WriteByte(byte(field3 >> 8))
		entries.WriteByte(byte(field3))
	}
	entry(0, 0, 65535)
	for _, off := range offsets {
		entry(1, uint64(off), 0)
	}
	entry(1, uint64(xrefAt), 0) // the cross-reference stream itself
	for i := range inStream {
		entry(2, uint64(objStm), uint16(i))
	}
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 8 2] /Root 1 0 R /Length %d >>\nstream\n", self, self+1+inStream, entries.Len())
	b.Write(entries.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefAt)
	return b.Bytes()
}

// ObjectStreamCount is a one-page document whose page is kept in an
// object stream that is empty but declares n objects (/N): a reader that
// looks for the page among n entries without watching the stream's end
// loops n times.
func ObjectStreamCount(n int64) []byte {
	return withObjectStream([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [6 0 R] /Count 1 >>", font,
		fmt.Sprintf("<< /Type /ObjStm /N %d /First 1 /Length 0 >>\nstream\n\nendstream", n)}, 4, 1)
}

// ObjectStreamLoop is ObjectStreamCount with an object stream of one
// entry that extends itself (/Extends): a reader that follows the chain
// to find the page never ends.
func ObjectStreamLoop() []byte {
	return withObjectStream([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [6 0 R] /Count 1 >>", font,
		"<< /Type /ObjStm /N 1 /First 1 /Extends 4 0 R /Length 0 >>\nstream\n\nendstream"}, 4, 1)
}

// CMapCount is a one-page document of text whose font's character map
// (ToUnicode) announces n mappings of each kind and gives one range (the
// printable ASCII, as itself): a reader that trusts the counts makes n
// entries from nothing, one that does not reads the page.
func CMapCount(n int64) []byte {
	cmap := fmt.Sprintf("/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00> <ff> endcodespacerange\n"+
		"%d beginbfchar endbfchar\n%d beginbfrange <20> <7e> <0020> endbfrange\nendcmap CMapName currentdict /CMap defineresource pop end end", n, n)
	return Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
		page("5 0 R"), Stream(string(textOps(4000))), Stream(cmap))
}

// PageDAG is a document whose page tree is depth levels of nodes, each
// listing the next one twice, above a node that is no page: 2^depth paths
// to walk and not a page among them.
func PageDAG(depth int) []byte {
	objects := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	for i := range depth {
		objects = append(objects, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count 1 >>", i+3, i+3))
	}
	return Doc(append(objects, "<< /Type /Pages >>")...)
}

// XrefSize is a document whose cross-reference stream declares size
// objects: a reader that allocates its table from the declaration takes
// 32 bytes an object (2,000,000,000: 64 GB).
func XrefSize(size int64) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	one := b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	xrefAt := b.Len()
	entries := []byte{0, 0, 0, 0, 0, 0, 1, 0, 0, byte(one >> 8), byte(one), 0} // W [1 4 1]: objects 0 and 1
	fmt.Fprintf(&b, "2 0 obj\n<< /Type /XRef /Size %d /W [1 4 1] /Root 1 0 R /Length %d >>\nstream\n", size, len(entries))
	b.Write(entries)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefAt)
	return b.Bytes()
}
