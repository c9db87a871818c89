package reqbody

import (
	"fmt"
	"hash/maphash"
	"net/http"
	"strings"
	"testing"
)

// stream builds, from the fuzzer's bytes, a run of requests framed in the
// ways net/http accepts, and the notes they must leave: bodies hold
// anything, fake header sections and framing lines included.
func stream(seed maphash.Seed, data []byte) (string, []note) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	const alphabet = "ab\r\n:0; Content-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n"
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[int(next())%len(alphabet)])
		}
		return b.String()
	}
	var out strings.Builder
	var want []note
	for i := 0; len(data) > 0 && i < 20; i++ {
		proto := "HTTP/1.1"
		if next()%5 == 0 {
			proto = "HTTP/1.0"
		}
		line := fmt.Sprintf("%s /r%d?q=%d %s", []string{"GET", "POST", "PUT", "OPTIONS"}[next()%4], i, next(), proto)
		eol := "\r\n"
		if next()%4 == 0 {
			eol = "\n"
		}
		out.WriteString(line + eol + "Host: x" + eol)
		body := text(int(next() % 40))
		cl, te := false, false
		switch next() % 5 {
		case 0: // no body
			body = ""
		case 1:
			cl = true
		case 2:
			te = true
		case 3:
			cl, te = true, true
		case 4:
			cl = true
			fmt.Fprintf(&out, "content-length:  %d %s", len(body), eol) // a repeat, other case and spacing
		}
		if cl {
			fmt.Fprintf(&out, "Content-Length: %d%s", len(body), eol)
		}
		if te {
			out.WriteString("Transfer-Encoding: chunked" + eol)
		}
		out.WriteString(eol)
		want = append(want, note{line: maphash.String(seed, line), both: cl && te})
		switch {
		case te && proto == "HTTP/1.1":
			for rest := body; ; {
				n := min(len(rest), int(next()%9))
				ext := ""
				if next()%3 == 0 {
					ext = ";e=" + text(3)
					ext = strings.NewReplacer("\r", "", "\n", "").Replace(ext)
				}
				fmt.Fprintf(&out, "%x%s\r\n%s", n, ext, rest[:n])
				if n == 0 {
					break
				}
				out.WriteString("\r\n")
				rest = rest[n:]
			}
			if next()%2 == 0 {
				out.WriteString("X-Trailer: t" + eol)
			}
			out.WriteString(eol)
		case cl:
			out.WriteString(body)
		}
	}
	return out.String(), want
}

// FuzzFramer feeds the framer requests framed every way net/http accepts,
// cut into reads at the fuzzer's places, and checks it notes each request,
// in order, with the right framing headers: the notes never fall out of
// step with the requests net/http reads.
func FuzzFramer(f *testing.F) {
	f.Add([]byte{1, 1, 1, 1, 1, 30, 2, 3, 4, 5, 6, 7, 8, 9, 2, 2, 2, 2, 3, 3, 3})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := notes{seed: maphash.MakeSeed()}
		raw, want := stream(n.seed, data)
		var fr framer
		var got []note
		rest := raw
		for i := 0; len(rest) > 0; i++ {
			k := 1 + i%13
			if len(data) > 0 {
				k = 1 + (int(data[i%len(data)])*7+i)%97
			}
			k = min(k, len(rest))
			fr.feed([]byte(rest[:k]), &n)
			rest = rest[k:]
			got = append(got, n.pending...) // drained as a handler would take them
			n.pending = n.pending[:0]
		}
		if fr.lost {
			t.Fatalf("framer lost its place in a stream net/http accepts:\n%q", raw)
		}
		if len(got) != len(want) {
			t.Fatalf("%d notes, want %d, for\n%q", len(got), len(want), raw)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("note %d = %+v, want %+v, for\n%q", i, got[i], want[i], raw)
			}
		}
	})
}

// TestNotesTake checks the matching of notes to requests: the oldest note
// with the request's line is taken, older ones (requests net/http answered
// itself) are dropped, and a request without a note is not refused.
func TestNotesTake(t *testing.T) {
	n := notes{seed: maphash.MakeSeed()}
	for _, x := range []struct {
		line string
		both bool
	}{{"OPTIONS * HTTP/1.1", false}, {"POST /a HTTP/1.1", true}, {"GET /b HTTP/1.1", false}} {
		n.add(note{line: maphash.String(n.seed, x.line), both: x.both})
	}
	req := func(method, uri string) *http.Request {
		return &http.Request{Method: method, RequestURI: uri, Proto: "HTTP/1.1"}
	}
	if !n.take(req("POST", "/a")) {
		t.Error("POST /a: not refused, want its note's both")
	}
	if len(n.pending) != 1 {
		t.Errorf("%d notes left, want 1 (OPTIONS * dropped, POST /a taken)", len(n.pending))
	}
	if n.take(req("GET", "/unknown")) || len(n.pending) != 1 {
		t.Error("a request without a note: refused, or notes dropped")
	}
	for i := range maxNotes + 5 {
		n.add(note{line: uint64(i)})
	}
	if len(n.pending) != maxNotes {
		t.Errorf("%d notes kept, want at most %d", len(n.pending), maxNotes)
	}
}

// BenchmarkFeed is the framer's cost for one request as the gateway sends a
// cache hit's decode: its header section read in one piece, then the
// handler's lookup of its note.
func BenchmarkFeed(b *testing.B) {
	raw := []byte("GET /v1/decode?vin=1HGCM82633A004352 HTTP/1.1\r\nHost: vinsvc:8080\r\nUser-Agent: gateway/1.0\r\n" +
		"X-Gateway-Proxy-Secret: 0123456789abcdef0123456789abcdef\r\nX-Gateway-Subscription: PRO\r\nX-Gateway-User: alice\r\n" +
		"X-Request-Id: 6f1c2a0e-5b7d-4a39-9c1e-2f4b8d7e6a10\r\nTraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n" +
		"Accept: application/json\r\nAccept-Encoding: gzip\r\n\r\n")
	req := &http.Request{Method: "GET", RequestURI: "/v1/decode?vin=1HGCM82633A004352", Proto: "HTTP/1.1"}
	var f framer
	n := notes{seed: maphash.MakeSeed()}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		f.feed(raw, &n)
		if n.take(req) {
			b.Fatal("refused")
		}
	}
}
