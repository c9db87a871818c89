package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// The Go fonts draw the hyphen-minus (U+002D) as a minus sign, as wide as
// "+" and wider than "n" (1196 units of 2048 in Go Regular), the glyph a
// programmer wants in "x-1"; in prose it reads as a dash ("state–of–the–
// art", "gpt–4o–mini"). Their soft hyphen (U+00AD, 682 units) is a text
// hyphen. gopdf draws a character with the glyph the font's cmap gives it
// and maps that glyph back to the character for copying and search
// (ToUnicode), so the report's proportional Go fonts are given a cmap in
// which U+002D is the soft hyphen's glyph: "-" is drawn as a hyphen and
// still copied as "-". Go Mono keeps its glyph: code shows a minus.

// withTextHyphen returns a copy of ttf, a TrueType font, whose cmap maps
// U+002D to the glyph of U+00AD. The font's format 4 (Unicode BMP)
// subtable is rewritten, and format 0 and 6 subtables (Macintosh, where
// 0x2D is the hyphen too) are patched; the other tables are copied as
// they are, with the table directory's checksums and the head table's
// checksum adjustment recomputed.
func withTextHyphen(ttf []byte) ([]byte, error) {
	tables, err := readTables(ttf)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(tables, func(t sfntTable) bool { return t.tag == "cmap" })
	if i < 0 {
		return nil, errors.New("font has no cmap table")
	}
	cmap, err := hyphenCmap(tables[i].data)
	if err != nil {
		return nil, fmt.Errorf("cmap: %w", err)
	}
	tables[i].data = cmap
	return writeTables(binary.BigEndian.Uint32(ttf), tables), nil
}

// sfntTable is one table of a font file.
type sfntTable struct {
	tag  string
	data []byte
}

// readTables reads the table directory of a font file (OpenType spec,
// "Table directory"): the tables in directory order, their data sliced
// from ttf.
func readTables(ttf []byte) ([]sfntTable, error) {
	if len(ttf) < 12 {
		return nil, errors.New("font file too short")
	}
	n := int(binary.BigEndian.Uint16(ttf[4:]))
	if len(ttf) < 12+16*n {
		return nil, errors.New("font table directory cut short")
	}
	tables := make([]sfntTable, n)
	for i := range tables {
		rec := ttf[12+16*i:]
		off, length := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
		if uint64(off)+uint64(length) > uint64(len(ttf)) {
			return nil, fmt.Errorf("font table %q runs past the end of the file", rec[:4])
		}
		tables[i] = sfntTable{tag: string(rec[:4]), data: ttf[off : off+length]}
	}
	return tables, nil
}

// writeTables writes a font file of tables, in the order given (a font's
// directory is sorted by tag; readTables keeps that order), each padded
// to four bytes, with their checksums and head's checkSumAdjustment.
func writeTables(version uint32, tables []sfntTable) []byte {
	n := len(tables)
	// searchRange, entrySelector, rangeShift: the largest power of two
	// not above n, its log2, the rest.
	sel := 0
	for 1<<(sel+1) <= n {
		sel++
	}
	size := 12 + 16*n
	for _, t := range tables {
		size += (len(t.data) + 3) &^ 3
	}
	out := make([]byte, size)
	binary.BigEndian.PutUint32(out, version)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(16<<sel))
	binary.BigEndian.PutUint16(out[8:], uint16(sel))
	binary.BigEndian.PutUint16(out[10:], uint16(16*n-16<<sel))
	off, head := 12+16*n, -1
	for i, t := range tables {
		data := out[off : off+len(t.data)]
		copy(data, t.data)
		if t.tag == "head" && len(data) >= 12 {
			binary.BigEndian.PutUint32(data[8:], 0) // checkSumAdjustment, computed below
			head = off
		}
		rec := out[12+16*i:]
		copy(rec, t.tag)
		binary.BigEndian.PutUint32(rec[4:], tableChecksum(out[off:off+(len(t.data)+3)&^3]))
		binary.BigEndian.PutUint32(rec[8:], uint32(off))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(t.data)))
		off += (len(t.data) + 3) &^ 3
	}
	if head >= 0 {
		binary.BigEndian.PutUint32(out[head+8:], 0xB1B0AFBA-tableChecksum(out))
	}
	return out
}

