package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/shared/redact"
	"github.com/gatewayapis/shared/retry"

	"github.com/hashicorp/go-retryablehttp"
)

// ErrUpstream is wrapped by every failure to get an answer from the gateway:
// network errors and timeouts, 408/429/500/502/503/504 once the retries are
// spent, any other non-200 status, an answer that is not a chat completion,
// a 200 that carries an error, and an answer without content. It is a
// kind of patent.ErrLLMUpstream.
var ErrUpstream = patent.NewKindError(patent.ErrLLMUpstream, "llm gateway failed")

// ErrRejected is wrapped, together with ErrUpstream, by the failures the
// gateway reports as the request's own fault: 400 (bad parameters), 401
// (bad key), 402 (no credits) and 403 (moderation). They are never retried.
var ErrRejected = errors.New("llm gateway rejected the request")

// Attribution headers: OpenRouter shows the calling app by them in its
// rankings; other gateways ignore them.
const (
	AppURL   = "https://github.com/gatewayapis"
	AppTitle = "patentsvc"
)

const (
	maxBody        = 4 << 20 // a long analysis is a few KiB; bodies past this are refused
	maxMessage     = 200     // runes of a gateway error message kept in an error
	retryWaitMin   = 500 * time.Millisecond
	retryWaitMax   = 10 * time.Second
	defaultTimeout = 2 * time.Minute
	userAgent      = "patentsvc/1.0 (+https://github.com/gatewayapis)"
)

// Client calls an OpenAI-compatible chat-completions gateway. It is safe for
// concurrent use.
type Client struct {
	http    *retryablehttp.Client
	baseURL string
	apiKey  string
	logger  *slog.Logger
	timeout time.Duration
	retries int
	// maxAnswer caps the answer's text, in bytes (LLM_MAX_ANSWER_KB).
	maxAnswer int
}

// NewClient returns a client for the gateway at baseURL (e.g.
// https://openrouter.ai/api/v1), authenticating with apiKey. timeout bounds
// each attempt, the answer's body included (0 or less: 2 minutes); retries
// is the number of attempts after the first; maxAnswer is the longest
// answer text returned, in bytes (LLM_MAX_ANSWER_KB; 0 or less:
// patent.DefaultMaxAnswerBytes), a longer one being cut by
// patent.CutAnswer. logger may be nil.
func NewClient(baseURL, apiKey string, timeout time.Duration, retries, maxAnswer int, logger *slog.Logger) *Client {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if maxAnswer <= 0 {
		maxAnswer = patent.DefaultMaxAnswerBytes
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	retries = max(retries, 0)
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment}
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		transport = dt.Clone()
	}
	transport.MaxIdleConnsPerHost = 16
	c := &Client{
		baseURL:   strings.TrimRight(baseURL, "/"),
		apiKey:    apiKey,
		logger:    logger,
		timeout:   timeout,
		retries:   retries,
		maxAnswer: maxAnswer,
	}
	c.http = &retryablehttp.Client{
		// A client span per attempt, under Complete's span.
		HTTPClient:   &http.Client{Timeout: timeout, Transport: observe.TracingTransport(transport)},
		RetryWaitMin: retryWaitMin,
		RetryWaitMax: retryWaitMax,
		RetryMax:     retries,
		CheckRetry:   checkRetry,
		Backoff: func(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
			wait := retry.Backoff(lo, hi, attempt, resp)
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			logger.Debug("llm gateway retry", "attempt", attempt+2, "status", status, "wait_ms", wait.Milliseconds())
			return wait
		},
		// Hand back the last answer so its JSON error body can be read.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		// Logger stays nil: retryablehttp would log every failed attempt at
		// ERROR with the URL; the Backoff above logs retries instead.
	}
	return c
}

// MaxCallDuration is the longest one Complete can take with all its attempts
// and back-off waits; callers use it to bound calls they detach from a
// request.
func (c *Client) MaxCallDuration() time.Duration {
	return time.Duration(c.retries+1)*c.timeout + time.Duration(c.retries)*c.http.RetryWaitMax
}

