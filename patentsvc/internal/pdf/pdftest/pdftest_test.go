package pdftest

import (
	"bytes"
	"compress/zlib"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// streamData returns the bytes of the one stream object s.
func streamData(t *testing.T, s string) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)^<< /Length (\d+) /Filter /FlateDecode >>\nstream\n(.*)\nendstream$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("not a deflated stream object: %.80q", s)
	}
	if n, _ := strconv.Atoi(m[1]); n != len(m[2]) {
		t.Fatalf("/Length %d, the data has %d bytes", n, len(m[2]))
	}
	return []byte(m[2])
}

// TestFlateRepeat: FlateRepeat's stream inflates, with zlib's checksum
// verified at its end, to exactly the content Flate compresses, for
// content shorter than a chunk, an exact number of chunks, and chunks
// plus a cut copy of the unit; and it is as small as Flate's.
func TestFlateRepeat(t *testing.T) {
	for _, c := range []struct {
		unit string
		n    int
	}{
		{" ", 0}, {" ", 1000}, {" ", 1 << 20}, {" ", 3<<20 + 17},
		{textLine, 5}, {textLine, len(textLine) * 3}, {textLine, 2<<20 + 1}, {"ab", 4<<20 + 1},
	} {
		want := []byte(strings.Repeat(c.unit, c.n/len(c.unit)+1)[:c.n])
		data := streamData(t, FlateRepeat(c.unit, c.n))
		r, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%q x %d: %v", c.unit[:1], c.n, err)
		}
		got, err := io.ReadAll(r) // zlib checks the Adler-32 at the end
		if err != nil {
			t.Fatalf("%q x %d: %v", c.unit[:1], c.n, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q x %d: inflates to %d bytes, not the content", c.unit[:1], c.n, len(got))
		}
		if plain := len(streamData(t, Flate(want))); len(data) > 2*plain+64 {
			t.Errorf("%q x %d: %d bytes, Flate's %d", c.unit[:1], c.n, len(data), plain)
		}
	}
}
