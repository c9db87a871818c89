package serpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/retry"

	"github.com/hashicorp/go-retryablehttp"
)

// ErrUpstream is wrapped by every failure to get a search answer: network
// errors, timeouts, cancellation, non-200 statuses (retried ones once the
// retries are spent), and answers that are not a usable search result.
var ErrUpstream = errors.New("patent search failed")

// ErrQuota is wrapped, together with ErrUpstream, by the failure SerpApi
// reports with a 429 when the account has run out of searches. It is not
// retried: only a new billing period or plan ends it.
var ErrQuota = errors.New("patent search quota exhausted")

const (
	engine = "google_patents"
	// pageSize is SerpApi's largest num (its smallest is 10).
	pageSize = 100
	// keyVersion changes when the meaning of a cached patent.SearchResult changes (the
	// filtering rules, say), so old cache entries stop matching. v2: strings
	// cleaned of NUL and invalid UTF-8 (str); a v1 entry may hold a title
	// with a NUL that PostgreSQL refuses to store with the patent. v3:
	// every result's publication (with or without a PDF) and the
	// portfolio facts are kept (decisions.md, "patentsvc: what changed,
	// and what the portfolio covers"); a v2 entry has neither.
	keyVersion = "serpapi-search-v3"

	maxBody      = 8 << 20  // 100 results with figures are about 150 KiB
	maxErrorBody = 64 << 10 // error answers are a one-line JSON object
	retryWaitMin = 250 * time.Millisecond
	retryWaitMax = 4 * time.Second
	userAgent    = "patentsvc/1.0 (+https://github.com/gatewayapis)"
)

// Client searches Google Patents through SerpApi. It is safe for concurrent
// use.
type Client struct {
	http    *retryablehttp.Client
	baseURL string
	apiKey  string
	// secrets are kept out of errors: the API key and the base URL's
	// host[:port] and host.
	secrets []string
	logger  *slog.Logger
	timeout time.Duration
	retries int
}

// NewClient returns a client for SerpApi at baseURL (SERPAPI_BASE_URL,
// e.g. https://serpapi.com). timeout bounds each attempt including reading
// the answer, and retries is the number of attempts after the first. A nil
// logger discards.
func NewClient(baseURL, apiKey string, timeout time.Duration, retries int, logger *slog.Logger) *Client {
	retries = max(retries, 0)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 16
	hc := &http.Client{
		Timeout: timeout,
		// A client span per attempt, with the traceparent sent along; the
		// span's url.full has no query string, so the api_key in it never
		// reaches a span (serpapi_test checks).
		Transport: observe.TracingTransport(transport),
		// SerpApi does not redirect searches; a redirect means a wrong base
		// URL, and following it would resend the API key elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c := &Client{
		baseURL: strings.TrimRight(baseURL, "/"),
		apiKey:  apiKey,
		logger:  logger,
		secrets: secrets(apiKey, baseURL),
		timeout: timeout,
		retries: retries,
	}
	c.http = &retryablehttp.Client{
		HTTPClient:   hc,
		RetryWaitMin: retryWaitMin,
		RetryWaitMax: retryWaitMax,
		RetryMax:     retries,
		CheckRetry:   checkRetry,
		Backoff:      retry.Backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		// Logger stays nil: retryablehttp logs the request URL, which
		// carries the API key in its query string.
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, attempt int) {
			if attempt > 0 {
				logger.DebugContext(req.Context(), "upstream retry", "upstream", "serpapi", "attempt", attempt+1)
			}
		},
	}
	return c
}

// MaxCallDuration is the longest one Search can take with all its attempts
// and back-off waits; callers use it to bound calls they detach from a
// request.
func (c *Client) MaxCallDuration() time.Duration {
	return time.Duration(c.retries+1)*c.timeout + time.Duration(c.retries)*retryWaitMax
}

// params returns the query parameters of q's search, without api_key.
func params(q patent.SearchQuery) url.Values {
	v := url.Values{
		"engine":   {engine},
		"assignee": {assignee(q.Company)},
		"sort":     {"new"},
		"num":      {strconv.Itoa(pageSize)},
	}
	if !q.Since.IsZero() {
		v.Set("after", "publication:"+q.Since.Format("20060102"))
	}
	return v
}

// assignee is the assignee parameter for a company: SerpApi reads commas
// as separating several assignees, so a name with a comma is wrapped in
// parentheses ("(Tesla, Inc)").
func assignee(company string) string {
	company = strings.TrimSpace(company)
	if strings.Contains(company, ",") {
		return "(" + company + ")"
	}
	return company
}

// Key returns a stable cache key for q: a hex SHA-256 over every query
// parameter Search sends (engine, assignee, after, sort, num) except
// api_key, plus q.Max, which shapes the patent.SearchResult although it is not sent.
func (c *Client) Key(q patent.SearchQuery) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\nmax=%d", keyVersion, params(q).Encode(), max(q.Max, 0))
	return hex.EncodeToString(h.Sum(nil))
}

