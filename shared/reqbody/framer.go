package reqbody

import (
	"bytes"
	"hash/maphash"
	"strconv"
)

// The framer's states: where the next byte of the connection belongs.
const (
	inHeader    = iota // a request line or header line
	inBody             // a Content-Length body: left bytes to skip
	inChunkSize        // a chunk-size line
	inChunkData        // a chunk's data: left bytes to skip
	inChunkEnd         // the CRLF after a chunk's data: left bytes to skip
	inTrailer          // the trailer section after the last chunk
)

// The longest line the framer holds while it waits for the line's end:
// net/http refuses longer header sections (the services' MaxHeaderBytes is
// 64 KiB, plus net/http's 4 KiB slack) and chunk lines (4 KiB) itself.
const maxLine = 64<<10 + 4096

// framer follows a connection's bytes as net/http frames them (RFC 9112
// section 6: a request's body is its chunks when Transfer-Encoding is
// chunked on HTTP/1.1, else its Content-Length bytes, else empty) and notes
// each request's header section. It only has to agree with net/http on
// streams net/http accepts: on any other, net/http answers 400 or 501 and
// closes the connection, and the framer stops (lost).
type framer struct {
	state int
	lost  bool
	left  int64  // bytes of body, chunk data or chunk end still to skip
	part  []byte // a line begun in an earlier read

	// The header section being read.
	started bool   // its request line is read
	framing bool   // the last header line was Content-Length or Transfer-Encoding
	refuse  bool   // a framing header was folded onto a second line
	line    uint64 // the request line's hash
	http10  bool   // HTTP/1.0: net/http ignores Transfer-Encoding
	cl, te  int    // how many Content-Length and Transfer-Encoding lines
	length  int64  // the Content-Length value (-1 when two disagree or one is malformed)
	chunked bool   // the one Transfer-Encoding line says chunked
	size    int    // bytes of the section so far
}

// feed follows b, the next bytes of the connection, noting each header
// section's end in n.
func (f *framer) feed(b []byte, n *notes) {
	for len(b) > 0 && !f.lost {
		switch f.state {
		case inBody, inChunkData, inChunkEnd:
			k := int64(len(b))
			if k > f.left {
				k = f.left
			}
			if f.state == inChunkEnd && !f.chunkEnd(b[:k]) {
				f.lose(n)
				return
			}
			b, f.left = b[k:], f.left-k
			if f.left == 0 {
				switch f.state {
				case inBody:
					f.state = inHeader
				case inChunkData:
					f.state, f.left = inChunkEnd, 2
				case inChunkEnd:
					f.state = inChunkSize
				}
			}
		default:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				if len(f.part)+len(b) > maxLine {
					f.lose(n)
					return
				}
				f.part = append(f.part, b...)
				return
			}
			line := b[:i]
			if len(f.part) > 0 {
				if len(f.part)+i > maxLine {
					f.lose(n)
					return
				}
				f.part = append(f.part, line...)
				line = f.part
			}
			b = b[i+1:]
			f.lineDone(bytes.TrimSuffix(line, []byte{'\r'}), i+1, n)
			f.part = f.part[:0]
		}
	}
}

// chunkEnd reports whether b is (a piece of) the CRLF that ends a chunk's
// data, given how many of its 2 bytes are left.
func (f *framer) chunkEnd(b []byte) bool {
	want := "\r\n"[2-f.left:]
	return string(b) == want[:len(b)]
}

// lineDone takes one whole line (its CR removed) of the state's kind; size
// is its length on the wire.
func (f *framer) lineDone(line []byte, size int, n *notes) {
	switch f.state {
	case inHeader:
		f.header(line, size, n)
	case inChunkSize:
		if k := bytes.IndexByte(line, ';'); k >= 0 {
			line = line[:k]
		}
		v, err := strconv.ParseUint(string(bytes.TrimRight(line, " \t")), 16, 63)
		switch {
		case err != nil || len(line) == 0:
			f.lose(n)
		case v == 0:
			f.state = inTrailer
		default:
			f.state, f.left = inChunkData, int64(v)
		}
	case inTrailer:
		if len(line) == 0 {
			f.state = inHeader
		}
	}
}

// header takes one line of a header section, and at its end notes the
// request and moves to its body.
func (f *framer) header(line []byte, size int, n *notes) {
	f.size += size
	if f.size > maxLine {
		f.lose(n)
		return
	}
	if !f.started {
		// net/http skips CR and LF bytes before a request line (after a
		// POST, up to four), and so does the framer, before and within
		// the line.
		line = bytes.TrimLeft(line, "\r\n")
		if len(line) == 0 {
			f.size = 0 // a blank line between requests
			return
		}
		f.started, f.line, f.length = true, maphash.Bytes(n.seed, line), 0
		f.http10 = bytes.HasSuffix(line, []byte(" HTTP/1.0"))
		return
	}
	if len(line) > 0 {
		if line[0] == ' ' || line[0] == '\t' {
			// An obsolete folded line continues the header before it:
			// net/http joins them. A framing header so split is refused
			// (the framer does not try to read it as net/http would).
			f.refuse = f.refuse || f.framing
			return
		}
		f.framing = false
		if c := line[0] | 0x20; c != 'c' && c != 't' {
			return // neither framing header: most lines stop here
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return // net/http refuses the request; the framer follows on regardless
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			f.framing = true
			f.cl++
			// As net/http parses it: digits only, and every line the same.
			u, err := strconv.ParseUint(string(value), 10, 63)
			v := int64(u)
			if err != nil || (f.cl > 1 && v != f.length) {
				v = -1
			}
			if f.length != -1 {
				f.length = v
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			f.framing = true
			f.te++
			f.chunked = f.te == 1 && bytes.EqualFold(value, []byte("chunked"))
		}
		return
	}
	// The section's end: note it, then frame the body as net/http does.
	n.add(note{line: f.line, both: f.cl > 0 && f.te > 0 || f.refuse})
	if f.refuse {
		f.lose(n) // refused and closed: what follows is never read
		return
	}
	switch {
	case f.te > 0 && !f.http10:
		if !f.chunked {
			f.lose(n) // net/http answers 501 and closes
		} else {
			f.state = inChunkSize
		}
	case f.cl > 0:
		if f.length < 0 {
			f.lose(n) // net/http answers 400 and closes
		} else if f.length > 0 {
			f.state, f.left = inBody, f.length
		}
	}
	f.started, f.cl, f.te, f.chunked, f.size, f.framing = false, 0, 0, false, 0, false
}

// lose stops the framer: it no longer knows where requests start, so the
// notes refuse every request they hold no note for (notes.take).
func (f *framer) lose(n *notes) {
	f.lost = true
	n.mu.Lock()
	n.lost = true
	n.mu.Unlock()
}
