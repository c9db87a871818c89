package redact_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/shared/redact"
)

func TestError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // connection refused from now on

	// slow answers nothing: the client's timeout ends the request.
	slow := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })}
	sl, _ := net.Listen("tcp", "127.0.0.1:0")
	go slow.Serve(sl)
	defer slow.Close()

	client := &http.Client{Timeout: 50 * time.Millisecond}
	for name, tt := range map[string]struct {
		url, want string
	}{
		"refused": {"http://" + addr + "/path?api_key=SECRET", "dial: connect: connection refused"},
		"timeout": {"http://" + sl.Addr().String() + "/hooks/T0/B0/SECRET", "timeout: "},
		"dns":     {"http://no-such-host.invalid/x?api_key=SECRET", "dns lookup failed"},
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, tt.url, nil)
			_, err := client.Do(req)
			if err == nil {
				t.Fatal("request succeeded")
			}
			got := redact.Error(err)
			if !strings.Contains(got, tt.want) {
				t.Errorf("Error = %q, want it to contain %q", got, tt.want)
			}
			for _, leak := range []string{"SECRET", "127.0.0.1", "no-such-host", "http://"} {
				if strings.Contains(got, leak) {
					t.Errorf("Error = %q leaks %q", got, leak)
				}
			}
		})
	}
	if got := redact.Error(errors.New("plain")); got != "plain" {
		t.Errorf("Error(plain) = %q", got)
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@host.example:8443/a/b.pdf?sig=SECRET#frag":             "https://host.example:8443/a/b.pdf",
		"http://127.0.0.1/x.pdf":                                                "http://127.0.0.1/x.pdf",
		"postgres://app:SECRET@db:5432/patents?sslmode=require&password=SECRET": "postgres://db:5432/patents",
		"http://host:bad/x":                                                     "[unparsable url]",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLinks(t *testing.T) {
	in := "GET https://user:pw@cdn.example/x.pdf?sig=SECRET#frag (status: 500), then http://127.0.0.1:9/y.pdf?sig=S2"
	want := "GET https://cdn.example/x.pdf (status: 500), then http://127.0.0.1:9/y.pdf"
	if got := redact.Links(in); got != want {
		t.Errorf("Links(%q) = %q, want %q", in, got, want)
	}
	quoted := "GET https://h/x.pdf?a='x'&sig=SECRET (status: 500)"
	if got := redact.Links(quoted); strings.Contains(got, "SECRET") || !strings.Contains(got, "https://h/x.pdf") {
		t.Errorf("Links(%q) = %q, want the signature gone and the link kept", quoted, got)
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct {
		in      string
		secrets []string
		want    string
	}{
		{"Invalid API key KEY123 for http://proxy.internal:8080/search.json?api_key=KEY123&q=x", []string{"KEY123", "proxy.internal:8080", "proxy.internal"},
			"Invalid API key [redacted] for [url]"},
		{"bad key KEY123 from proxy.internal:8080", []string{"proxy.internal", "KEY123", "proxy.internal:8080"}, "bad key [redacted] from [redacted]"},
		{"key sk-or-v1-abcdef0123 expired", nil, "key [redacted] expired"},
		{"Authorization: Bearer abc.def", nil, "Authorization: [redacted]"},
		{"nothing to hide", []string{"", "absent"}, "nothing to hide"},
	} {
		got := redact.Text(tt.in, tt.secrets...)
		if got != tt.want {
			t.Errorf("Text(%q, %q) = %q, want %q", tt.in, tt.secrets, got, tt.want)
		}
		for _, s := range tt.secrets {
			if s != "" && strings.Contains(got, s) {
				t.Errorf("Text(%q) = %q still contains %q", tt.in, got, s)
			}
		}
	}
}