// tableChecksum is the sum of data as big-endian uint32s; data's length
// is a multiple of four.
func tableChecksum(data []byte) uint32 {
	var sum uint32
	for i := 0; i+4 <= len(data); i += 4 {
		sum += binary.BigEndian.Uint32(data[i:])
	}
	return sum
}

// hyphenCmap returns cmap, a cmap table, with U+002D mapped to the glyph
// of U+00AD in its subtables of format 4 (rewritten), 0 and 6 (patched in
// place); subtables of other formats are copied.
func hyphenCmap(cmap []byte) ([]byte, error) {
	if len(cmap) < 4 {
		return nil, errors.New("table too short")
	}
	n := int(binary.BigEndian.Uint16(cmap[2:]))
	if len(cmap) < 4+8*n {
		return nil, errors.New("encoding records cut short")
	}
	// Encoding records may share a subtable: each distinct one is
	// written once.
	var (
		offsets []uint32
		subs    = map[uint32][]byte{}
		hyphen  = -1
	)
	for i := range n {
		off := binary.BigEndian.Uint32(cmap[4+8*i+4:])
		if _, ok := subs[off]; ok {
			continue
		}
		sub, err := subtable(cmap, off)
		if err != nil {
			return nil, err
		}
		if binary.BigEndian.Uint16(sub) == 4 {
			if sub, hyphen, err = hyphenFormat4(sub); err != nil {
				return nil, err
			}
		}
		subs[off] = sub
		offsets = append(offsets, off)
	}
	if hyphen < 0 {
		return nil, errors.New("no format 4 subtable")
	}
	for _, off := range offsets {
		subs[off] = hyphenMacintosh(subs[off], hyphen)
	}
	return joinCmap(cmap[:4+8*n], offsets, subs), nil
}

// hyphenFormat4 rewrites sub, a format 4 subtable, with U+002D mapped to
// the glyph of U+00AD, and returns that glyph too.
func hyphenFormat4(sub []byte) ([]byte, int, error) {
	m, err := decodeFormat4(sub)
	if err != nil {
		return nil, 0, err
	}
	g, ok := m[0x00AD]
	if !ok {
		return nil, 0, errors.New("no glyph for U+00AD")
	}
	m[0x002D] = g
	if sub, err = encodeFormat4(m); err != nil {
		return nil, 0, err
	}
	return sub, int(g), nil
}

// hyphenMacintosh returns a copy of sub, a cmap subtable, in which 0x2D
// maps to glyph hyphen when sub is one of the Macintosh formats, 0 and 6:
// byte-coded, 0x2D the hyphen. Other formats, and a table too short to
// hold 0x2D, are copied as they are.
func hyphenMacintosh(sub []byte, hyphen int) []byte {
	sub = slices.Clone(sub)
	switch binary.BigEndian.Uint16(sub) {
	case 0:
		if len(sub) >= 6+256 && hyphen < 256 {
			sub[6+0x2D] = byte(hyphen)
		}
	case 6:
		first, count := int(binary.BigEndian.Uint16(sub[6:])), int(binary.BigEndian.Uint16(sub[8:]))
		if first <= 0x2D && 0x2D < first+count && len(sub) >= 10+2*count {
			binary.BigEndian.PutUint16(sub[10+2*(0x2D-first):], uint16(hyphen))
		}
	}
	return sub
}

// joinCmap writes a cmap table: header, the table's version, record count
// and encoding records as they were read, then the subtables (subs, by
// their old offset) one after another in the order of offsets, each
// record pointed at its subtable's new offset.
func joinCmap(header []byte, offsets []uint32, subs map[uint32][]byte) []byte {
	out := slices.Clone(header)
	at := map[uint32]uint32{}
	for _, off := range offsets {
		at[off] = uint32(len(out))
		out = append(out, subs[off]...)
		for len(out)%2 != 0 {
			out = append(out, 0)
		}
	}
	for i := range (len(header) - 4) / 8 {
		rec := out[4+8*i:]
		binary.BigEndian.PutUint32(rec[4:], at[binary.BigEndian.Uint32(rec[4:])])
	}
	return out
}

