package vpic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/time/rate"

	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/retry"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// ErrUpstream is wrapped by every failure to get an answer from vPIC. It
// is of the domain kind vin.ErrUpstream: errors.Is matches either.
var ErrUpstream = vin.NewKindError(vin.ErrUpstream, "upstream failure")

// MaxBatch is the most VINs vPIC takes in one batch call.
const MaxBatch = 50

// ProbeVIN is decoded by Ping: a real, clean VIN (2003 Honda Accord).
const ProbeVIN = "1HGCM82633A004352"

const (
	maxBody      = 4 << 20 // a 50-VIN batch answer is about 150 KiB
	retryWaitMin = 250 * time.Millisecond
	retryWaitMax = 4 * time.Second
	userAgent    = "vinsvc/1.0 (+https://github.com/gatewayapis)"
)

// Client calls vPIC. It is safe for concurrent use.
type Client struct {
	http    *retryablehttp.Client
	baseURL string
	logger  *slog.Logger
	metrics *Metrics
	timeout time.Duration
	retries int
}

// Pacer makes an attempt wait for its turn. *rate.Limiter implements it
// for one process; the cluster's pacer (package cluster) for every replica.
type Pacer interface {
	Wait(ctx context.Context) error
}

// Option configures a Client.
type Option func(*clientOptions)

type clientOptions struct {
	pacer Pacer
	wrap  func(http.RoundTripper) http.RoundTripper
}

// WithPacer replaces the client's own pacer (maxRPS for this process) with
// p, e.g. one shared by every replica.
func WithPacer(p Pacer) Option { return func(o *clientOptions) { o.pacer = p } }

// WithTransport wraps the transport of every attempt, inside the pacer (a
// wrapper sees the network call, not the wait for its turn): e.g.
// observe.TracingTransport, one client span per attempt.
func WithTransport(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(o *clientOptions) { o.wrap = wrap }
}

// NewClient returns a client for the vPIC API at baseURL (e.g.
// https://vpic.nhtsa.dot.gov/api/vehicles). timeout bounds each attempt,
// retries is the number of attempts after the first, and maxRPS caps the
// attempts per second this client makes (unless WithPacer paces it).
// metrics may be nil.
func NewClient(baseURL string, timeout time.Duration, retries int, maxRPS float64, logger *slog.Logger, metrics *Metrics, opts ...Option) *Client {
	o := clientOptions{pacer: rate.NewLimiter(rate.Limit(maxRPS), 1)}
	for _, opt := range opts {
		opt(&o)
	}
	transport := cleanhttp.DefaultPooledTransport()
	transport.MaxIdleConnsPerHost = 16
	var next http.RoundTripper = transport
	if o.wrap != nil {
		next = o.wrap(next)
	}
	hc := &http.Client{
		Timeout:   timeout,
		Transport: &pacedTransport{next: next, pacer: o.pacer},
	}
	c := &Client{
		baseURL: strings.TrimRight(baseURL, "/"),
		logger:  logger,
		metrics: metrics,
		timeout: timeout,
		retries: retries,
	}
	c.http = &retryablehttp.Client{
		HTTPClient:   hc,
		RetryWaitMin: retryWaitMin,
		RetryWaitMax: retryWaitMax,
		RetryMax:     retries,
		CheckRetry:   retryablehttp.DefaultRetryPolicy,
		Backoff:      retry.Backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, attempt int) {
			if attempt > 0 {
				c.metrics.retry(opFromContext(req.Context()))
				logger.DebugContext(req.Context(), "upstream retry", "operation", opFromContext(req.Context()), "attempt", attempt+1)
			}
		},
	}
	return c
}

// MaxCallDuration is the longest one call can take with all its attempts
// and back-off waits; callers use it to bound calls they detach from a
// request.
func (c *Client) MaxCallDuration() time.Duration {
	return time.Duration(c.retries+1)*c.timeout + time.Duration(c.retries)*retryWaitMax
}

// Decode decodes one VIN with DecodeVinValues.
func (c *Client) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	u := c.baseURL + "/DecodeVinValues/" + url.PathEscape(v) + "?format=json"
	req, err := retryablehttp.NewRequestWithContext(withOp(ctx, opDecode), http.MethodGet, u, nil)
	if err != nil {
		return vin.Decoded{}, fmt.Errorf("%w: decode: build request: %v", ErrUpstream, redact.Error(err))
	}
	recs, err := c.do(req, opDecode)
	if err != nil {
		return vin.Decoded{}, err
	}
	if len(recs) != 1 {
		// Not fatal: vPIC's Count and shape have drifted before. Use the
		// first record that is for this VIN, else the first.
		c.logger.WarnContext(ctx, "upstream answered several records for one vin", "records", len(recs))
	}
	rec := recs[0]
	for _, r := range recs {
		if r.echoedVIN == v {
			rec = r
			break
		}
	}
	return rec.decoded(v)
}

