package pdfstore_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdfstore"
)

// testPDF is a small body that passes the %PDF- check.
var testPDF = []byte("%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n")

// server is an httptest server (host 127.0.0.1) counting its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func servePDF(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/pdf")
	_, _ = w.Write(testPDF)
}

// waitDone blocks a handler until the client gives up (or the test's
// safety limit), so slow-server tests never leave handlers running.
func waitDone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

func newDownloader(hosts []string, maxBytes int64, timeout time.Duration, retries int) *pdfstore.Downloader {
	return pdfstore.NewDownloader(hosts, maxBytes, timeout, retries, slog.New(slog.DiscardHandler))
}

// local allows the httptest servers by host, as PDF_ALLOWED_HOSTS would.
var local = []string{"127.0.0.1"}

func TestDownloaderAllowed(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hosts []string
		link  string
		want  bool
	}{
		{"default host https", []string{"patentimages.storage.googleapis.com"}, "https://patentimages.storage.googleapis.com/86/1c/bd/89a41d9faca215/US8110241.pdf", true},
		{"default host http", []string{"patentimages.storage.googleapis.com"}, "http://patentimages.storage.googleapis.com/pdfs/US6782370.pdf", true},
		{"host case and trailing dot", []string{"patentimages.storage.googleapis.com"}, "https://PatentImages.Storage.GoogleAPIs.com./x.pdf", true},
		{"list entry case", []string{" PatentImages.storage.googleapis.com "}, "https://patentimages.storage.googleapis.com/x.pdf", true},
		{"port ignored in link", local, "http://127.0.0.1:8443/x.pdf", true},
		{"port ignored in list", []string{"127.0.0.1:9999"}, "http://127.0.0.1:8443/x.pdf", true},
		{"scheme case", local, "HTTP://127.0.0.1/x.pdf", true},
		{"ipv6 in list", []string{"[::1]:80"}, "http://[::1]:8080/x.pdf", true},
		{"other host", []string{"patentimages.storage.googleapis.com"}, "https://evil.example/x.pdf", false},
		{"suffix trick", []string{"patentimages.storage.googleapis.com"}, "https://patentimages.storage.googleapis.com.evil.example/x.pdf", false},
		{"subdomain not implied", []string{"googleapis.com"}, "https://patentimages.storage.googleapis.com/x.pdf", false},
		{"localhost not 127.0.0.1", local, "http://localhost/x.pdf", false},
		{"encoded ip", local, "http://2130706433/x.pdf", false},
		{"metadata", local, "http://169.254.169.254/latest/meta-data/", false},
		{"userinfo", local, "http://user:secret@127.0.0.1/x.pdf", false},
		{"user only", local, "http://user@127.0.0.1/x.pdf", false},
		{"ftp", local, "ftp://127.0.0.1/x.pdf", false},
		{"file", local, "file:///etc/passwd", false},
		{"javascript", local, "javascript:alert(1)", false},
		{"relative", local, "/x.pdf", false},
		{"scheme-relative", local, "//127.0.0.1/x.pdf", false},
		{"empty", local, "", false},
		{"unparsable", local, "http://127.0.0.1:bad/x.pdf", false},
		{"control char", local, "http://127.0.0.1/x\x7f.pdf", false},
		{"empty list", nil, "http://127.0.0.1/x.pdf", false},
		{"star any host", []string{"*"}, "http://169.254.169.254/x.pdf", true},
		{"star among others", []string{"a.example", "*"}, "https://b.example/x.pdf", true},
		{"star still no userinfo", []string{"*"}, "http://u:p@b.example/x.pdf", false},
		{"star still no ftp", []string{"*"}, "ftp://b.example/x.pdf", false},
		{"star still needs a host", []string{"*"}, "http:///x.pdf", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDownloader(tt.hosts, 0, 0, 0)
			if got := d.Allowed(tt.link); got != tt.want {
				t.Errorf("Allowed(%q) with hosts %q = %t, want %t", tt.link, tt.hosts, got, tt.want)
			}
		})
	}
}