// subtable is the cmap subtable at off, as long as its header says.
func subtable(cmap []byte, off uint32) ([]byte, error) {
	if uint64(off)+8 > uint64(len(cmap)) {
		return nil, fmt.Errorf("subtable at %d past the end", off)
	}
	s := cmap[off:]
	var length uint32
	switch f := binary.BigEndian.Uint16(s); f {
	case 0, 2, 4, 6:
		length = uint32(binary.BigEndian.Uint16(s[2:]))
	case 8, 10, 12, 13:
		length = binary.BigEndian.Uint32(s[4:])
	case 14:
		length = binary.BigEndian.Uint32(s[2:])
	default:
		return nil, fmt.Errorf("subtable format %d", f)
	}
	if length < 4 || uint64(length) > uint64(len(s)) {
		return nil, fmt.Errorf("subtable at %d: length %d", off, length)
	}
	return s[:length], nil
}

// decodeFormat4 reads a format 4 subtable (segment mapping to delta
// values) into a character to glyph map; characters mapped to glyph 0
// are left out.
func decodeFormat4(s []byte) (map[uint16]uint16, error) {
	if len(s) < 14 {
		return nil, errors.New("format 4 subtable too short")
	}
	segs := int(binary.BigEndian.Uint16(s[6:])) / 2
	if len(s) < 16+8*segs {
		return nil, errors.New("format 4 segments cut short")
	}
	u16 := func(i int) uint16 { return binary.BigEndian.Uint16(s[i:]) }
	endAt, startAt, deltaAt, rangeAt := 14, 16+2*segs, 16+4*segs, 16+6*segs
	m := map[uint16]uint16{}
	for i := range segs {
		start, end := u16(startAt+2*i), u16(endAt+2*i)
		delta, ro := u16(deltaAt+2*i), u16(rangeAt+2*i)
		for c := uint32(start); c <= uint32(end) && start <= end; c++ {
			if c == 0xFFFF {
				break
			}
			var g uint16
			if ro == 0 {
				g = uint16(c) + delta
			} else {
				// idRangeOffset counts bytes from where it is stored.
				at := rangeAt + 2*i + int(ro) + 2*int(c-uint32(start))
				if at+2 > len(s) {
					return nil, errors.New("format 4 glyph index past the end")
				}
				if g = u16(at); g != 0 {
					g += delta
				}
			}
			if g != 0 {
				m[uint16(c)] = g
			}
		}
	}
	return m, nil
}

// encodeFormat4 writes m as a format 4 subtable: a segment per run of
// consecutive characters whose glyphs are consecutive too, each mapped by
// its delta, and the closing 0xFFFF segment. It fails when that is more
// than a subtable's 64 KB.
func encodeFormat4(m map[uint16]uint16) ([]byte, error) {
	chars := make([]uint16, 0, len(m))
	for c := range m {
		chars = append(chars, c)
	}
	slices.Sort(chars)
	type segment struct{ start, end, delta uint16 }
	var segs []segment
	for _, c := range chars {
		d := m[c] - c
		if n := len(segs); n > 0 && segs[n-1].end == c-1 && segs[n-1].delta == d {
			segs[n-1].end = c
			continue
		}
		segs = append(segs, segment{c, c, d})
	}
	segs = append(segs, segment{0xFFFF, 0xFFFF, 1})
	n := len(segs)
	if 16+8*n > 0xFFFF {
		return nil, fmt.Errorf("format 4 subtable of %d segments is too long", n)
	}
	sel := 0
	for 1<<(sel+1) <= n {
		sel++
	}
	out := make([]byte, 16+8*n)
	put := func(i int, v uint16) { binary.BigEndian.PutUint16(out[i:], v) }
	put(0, 4)
	put(2, uint16(len(out)))
	put(4, 0) // language
	put(6, uint16(2*n))
	put(8, uint16(2<<sel))
	put(10, uint16(sel))
	put(12, uint16(2*n-2<<sel))
	for i, sg := range segs {
		put(14+2*i, sg.end)
		put(16+2*n+2*i, sg.start)
		put(16+4*n+2*i, sg.delta)
		// idRangeOffset stays 0.
	}
	return out, nil
}