// DecodeBatch decodes up to MaxBatch VINs in one DecodeVINValuesBatch call.
// It returns one Outcome per input VIN in input order.
func (c *Client) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	if len(vins) == 0 || len(vins) > MaxBatch {
		return nil, fmt.Errorf("vpic batch: %d vins, want 1 to %d", len(vins), MaxBatch)
	}
	form := url.Values{"DATA": {strings.Join(vins, ";")}, "format": {"json"}}
	req, err := retryablehttp.NewRequestWithContext(withOp(ctx, opBatch), http.MethodPost,
		c.baseURL+"/DecodeVINValuesBatch/", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: batch: build request: %v", ErrUpstream, redact.Error(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	recs, err := c.do(req, opBatch)
	if err != nil {
		return nil, err
	}
	return matchBatch(vins, recs), nil
}

// matchBatch pairs answers with the VINs asked for. vPIC answers in input
// order and echoes each VIN; pairing by the echo is tried first, then by
// position when the counts agree.
func matchBatch(vins []string, recs []record) []vin.Outcome {
	byVIN := make(map[string]record, len(recs))
	for _, r := range recs {
		if _, dup := byVIN[r.echoedVIN]; !dup {
			byVIN[r.echoedVIN] = r
		}
	}
	outs := make([]vin.Outcome, len(vins))
	for i, v := range vins {
		r, ok := byVIN[v]
		if !ok && len(recs) == len(vins) && recs[i].echoedVIN == "" {
			r, ok = recs[i], true
		}
		if !ok {
			outs[i].Err = fmt.Errorf("%w: batch answer has no record for %s", ErrUpstream, v)
			continue
		}
		d, err := r.decoded(v)
		outs[i] = vin.Outcome{Decoded: d, Err: err}
	}
	return outs
}

// Ping decodes ProbeVIN and reports whether vPIC answered usefully.
func (c *Client) Ping(ctx context.Context) error {
	u := c.baseURL + "/DecodeVinValues/" + ProbeVIN + "?format=json"
	req, err := retryablehttp.NewRequestWithContext(withOp(ctx, opProbe), http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: probe: build request: %v", ErrUpstream, redact.Error(err))
	}
	recs, err := c.do(req, opProbe)
	if err != nil {
		return err
	}
	_, err = recs[0].decoded(ProbeVIN)
	return err
}

// do sends req with retries and returns the envelope's records. The body of
// a 200 is read inside the retry loop (a response handler), so a connection
// that breaks or stalls mid-body is retried like any network error; a body
// that arrives whole but is not a valid answer is not retried.
func (c *Client) do(req *retryablehttp.Request, op string) (recs []record, err error) {
	start := time.Now()
	outcome := outcomeOK
	defer func() { c.metrics.observe(op, outcome, time.Since(start)) }()

	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	var body []byte
	req.SetResponseHandler(func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return nil // reported below, after the retry policy has had its say
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		body = b
		return nil
	})
	resp, err := c.http.Do(req)
	if err != nil {
		outcome = outcomeNetwork
		return nil, fmt.Errorf("%w: %s: %s", ErrUpstream, op, redact.Error(err))
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		outcome = outcomeStatus
		return nil, fmt.Errorf("%w: %s: status %d", ErrUpstream, op, resp.StatusCode)
	}
	if len(body) > maxBody {
		outcome = outcomeBadAnswer
		return nil, fmt.Errorf("%w: %s: answer larger than %d bytes", ErrUpstream, op, maxBody)
	}
	recs, err = parseEnvelope(body)
	if err != nil {
		outcome = outcomeBadAnswer
		return nil, fmt.Errorf("%w: %s: %v", ErrUpstream, op, err)
	}
	return recs, nil
}

// pacedTransport makes every attempt wait for the pacer first.
type pacedTransport struct {
	next  http.RoundTripper
	pacer Pacer
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.pacer.Wait(req.Context()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("waiting for upstream pacing: %w", err)
	}
	return t.next.RoundTrip(req)
}

// compact returns b without insignificant white space.
func compact(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return bytes.Clone(b)
	}
	return buf.Bytes()
}
