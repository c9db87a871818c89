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

	slow := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) })}
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