// Complete sends req and returns the answer.
//
// Failures wrap ErrUpstream; those the gateway blames on the request (400,
// 401, 402, 403) wrap ErrRejected too. When ctx ends first, the error wraps
// ErrUpstream and ctx's error. A request without a model or with a blank
// prompt, or a temperature outside 0 to 2, fails before any call with an
// error that wraps neither. Error texts carry the status and the gateway's
// message (truncated), never the URL or the API key.
//
// The call is a span, "chat <model>" (the OpenTelemetry GenAI conventions):
// model and token counts as attributes, never the prompt or the answer;
// each HTTP attempt is a client span under it.
func (c *Client) Complete(ctx context.Context, req patent.CompletionRequest) (patent.Completion, error) {
	ctx, span := startChat(ctx, req)
	defer span.End()
	out, err := c.complete(ctx, req)
	endChat(span, out, err)
	return out, err
}

func (c *Client) complete(ctx context.Context, req patent.CompletionRequest) (patent.Completion, error) {
	if err := validate(req); err != nil {
		return patent.Completion{}, err
	}
	payload, err := json.Marshal(newChatRequest(req))
	if err != nil {
		return patent.Completion{}, fmt.Errorf("llm: encode request: %w", err)
	}
	hreq, err := c.newRequest(ctx, payload)
	if err != nil {
		return patent.Completion{}, c.fail(ErrUpstream, req.Model, "build request: "+redact.Error(err))
	}

	// The body is read inside the retry loop (a response handler), so a
	// connection that breaks or stalls mid-answer is retried like any
	// network error; an answer that arrives whole but is not valid is not.
	var body []byte
	read := false
	hreq.SetResponseHandler(func(resp *http.Response) error {
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil && resp.StatusCode == http.StatusOK {
			return fmt.Errorf("read answer: %w", err)
		}
		body, read = b, true
		return nil
	})

	start := time.Now()
	resp, err := c.http.Do(hreq)
	if resp != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return patent.Completion{}, c.fail(ErrUpstream, req.Model, redact.Error(err), ctxErr)
		}
		return patent.Completion{}, c.fail(ErrUpstream, req.Model, redact.Error(err))
	}
	if !read {
		// Retries spent on a retryable status: the handler did not run.
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	}
	if len(body) > maxBody {
		return patent.Completion{}, c.fail(ErrUpstream, req.Model, fmt.Sprintf("status %d: answer larger than %d bytes", resp.StatusCode, maxBody))
	}
	if resp.StatusCode != http.StatusOK {
		detail := fmt.Sprintf("status %d", resp.StatusCode)
		if msg := c.gatewayMessage(body); msg != "" {
			detail += ": " + msg
		}
		if rejected(resp.StatusCode) {
			return patent.Completion{}, c.fail(ErrRejected, req.Model, detail)
		}
		return patent.Completion{}, c.fail(ErrUpstream, req.Model, detail)
	}

	comp, err := parseCompletion(body, c.scrub)
	if err != nil {
		return patent.Completion{}, c.fail(ErrUpstream, req.Model, err.Error())
	}
	out := patent.Completion{Text: comp.text, Model: comp.model, PromptTokens: comp.promptTokens, CompletionTokens: comp.completionTokens}
	if out.Model == "" {
		out.Model = req.Model
	}
	out.Text = c.cut(ctx, out.Text, out.Model)
	if comp.finishReason == "length" {
		c.logger.WarnContext(ctx, "llm answer cut at max tokens", "model", out.Model, "max_tokens", req.MaxTokens)
	}
	c.logger.DebugContext(ctx, "llm completion", "model", req.Model, "answered_model", out.Model,
		"prompt_tokens", out.PromptTokens, "completion_tokens", out.CompletionTokens,
		"latency_ms", time.Since(start).Milliseconds())
	return out, nil
}

// cut caps an answer's text at the client's maximum (patent.CutAnswer),
// logging a cut. The cap applies here, where the answer is produced, so
// the LLM cache and the stored analysis get the same text (decisions.md,
// "Both services: hostile input answered, never a 5xx").
func (c *Client) cut(ctx context.Context, text, model string) string {
	out := patent.CutAnswer(text, c.maxAnswer)
	if len(out) < len(text) {
		c.logger.WarnContext(ctx, "llm answer cut at LLM_MAX_ANSWER_KB", "model", model,
			"answer_bytes", len(text), "max_answer_bytes", c.maxAnswer)
	}
	return out
}