func TestFetch(t *testing.T) {
	ctx := context.Background()

	t.Run("ok", func(t *testing.T) {
		s := newServer(t, servePDF)
		got, err := newDownloader(local, 1<<20, 5*time.Second, 0).Fetch(ctx, s.URL+"/86/1c/US8110241.pdf")
		if err != nil || !bytes.Equal(got, testPDF) {
			t.Fatalf("Fetch() = %q, %v, want %q", got, err, testPDF)
		}
	})

	t.Run("star allows any host", func(t *testing.T) {
		s := newServer(t, servePDF)
		got, err := newDownloader([]string{"*"}, 1<<20, 5*time.Second, 0).Fetch(ctx, s.URL+"/x.pdf")
		if err != nil || !bytes.Equal(got, testPDF) {
			t.Fatalf("Fetch() = %q, %v, want %q", got, err, testPDF)
		}
	})

	t.Run("exactly the cap", func(t *testing.T) {
		body := append(bytes.Clone(testPDF), bytes.Repeat([]byte{'x'}, 100-len(testPDF))...)
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
		got, err := newDownloader(local, 100, 5*time.Second, 0).Fetch(ctx, s.URL+"/x.pdf")
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("Fetch() = %d bytes, %v, want %d bytes", len(got), err, len(body))
		}
	})

	t.Run("redirect to an allowed host", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/r" {
				http.Redirect(w, r, "/x.pdf", http.StatusFound)
				return
			}
			servePDF(w, r)
		})
		got, err := newDownloader(local, 1<<20, 5*time.Second, 0).Fetch(ctx, s.URL+"/r")
		if err != nil || !bytes.Equal(got, testPDF) {
			t.Fatalf("Fetch() = %q, %v, want %q", got, err, testPDF)
		}
	})

	t.Run("retry 5xx then 200", func(t *testing.T) {
		var s *server
		s = newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if s.hits.Load() == 1 {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			servePDF(w, r)
		})
		got, err := newDownloader(local, 1<<20, 5*time.Second, 2).Fetch(ctx, s.URL+"/x.pdf")
		if err != nil || !bytes.Equal(got, testPDF) {
			t.Fatalf("Fetch() = %q, %v, want %q", got, err, testPDF)
		}
		if n := s.hits.Load(); n != 2 {
			t.Errorf("requests = %d, want 2", n)
		}
	})

	t.Run("retry 429 honours Retry-After", func(t *testing.T) {
		var s *server
		s = newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if s.hits.Load() == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			servePDF(w, r)
		})
		if _, err := newDownloader(local, 1<<20, 5*time.Second, 1).Fetch(ctx, s.URL+"/x.pdf"); err != nil {
			t.Fatalf("Fetch() error: %v", err)
		}
		if n := s.hits.Load(); n != 2 {
			t.Errorf("requests = %d, want 2", n)
		}
	})

	t.Run("retries exhausted", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "down", http.StatusBadGateway)
		})
		_, err := newDownloader(local, 1<<20, 5*time.Second, 1).Fetch(ctx, s.URL+"/x.pdf")
		if !errors.Is(err, pdfstore.ErrDownload) {
			t.Fatalf("Fetch() error = %v, want ErrDownload", err)
		}
		if n := s.hits.Load(); n != 2 {
			t.Errorf("requests = %d, want 2 (one retry)", n)
		}
	})

	t.Run("404 not retried", func(t *testing.T) {
		s := newServer(t, http.NotFound)
		_, err := newDownloader(local, 1<<20, 5*time.Second, 3).Fetch(ctx, s.URL+"/x.pdf")
		if !errors.Is(err, pdfstore.ErrDownload) {
			t.Fatalf("Fetch() error = %v, want ErrDownload", err)
		}
		// The failure is named once ("pdf download from h: pdf download
		// failed: ..." named it twice).
		if want := "pdf download failed from 127.0.0.1: status 404"; err.Error() != want {
			t.Errorf("Fetch() error = %q, want %q", err, want)
		}
		if n := s.hits.Load(); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})

	t.Run("network error", func(t *testing.T) {
		s := newServer(t, servePDF)
		link := s.URL + "/x.pdf"
		s.Close()
		_, err := newDownloader(local, 1<<20, 5*time.Second, 1).Fetch(ctx, link)
		if !errors.Is(err, pdfstore.ErrDownload) {
			t.Fatalf("Fetch() error = %v, want ErrDownload", err)
		}
	})
}