// Search returns q.Company's patents published since q.Since that have a
// PDF, newest first, at most q.Max, with SerpApi's total count. A search
// that finds nothing is an empty patent.SearchResult, not an error.
//
// Every error wraps ErrUpstream; a 429 for an account out of searches also
// wraps ErrQuota; a cancelled or expired ctx also wraps ctx.Err(). An empty
// Company is refused without a call (wrapping ErrUpstream too). Errors
// never contain the request URL or the API key.
func (c *Client) Search(ctx context.Context, q patent.SearchQuery) (patent.SearchResult, error) {
	if strings.TrimSpace(q.Company) == "" {
		return patent.SearchResult{}, fmt.Errorf("%w: empty company name", ErrUpstream)
	}
	v := params(q)
	v.Set("api_key", c.apiKey)
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/search.json?"+v.Encode(), nil)
	if err != nil {
		return patent.SearchResult{}, fmt.Errorf("%w: build request: %s", ErrUpstream, c.errText(err))
	}
	start := time.Now()
	res, err := c.do(ctx, req, q.Max)
	if err != nil {
		c.logger.DebugContext(ctx, "patent search failed", "upstream", "serpapi", "err", err, "latency_ms", time.Since(start).Milliseconds())
		return patent.SearchResult{}, err
	}
	c.logger.DebugContext(ctx, "patent search answered", "upstream", "serpapi",
		"total_results", res.TotalResults, "patents", len(res.Patents), "latency_ms", time.Since(start).Milliseconds())
	return res, nil
}

// errThrottled marks a 429 that is not about the quota, so CheckRetry
// retries it.
var errThrottled = errors.New("throughput limit exceeded")

// attempt is what the response handler learnt about one response.
type attempt struct {
	resp    *http.Response
	body    []byte // the body read, nil when not read
	readErr error  // reading the body failed
}

// do sends req with retries and maps the final answer. Bodies are read
// inside the retry loop (a response handler), so a connection that breaks
// or stalls mid-body is retried like any network error, and a 429 can be
// told apart (quota or throughput) by its body before the retry decision.
// A body that arrives whole but is not a valid answer is not retried.
func (c *Client) do(ctx context.Context, req *retryablehttp.Request, limit int) (patent.SearchResult, error) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	var last attempt
	req.SetResponseHandler(func(resp *http.Response) error {
		last = attempt{resp: resp}
		defer resp.Body.Close()
		capacity := int64(maxErrorBody)
		if resp.StatusCode == http.StatusOK {
			capacity = maxBody
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, capacity+1))
		if err != nil {
			last.readErr = fmt.Errorf("read body: %w", err)
			return last.readErr
		}
		last.body = b
		if resp.StatusCode == http.StatusTooManyRequests && !isQuota(errorMessage(b)) {
			return errThrottled
		}
		return nil
	})

	resp, err := c.http.Do(req)
	if resp != nil {
		defer func() {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
		}()
	}
	if err != nil && ctx.Err() != nil {
		cerr := ctx.Err()
		prefix := "cancelled"
		if errors.Is(cerr, context.DeadlineExceeded) {
			prefix = "timeout"
		}
		return patent.SearchResult{}, fmt.Errorf("%w: %s: %w", ErrUpstream, prefix, cerr)
	}
	if resp == nil {
		return patent.SearchResult{}, fmt.Errorf("%w: %s", ErrUpstream, c.errText(err))
	}
	var body []byte
	if last.resp == resp {
		if last.readErr != nil {
			return patent.SearchResult{}, fmt.Errorf("%w: %s", ErrUpstream, c.errText(last.readErr))
		}
		body = last.body
	} else {
		// A retried status whose retries are spent: the handler did not
		// see this response.
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		msg := errorMessage(body)
		if isQuota(msg) {
			return patent.SearchResult{}, &quotaError{detail: "status 429: " + c.quote(msg)}
		}
		return patent.SearchResult{}, fmt.Errorf("%w: status 429: throughput limit exceeded: %s", ErrUpstream, c.quote(msg))
	}
	if resp.StatusCode != http.StatusOK {
		return patent.SearchResult{}, fmt.Errorf("%w: status %d: %s", ErrUpstream, resp.StatusCode, c.quote(errorMessage(body)))
	}
	if len(body) > maxBody {
		return patent.SearchResult{}, fmt.Errorf("%w: answer larger than %d bytes", ErrUpstream, maxBody)
	}
	return parseAnswer(body, limit, c.quote)
}

// quotaError is the out-of-searches failure: it matches ErrQuota and
// ErrUpstream.
type quotaError struct{ detail string }

func (e *quotaError) Error() string   { return ErrQuota.Error() + ": " + e.detail }
func (e *quotaError) Unwrap() []error { return []error{ErrQuota, ErrUpstream} }

// isQuota reports whether a 429's message says the account ran out of
// searches (SerpApi: "Your account has run out of searches.").
func isQuota(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "run out of searches")
}

// checkRetry is retryablehttp.DefaultRetryPolicy (network errors, 5xx but
// 501; not context ends, redirect, scheme, header or certificate errors)
// with SerpApi's 429s decided by their body: the response handler reads a
// 429 and returns errThrottled unless it is the quota one.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if errors.Is(err, errThrottled) {
		return true, nil
	}
	if err == nil && resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		return false, nil
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// errText is err's text for an error message: shared/redact's rules, with
// this client's secrets (the API key, the base URL's host) hidden too.
func (c *Client) errText(err error) string { return redact.Text(redact.Error(err), c.secrets...) }

// secrets lists what errors must not show of the client's settings: the
// API key and the base URL's host[:port] and host.
func secrets(apiKey, baseURL string) []string {
	out := []string{apiKey}
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		out = append(out, u.Host, u.Hostname())
	}
	return out
}

// quote prepares an upstream message for an error: cleaned, cut to 200
// bytes, quoted.
func (c *Client) quote(msg string) string {
	msg = strings.Join(strings.Fields(redact.Text(msg, c.secrets...)), " ")
	if msg == "" {
		return "no message"
	}
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "..."
	}
	return strconv.Quote(msg)
}
