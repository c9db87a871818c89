package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/shared/redact"
)

func TestWait(t *testing.T) {
	d := &Dispatcher{backoff: time.Second}
	for _, tt := range []struct {
		attempt    int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 500 * time.Millisecond, time.Second},
		{2, 0, time.Second, 2 * time.Second},
		{3, 0, 2 * time.Second, 4 * time.Second},
		{1, 10 * time.Second, 10 * time.Second, 10 * time.Second},
		{1, time.Hour, maxRetryAfter, maxRetryAfter},
		{40, 0, maxBackoff / 2, maxBackoff},
	} {
		for range 100 {
			if got := d.wait(tt.attempt, tt.retryAfter); got < tt.lo || got > tt.hi {
				t.Fatalf("wait(%d, %v) = %v, want %v to %v", tt.attempt, tt.retryAfter, got, tt.lo, tt.hi)
			}
		}
	}
	if got := (&Dispatcher{}).wait(3, 0); got != 0 {
		t.Errorf("wait with no backoff = %v, want 0", got)
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		s      string
		limit  int
		escape bool
		want   string
	}{
		{"short", 10, false, "short"},
		{"a<b>&c", 20, true, "a&lt;b&gt;&amp;c"},
		{"a<b>&c", 20, false, "a<b>&c"},
		{"abcdef", 4, false, "abc…"},
		{"ab&cd", 6, true, "ab…"},      // &amp; does not fit whole: never split
		{"ab&cd", 8, true, "ab&amp;…"}, // 2+5+1
		{"😀😀😀", 4, false, "😀…"},        // 2 UTF-16 units each
		{"ééé", 3, false, "ééé"},
	} {
		got := fit(tt.s, tt.limit, tt.escape)
		if got != tt.want {
			t.Errorf("fit(%q, %d, %v) = %q, want %q", tt.s, tt.limit, tt.escape, got, tt.want)
		}
		if width(got) > tt.limit {
			t.Errorf("fit(%q, %d, %v) = %q is %d units long", tt.s, tt.limit, tt.escape, got, width(got))
		}
	}
}

func TestRedact(t *testing.T) {
	const u = "https://hooks.slack.com/services/T0/B0/TOKEN?x=QUERY"
	for _, err := range []error{
		&url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 443}, Err: errors.New("connect: connection refused")}},
		&url.Error{Op: "Post", URL: u, Err: &net.DNSError{Err: "no such host", Name: "hooks.slack.com"}},
		&url.Error{Op: "Post", URL: u, Err: fmt.Errorf("context deadline exceeded")},
	} {
		got := redact.Error(err)
		for _, leak := range []string{"TOKEN", "QUERY", "hooks.slack.com", "10.1.2.3", "/services"} {
			if strings.Contains(got, leak) {
				t.Errorf("redact(%v) = %q, holds %q", err, got, leak)
			}
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W": true,
		"job-0195f0e2-7c1a":               true,
		"":                                false,
		"a.b":                             false,
		"a,b":                             false,
		"a b":                             false,
		"é":                               false,
		strings.Repeat("a", 129):          false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestSigningKey(t *testing.T) {
	for _, tt := range []struct {
		secret, key string
		err         bool
	}{
		{"raw-secret", "raw-secret", false},
		{"whsec_a2V5", "key", false},
		{"whsec_a2V5MQ==", "key1", false},
		{"whsec_a2V5MQ", "key1", false},
		{"whsec_%%%", "", true},
		{"WHSEC_a2V5", "WHSEC_a2V5", false}, // the prefix is lowercase
	} {
		key, err := signingKey(tt.secret)
		if (err != nil) != tt.err || (err == nil && string(key) != tt.key) {
			t.Errorf("signingKey(%q) = %q, %v, want %q (error %v)", tt.secret, key, err, tt.key, tt.err)
		}
	}
}