func TestFetchRefused(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		hosts   []string // default: local
		link    func(s *server) string
		max     int64
		timeout time.Duration
		want    error
		// hits is the number of requests the server must have seen.
		hits int64
	}{
		{
			name:    "host not allowed",
			handler: servePDF,
			hosts:   []string{"patentimages.storage.googleapis.com"},
			want:    pdfstore.ErrForbiddenLink,
		},
		{
			name:    "userinfo",
			handler: servePDF,
			link:    func(s *server) string { return strings.Replace(s.URL, "http://", "http://user:hunter2@", 1) + "/x.pdf" },
			want:    pdfstore.ErrForbiddenLink,
		},
		{
			name:    "ftp scheme",
			handler: servePDF,
			link:    func(s *server) string { return strings.Replace(s.URL, "http://", "ftp://", 1) + "/x.pdf" },
			want:    pdfstore.ErrForbiddenLink,
		},
		{
			name:    "unparsable",
			handler: servePDF,
			link:    func(*server) string { return "http://127.0.0.1:%zz/x.pdf" },
			want:    pdfstore.ErrForbiddenLink,
		},
		{
			name: "redirect to metadata address",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			},
			want: pdfstore.ErrForbiddenLink,
			hits: 1,
		},
		{
			name: "redirect to localhost",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/x.pdf" {
					// Same server under the name localhost, which is not
					// allowed: it must never be reached.
					http.Redirect(w, r, "http://localhost:"+portOf(r)+"/secret", http.StatusFound)
					return
				}
				servePDF(w, r)
			},
			want: pdfstore.ErrForbiddenLink,
			hits: 1,
		},
		{
			name: "redirect to ftp",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "ftp://127.0.0.1/x.pdf", http.StatusFound)
			},
			want: pdfstore.ErrForbiddenLink,
			hits: 1,
		},
		{
			name: "redirect loop",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/x.pdf", http.StatusFound)
			},
			want: pdfstore.ErrDownload,
			hits: 10,
		},
		{
			name: "content length over the cap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				// Declares 10 MB, sends the magic, then stalls: only an
				// early refusal returns before the timeout.
				w.Header().Set("Content-Length", strconv.Itoa(10<<20))
				_, _ = w.Write([]byte("%PDF-"))
				w.(http.Flusher).Flush()
				waitDone(r)
			},
			max:     1 << 10,
			timeout: 3 * time.Second,
			want:    pdfstore.ErrTooLarge,
			hits:    1,
		},
		{
			name: "chunked body over the cap",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("%PDF-"))
				for range 64 {
					_, _ = w.Write(bytes.Repeat([]byte{'x'}, 1<<10))
					w.(http.Flusher).Flush()
				}
			},
			max:  8 << 10,
			want: pdfstore.ErrTooLarge,
			hits: 1,
		},
		{
			// A small Content-Length that expands past the cap once the
			// transport undoes the gzip encoding.
			name: "gzip body over the cap",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				_, _ = zw.Write([]byte("%PDF-"))
				_, _ = zw.Write(make([]byte, 1<<20))
				_ = zw.Close()
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
				_, _ = w.Write(buf.Bytes())
			},
			max:  64 << 10,
			want: pdfstore.ErrTooLarge,
			hits: 1,
		},
		{
			name: "not a pdf",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<html>captcha</html>"))
			},
			want: pdfstore.ErrDownload,
			hits: 1,
		},
		{
			name:    "empty body",
			handler: func(http.ResponseWriter, *http.Request) {},
			want:    pdfstore.ErrDownload,
			hits:    1,
		},
		{
			name: "slow headers past the timeout",
			handler: func(_ http.ResponseWriter, r *http.Request) {
				waitDone(r)
			},
			timeout: 150 * time.Millisecond,
			want:    pdfstore.ErrDownload,
			hits:    1,
		},
		{
			name: "slow body past the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("%PDF-1.4\n"))
				w.(http.Flusher).Flush()
				waitDone(r)
			},
			timeout: 150 * time.Millisecond,
			want:    pdfstore.ErrDownload,
			hits:    1,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			hosts := tt.hosts
			if hosts == nil {
				hosts = local
			}
			link := s.URL + "/x.pdf"
			if tt.link != nil {
				link = tt.link(s)
			}
			maxBytes := cmp.Or(tt.max, 1<<20)
			timeout := cmp.Or(tt.timeout, 5*time.Second)
			d := newDownloader(hosts, maxBytes, timeout, 2)

			start := time.Now()
			got, err := d.Fetch(ctx, link)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Fetch(%q) = %d bytes, %v, want %v", link, len(got), err, tt.want)
			}
			if got != nil {
				t.Errorf("Fetch(%q) returned %d bytes with an error", link, len(got))
			}
			if el := time.Since(start); el > timeout+time.Second {
				t.Errorf("Fetch(%q) took %v, want under the %v timeout", link, el, timeout)
			}
			if n := s.hits.Load(); n != tt.hits {
				t.Errorf("server requests = %d, want %d", n, tt.hits)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "/x.pdf") {
				t.Errorf("error %q leaks the link", err)
			}
		})
	}
}

