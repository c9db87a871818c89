// Package reqbodytest sends the hostile request bodies of decisions.md
// ("Both services: hostile input answered, never a 5xx", and the framing
// rule of "Both services: the platform's own HTTP framing, ...") over raw
// sockets to a running server, and checks each is answered with a 4xx
// (400 for a body that cannot be read), the connection closed and nothing
// after it served. Both services' end-to-end tests use it, so they are
// held to the same probes.
package reqbodytest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Smuggled is the request line pipelined behind each probe: a server that
// answers it served a request it should have refused to read.
const Smuggled = "GET /smuggled-after-a-bad-request HTTP/1.1"

// A Probe is one hostile request: its bytes, and what the client does after
// sending them.
type Probe struct {
	Name string
	// Lead, when set, is a plain request sent first on the connection; its
	// answer is read and not checked.
	Lead func(path, hdr string) string
	// Raw is the request, header and body, for a POST to path with the
	// extra header lines hdr (each ending in CRLF).
	Raw func(path, hdr string) string
	// HalfClose closes the client's sending side after Raw: the body ends
	// early.
	HalfClose bool
	// Stall leaves the connection open without sending more: the body stops
	// arriving, and the server's read deadline must answer.
	Stall bool
	// Framed marks a request whose body net/http reads by its
	// Transfer-Encoding (though it carries a Content-Length too, say): the
	// service answers the body it got, with any 4xx, where a body that
	// cannot be read is a 400.
	Framed bool
}

// Probes are the hostile bodies: a chunk size past 64 bits, a chunk
// extension over 64 KiB, chunks that are mostly extension, a request
// framed by both Content-Length and Transfer-Encoding (plainly, after a
// stray CR, and with 40 requests pipelined behind it), Transfer-Encoding
// folded onto a second line, a body shorter than its Content-Length, and
// one that stops arriving. Each but the last two is followed by a
// pipelined request that must never be answered: a proxy in front that
// framed the request otherwise would have sent it as a request of its own.
// (A folded Content-Length alone is no probe: net/http unfolds it, RFC
// 9112 section 5.2 allows that, and the request behind it is a request.)
func Probes() []Probe {
	post := func(path, hdr, framing, body string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\n" + hdr + framing + "\r\n" + body
	}
	smuggled := Smuggled + "\r\nHost: probe\r\n\r\n"
	var noisy strings.Builder
	for range 200 {
		noisy.WriteString("1;" + strings.Repeat("x", 120) + "\r\n{\r\n")
	}
	return []Probe{
		{Name: "chunk size past 64 bits", Raw: func(path, hdr string) string {
			return post(path, hdr, "Transfer-Encoding: chunked\r\n", "FFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n"+smuggled)
		}},
		{Name: "chunk extension over 64 KiB", Raw: func(path, hdr string) string {
			return post(path, hdr, "Transfer-Encoding: chunked\r\n", "2;ext="+strings.Repeat("a", 70<<10)+"\r\n{}\r\n0\r\n\r\n"+smuggled)
		}},
		{Name: "chunks that are mostly extension", Raw: func(path, hdr string) string {
			return post(path, hdr, "Transfer-Encoding: chunked\r\n", noisy.String()+"0\r\n\r\n"+smuggled)
		}},
		{Name: "Content-Length with Transfer-Encoding", Framed: true, Raw: func(path, hdr string) string {
			return post(path, hdr, "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"+smuggled)
		}},
		// The same in shapes net/http tolerates and a proxy may read
		// otherwise: Transfer-Encoding folded onto a second line (RFC 9112
		// 5.2: reject it, or unfold it; net/http unfolds), a stray CR
		// before the request line after a POST, and a burst of requests
		// pipelined behind it.
		{Name: "Transfer-Encoding folded onto a second line", Framed: true, Raw: func(path, hdr string) string {
			return post(path, hdr, "Transfer-Encoding:\r\n chunked\r\n", "2\r\n{}\r\n0\r\n\r\n"+smuggled)
		}},
		{Name: "both headers after a stray CR", Framed: true, Lead: func(path, hdr string) string {
			return post(path, hdr, "Content-Length: 2\r\n", "{}")
		}, Raw: func(path, hdr string) string {
			return "\r" + post(path, hdr, "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"+smuggled)
		}},
		{Name: "both headers with 40 requests pipelined behind", Framed: true, Raw: func(path, hdr string) string {
			return post(path, hdr, "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"+strings.Repeat(smuggled, 40))
		}},
		{Name: "body shorter than its Content-Length", HalfClose: true, Raw: func(path, hdr string) string {
			return post(path, hdr, "Content-Length: 100\r\n", `{"vins": [`)
		}},
		{Name: "body stops arriving", Stall: true, Raw: func(path, hdr string) string {
			return post(path, hdr, "Content-Length: 100\r\n", `{"vins": [`)
		}},
	}
}