// newRequest builds the POST of payload to /chat/completions with the key
// and the attribution headers.
func (c *Client) newRequest(ctx context.Context, payload []byte) (*retryablehttp.Request, error) {
	hreq, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/chat/completions", payload)
	if err != nil {
		return nil, err
	}
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", userAgent)
	hreq.Header.Set("HTTP-Referer", AppURL)
	hreq.Header.Set("X-Title", AppTitle)
	return hreq, nil
}

func validate(r patent.CompletionRequest) error {
	switch {
	case strings.TrimSpace(r.Model) == "":
		return errors.New("llm: request has no model")
	case strings.TrimSpace(r.Prompt) == "":
		return errors.New("llm: request has a blank prompt")
	case math.IsNaN(r.Temperature) || r.Temperature < 0 || r.Temperature > 2:
		return fmt.Errorf("llm: temperature %v outside 0 to 2", r.Temperature)
	case r.MaxTokens < 0:
		return fmt.Errorf("llm: negative max tokens %d", r.MaxTokens)
	}
	return nil
}

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature float64       `json:"temperature"`
	Provider    providerPrefs `json:"provider"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// providerPrefs are OpenRouter's routing preferences. data_collection "deny"
// routes only to providers that do not store or train on prompts: patent
// text sent for analysis is a customer's confidential material. Other
// gateways ignore the field.
type providerPrefs struct {
	DataCollection string `json:"data_collection"`
}

func newChatRequest(r patent.CompletionRequest) chatRequest {
	msgs := make([]chatMessage, 0, 2)
	if r.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: r.System})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: r.Prompt})
	return chatRequest{
		Model:       r.Model,
		Messages:    msgs,
		MaxTokens:   r.MaxTokens,
		Temperature: r.Temperature,
		Provider:    providerPrefs{DataCollection: "deny"},
	}
}

// rejected reports the statuses that blame the request (OpenRouter's error
// table): retrying them cannot help.
func rejected(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden:
		return true
	}
	return false
}

// retryable reports the statuses worth another attempt: OpenRouter's 408
// (timed out), 429 (rate limited), 502 (model down or bad upstream answer)
// and 503 (no provider available now), and the generic 500 and 504.
func retryable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// checkRetry retries network errors (as retryablehttp's default policy
// does: not redirect loops, bad schemes or headers, or untrusted
// certificates), errors reading a 200's body, and the retryable statuses.
// It never retries once ctx has ended.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	return retryable(resp.StatusCode), nil
}

// gatewayError is what Complete returns: its text names the failure, the
// model and the detail; errors.Is matches each of kinds.
type gatewayError struct {
	msg   string
	kinds []error
}

func (e *gatewayError) Error() string   { return e.msg }
func (e *gatewayError) Unwrap() []error { return e.kinds }

// fail builds the error for a failed call. sentinel is ErrUpstream or
// ErrRejected (which also matches ErrUpstream); also holds further errors to
// match, such as ctx's. The text is scrubbed of the API key.
func (c *Client) fail(sentinel error, model, detail string, also ...error) error {
	kinds := []error{sentinel}
	if sentinel != ErrUpstream {
		kinds = append(kinds, ErrUpstream)
	}
	kinds = append(kinds, also...)
	return &gatewayError{msg: c.scrub(sentinel.Error() + ": " + model + ": " + detail), kinds: kinds}
}

// gatewayMessage returns the message of an error answer
// ({"error":{"code","message","metadata"}}), cleaned, scrubbed and
// truncated, or "" when the body has none.
func (c *Client) gatewayMessage(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	msg, ok := apiErrorMessage(env.Error)
	if !ok {
		return ""
	}
	return quoteMessage(c.scrub(msg))
}

// scrub hides, in gateway text, URLs, the API key and anything shaped like
// a key (shared/redact's rules, bound to this client's key: parseCompletion
// takes it as a function).
func (c *Client) scrub(s string) string { return redact.Text(s, c.apiKey) }
