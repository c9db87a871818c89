package pdfstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/retry"

	"github.com/hashicorp/go-retryablehttp"
)

// ErrForbiddenLink is returned by Fetch for a link it must not follow: a
// scheme other than http or https, a host outside the allow-list,
// credentials in the URL, an unparsable URL, or a redirect to any of
// these. It is a kind of patent.ErrPDFNotFound.
var ErrForbiddenLink = patent.NewKindError(patent.ErrPDFNotFound, "pdf link not allowed")

// ErrTooLarge is returned by Fetch when the PDF is bigger than the cap.
var ErrTooLarge = errors.New("pdf larger than the limit")

// ErrDownload is returned by Fetch when the download fails: a network
// error, a status other than 200, the timeout, or a body that is not a PDF
// (does not start with %PDF-).
var ErrDownload = errors.New("pdf download failed")

// Defaults used by NewDownloader for a zero or negative setting.
const (
	DefaultMaxBytes = 50 << 20
	DefaultTimeout  = 60 * time.Second
)

const (
	maxRedirects = 10
	pdfMagic     = "%PDF-"
	// Back-off between attempts: exponential from retryWaitMin, capped at
	// retryWaitMax, with jitter; a Retry-After on 429/503 is honoured up
	// to the cap. The whole Fetch is still bounded by the timeout.
	retryWaitMin = 100 * time.Millisecond
	retryWaitMax = 5 * time.Second
)

// errTooManyRedirects ends a redirect chain longer than maxRedirects.
var errTooManyRedirects = errors.New("too many redirects")

// Downloader fetches patent PDFs from allowed hosts only, with a size cap,
// a timeout and retries. It is safe for concurrent use.
type Downloader struct {
	anyHost  bool
	hosts    map[string]bool
	maxBytes int64
	timeout  time.Duration
	client   *retryablehttp.Client
}

// NewDownloader returns a Downloader. allowedHosts is PDF_ALLOWED_HOSTS as
// configured: host names or addresses (case-insensitive, any port ignored)
// or "*" for any host. maxBytes caps a PDF (DefaultMaxBytes when <= 0);
// timeout bounds one Fetch, all attempts and the body included
// (DefaultTimeout when <= 0); retries is the number of extra attempts
// after network errors, 429 and 5xx (except 501). logger receives the
// retry client's messages, links cut to scheme, host and path; nil
// discards them.
func NewDownloader(allowedHosts []string, maxBytes int64, timeout time.Duration, retries int, logger *slog.Logger) *Downloader {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Downloader{hosts: make(map[string]bool), maxBytes: maxBytes, timeout: timeout}
	for _, h := range allowedHosts {
		h = strings.TrimSpace(h)
		if h == "*" {
			d.anyHost = true
			continue
		}
		if h = normalizeHost(stripPort(h)); h != "" {
			d.hosts[h] = true
		}
	}

	transport := http.DefaultTransport.(*http.Transport).Clone()
	c := retryablehttp.NewClient()
	// A client span per attempt (and per redirect followed).
	c.HTTPClient = &http.Client{Transport: observe.TracingTransport(transport), CheckRedirect: d.checkRedirect}
	c.Logger = retryLogger{l: logger}
	c.RetryMax = max(retries, 0)
	c.RetryWaitMin = retryWaitMin
	c.RetryWaitMax = retryWaitMax
	c.CheckRetry = checkRetry
	c.Backoff = retry.Backoff
	// Hand back the last response or error, so Fetch classifies it (and
	// no error text carries the URL).
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler
	d.client = c
	return d
}

// Allowed reports whether link may be fetched: an absolute http or https
// URL without userinfo whose host is in the allow-list.
func (d *Downloader) Allowed(link string) bool {
	u, err := url.Parse(link)
	if err != nil {
		return false
	}
	return d.allowedURL(u)
}

func (d *Downloader) allowedURL(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false // url.Parse lower-cases the scheme
	}
	if u.User != nil || u.Opaque != "" {
		return false
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return false
	}
	return d.anyHost || d.hosts[host]
}

// checkRedirect re-applies the link rules to every hop, so an allowed host
// cannot bounce the request to an internal address.
func (d *Downloader) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	if !d.allowedURL(req.URL) {
		return fmt.Errorf("redirect to %s: %w", safeHost(req.URL), ErrForbiddenLink)
	}
	return nil
}

// Fetch downloads link into memory and returns the PDF's bytes. It returns
// ErrForbiddenLink before any request when Allowed(link) is false, and when
// a redirect leads to a link that is not allowed; ErrTooLarge when the
// Content-Length or the body read so far exceeds the cap; ErrDownload
// otherwise. Error texts name the host, never the full URL.
func (d *Downloader) Fetch(ctx context.Context, link string) ([]byte, error) {
	u, err := url.Parse(link)
	if err != nil || !d.allowedURL(u) {
		return nil, ErrForbiddenLink
	}
	host := safeHost(u)

	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()

	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("pdf download from %s: %w", host, ErrForbiddenLink)
	}
	req.Header.Set("Accept", "application/pdf")
	req.Header.Set("User-Agent", "patentsvc")

	resp, err := d.client.Do(req)
	if resp != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		cause := unwrapURLError(err)
		if errors.Is(err, ErrForbiddenLink) {
			return nil, fmt.Errorf("pdf download from %s: %w", host, cause)
		}
		return nil, fmt.Errorf("%w from %s: %w", ErrDownload, host, cause)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w from %s: status %d", ErrDownload, host, resp.StatusCode)
	}
	if resp.ContentLength > d.maxBytes {
		return nil, fmt.Errorf("pdf download from %s: %w: content length %d over %d bytes", host, ErrTooLarge, resp.ContentLength, d.maxBytes)
	}
	return d.readBody(host, resp)
}

// readBody reads at most maxBytes, whatever the headers said (a chunked or
// compressed body has no useful Content-Length), and checks the PDF magic
// before reading the rest.
func (d *Downloader) readBody(host string, resp *http.Response) ([]byte, error) {
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	body := io.LimitReader(resp.Body, d.maxBytes+1)
	if _, err := io.CopyN(&buf, body, int64(len(pdfMagic))); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w from %s: %w", ErrDownload, host, unwrapURLError(err))
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte(pdfMagic)) {
		return nil, fmt.Errorf("%w from %s: body is not a pdf", ErrDownload, host)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%w from %s: %w", ErrDownload, host, unwrapURLError(err))
	}
	if int64(buf.Len()) > d.maxBytes {
		return nil, fmt.Errorf("pdf download from %s: %w: body over %d bytes", host, ErrTooLarge, d.maxBytes)
	}
	return buf.Bytes(), nil
}

// checkRetry is retryablehttp's default policy (network errors, 429, 5xx
// but 501; never after the context ends), except that a refused redirect
// is final.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if err != nil && (errors.Is(err, ErrForbiddenLink) || errors.Is(err, errTooManyRedirects)) {
		return false, err
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// unwrapURLError drops the *url.Error layer, whose text holds the full
// URL, keeping its cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// safeHost is the host of u for error texts: no path, query or userinfo.
func safeHost(u *url.URL) string {
	return normalizeHost(u.Hostname())
}

func stripPort(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// normalizeHost lower-cases h and drops IPv6 brackets and a trailing dot,
// so "Example.COM." and "example.com" match.
func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