func TestFetchTimeoutIsDeadline(t *testing.T) {
	s := newServer(t, func(_ http.ResponseWriter, r *http.Request) { waitDone(r) })
	_, err := newDownloader(local, 1<<20, 100*time.Millisecond, 2).Fetch(context.Background(), s.URL+"/x.pdf")
	if !errors.Is(err, pdfstore.ErrDownload) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Fetch() error = %v, want ErrDownload and context.DeadlineExceeded", err)
	}
}

func TestFetchErrorHidesQuery(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	})
	_, err := newDownloader(local, 1<<20, 5*time.Second, 0).Fetch(context.Background(), s.URL+"/x.pdf?sig=topsecret")
	if !errors.Is(err, pdfstore.ErrDownload) {
		t.Fatalf("Fetch() error = %v, want ErrDownload", err)
	}
	if strings.Contains(err.Error(), "topsecret") {
		t.Errorf("error %q leaks the query", err)
	}
}

func portOf(r *http.Request) string {
	_, port, _ := strings.Cut(r.Host, ":")
	return port
}

// TestFetchLogsRedacted checks what reaches the service's log through the
// retry client: the attempts are there, the query of the link is not.
func TestFetchLogsRedacted(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	dead := newServer(t, servePDF)
	deadLink := dead.URL + "/y.pdf?sig=deadsecret"
	dead.Close()

	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := pdfstore.NewDownloader(local, 1<<20, 5*time.Second, 1, logger)
	for _, link := range []string{s.URL + "/x.pdf?sig=topsecret#frag", deadLink} {
		if _, err := d.Fetch(context.Background(), link); !errors.Is(err, pdfstore.ErrDownload) {
			t.Fatalf("Fetch(%q) error = %v, want ErrDownload", link, err)
		}
	}
	logs := buf.String()
	for _, want := range []string{"retrying request", "/x.pdf", `"err":`, "request failed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	for _, leak := range []string{"topsecret", "deadsecret", "frag", "sig="} {
		if strings.Contains(logs, leak) {
			t.Errorf("logs contain %q:\n%s", leak, logs)
		}
	}
}