// Run sends every probe to addr (host:port) as a POST to path with the
// header lines hdr, in parallel subtests, and checks the answer: 400 (any
// 4xx for a Framed probe, whose body was read), Connection: close, a body
// that errBody accepts (the service's error format; path must answer the
// probes' bodies with an error), and the connection closed after it,
// without an answer to anything pipelined behind. stall is the longest the server may take to
// give up on a body that stops arriving (its read timeout, plus slack).
func Run(t *testing.T, addr, path, hdr string, stall time.Duration, errBody func([]byte) error) {
	t.Helper()
	for _, p := range Probes() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			resp, rest, err := Send(addr, path, hdr, p, stall+5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case p.Framed && (resp.StatusCode < 400 || resp.StatusCode > 499):
				t.Errorf("status %d, want a 4xx", resp.StatusCode)
			case !p.Framed && resp.StatusCode != http.StatusBadRequest:
				t.Errorf("status %d, want 400", resp.StatusCode)
			}
			if !resp.Close {
				t.Error("no Connection: close on the answer")
			}
			if err := errBody(resp.Body); err != nil {
				t.Errorf("error body %s: %v", resp.Body, err)
			}
			if len(rest) > 0 {
				t.Errorf("after the 400 the connection carried %q: a request behind the bad one was served", rest)
			}
		})
	}
}

// Response is an answer read off a raw connection.
type Response struct {
	StatusCode int
	Header     http.Header
	Close      bool // the answer said Connection: close (net/http takes the header out)
	Body       []byte
}

// Send writes p to a new connection to addr, reads the first answer, and
// then everything else the server sends until it closes the connection
// (rest). It fails when the server keeps the connection open past within.
func Send(addr, path, hdr string, p Probe, within time.Duration) (Response, []byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return Response{}, nil, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(within)); err != nil {
		return Response{}, nil, err
	}
	raw := p.Raw(path, hdr)
	if p.Lead != nil {
		raw = p.Lead(path, hdr) + raw
	}
	if _, err := io.WriteString(c, raw); err != nil {
		return Response{}, nil, fmt.Errorf("writing the probe: %w", err)
	}
	if p.HalfClose {
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			return Response{}, nil, err
		}
	}
	br := bufio.NewReader(c)
	if p.Lead != nil { // the plain request's answer
		lead, err := http.ReadResponse(br, nil)
		if err != nil {
			return Response{}, nil, fmt.Errorf("reading the lead request's answer: %w", err)
		}
		io.Copy(io.Discard, lead.Body)
		lead.Body.Close()
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return Response{}, nil, fmt.Errorf("reading the answer: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return Response{}, nil, fmt.Errorf("reading the answer's body: %w", err)
	}
	rest, err := io.ReadAll(br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Response{}, nil, fmt.Errorf("the connection stayed open %v after the answer (read %q)", within, rest)
	}
	// A reset after the answer is a closed connection too.
	return Response{StatusCode: resp.StatusCode, Header: resp.Header, Close: resp.Close, Body: bytes.TrimSpace(body)}, rest, nil
}

// NoServerFault checks what the probes left behind on a service: no line of
// logs at ERROR, no 5xx in http_requests_total at metricsURL (its
// /metrics), and the probes' 400s counted there under route.
func NoServerFault(t *testing.T, metricsURL, route, logs string) {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a client's fault was logged at ERROR: %s", line)
		}
	}
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	counted := false
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "http_requests_total{") {
			continue
		}
		if strings.Contains(line, `status="5`) {
			t.Errorf("a 5xx was counted: %s", line)
		}
		if strings.Contains(line, `route="`+route+`"`) && strings.Contains(line, `status="400"`) {
			counted = true
		}
	}
	if !counted {
		t.Errorf("no 400 counted for route %s in\n%s", route, b)
	}
}
