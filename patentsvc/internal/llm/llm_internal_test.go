package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatewayapis/shared/redact"
)

func TestCheckRetry(t *testing.T) {
	ctx := context.Background()
	for status, want := range map[int]bool{
		200: false, 400: false, 401: false, 402: false, 403: false, 404: false, 422: false,
		408: true, 429: true, 500: true, 501: false, 502: true, 503: true, 504: true,
	} {
		got, err := checkRetry(ctx, &http.Response{StatusCode: status}, nil)
		if got != want || err != nil {
			t.Errorf("checkRetry(status %d) = %v, %v; want %v, nil", status, got, err, want)
		}
	}
	netErr := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}
	if got, _ := checkRetry(ctx, nil, netErr); !got {
		t.Errorf("checkRetry(network error) = false, want true")
	}
	if got, _ := checkRetry(ctx, nil, errors.New("read answer: unexpected EOF")); !got {
		t.Errorf("checkRetry(body read error) = false, want true")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := checkRetry(cancelled, &http.Response{StatusCode: 503}, nil); got || !errors.Is(err, context.Canceled) {
		t.Errorf("checkRetry(cancelled ctx) = %v, %v; want false, context.Canceled", got, err)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestRedact(t *testing.T) {
	const u = "https://openrouter.ai/api/v1/chat/completions"
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"url error", &url.Error{Op: "Post", URL: u, Err: errors.New("boom")}, "boom"},
		{"dial error", &url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 443}, Err: errors.New("connect: connection refused")}}, "dial: connect: connection refused"},
		{"dns error", &url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "openrouter.ai"}}}, "dns lookup failed: no such host"},
		{"timeout", &url.Error{Op: "Post", URL: u, Err: timeoutErr{}}, "timeout: i/o timeout"},
		{"deadline", &url.Error{Op: "Post", URL: u, Err: context.DeadlineExceeded}, "timeout: context deadline exceeded"},
		{"plain", errors.New("read answer: unexpected EOF"), "read answer: unexpected EOF"},
		{"wrapped timeout", fmt.Errorf("read answer: %w", timeoutErr{}), "timeout: read answer: i/o timeout"},
	} {
		got := redact.Error(tt.err)
		if got != tt.want {
			t.Errorf("redact(%s) = %q, want %q", tt.name, got, tt.want)
		}
		for _, bad := range []string{"openrouter.ai", "10.1.2.3", "https://", "/chat/completions"} {
			if strings.Contains(got, bad) {
				t.Errorf("redact(%s) = %q, want no %q", tt.name, got, bad)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	c := &Client{apiKey: "my-gateway-key-123"}
	for in, want := range map[string]string{
		"key my-gateway-key-123 is bad":         "key [redacted] is bad",
		"sk-or-v1-abcdef0123 expired":           "[redacted] expired",
		"Authorization: Bearer abc.def":         "Authorization: [redacted]",
		"authorization: bearer xyz":             "authorization: [redacted]",
		"sk-short and task-list stay":           "sk-short and task-list stay",
		"No auth credentials found":             "No auth credentials found",
		"my-gateway-key-123my-gateway-key-123.": "[redacted][redacted].",
	} {
		if got := c.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoteMessage(t *testing.T) {
	for in, want := range map[string]string{
		"Rate limit exceeded: free-models-per-min. ": `"Rate limit exceeded: free-models-per-min."`,
		"  a\n\n\tb\x00c \x1b[31m ":                  `"a b c [31m"`,
		"flagged for \"violence\"":                   `"flagged for \"violence\""`,
		"bad \xff byte":                              `"bad ` + "\uFFFD" + ` byte"`,
		"":                                           `""`,
	} {
		if got := quoteMessage(in); got != want {
			t.Errorf("quoteMessage(%q) = %s, want %s", in, got, want)
		}
	}
	long := strings.Repeat("é", 500)
	want := `"` + strings.Repeat("é", maxMessage) + `…"`
	if got := quoteMessage(long); got != want {
		t.Errorf("quoteMessage(500 runes) = %s, want the first %d and an ellipsis", got, maxMessage)
	}
	exact := strings.Repeat("a", maxMessage)
	if got := quoteMessage(exact); got != `"`+exact+`"` {
		t.Errorf("quoteMessage(%d runes) = %s, want it whole", maxMessage, got)
	}
}
