package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/llm"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/testkit/syncbuf"
)

// testKey looks like an OpenRouter key; no error or log line may show it.
const testKey = "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"

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newClient returns a client whose back-off waits are a few milliseconds,
// so retry tests run fast; TestRetryAfter and TestMaxCallDuration cover the
// waits themselves.
func newClient(baseURL string, timeout time.Duration, retries int) *llm.Client {
	c := llm.NewClient(baseURL, testKey, timeout, retries, 0, discardLogger())
	llm.SetRetryWaits(c, time.Millisecond, 20*time.Millisecond)
	return c
}

// newServer starts an httptest server for odd upstream behaviours.
func newServer(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

func hostOf(tb testing.TB, rawURL string) string {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatalf("url.Parse(%q): %v", rawURL, err)
	}
	return u.Host
}

func testRequest() patent.CompletionRequest {
	return patent.CompletionRequest{
		Model:       "openai/gpt-4o-mini",
		System:      "You are a patent analyst. Answer in English.",
		Prompt:      "Analyse these patents of Acme Robotics: US11734097B1 Soft gripper with force sensing; US11800001B2 Grasp planning.",
		MaxTokens:   1500,
		Temperature: 0.3,
	}
}

// fixtureContent is the trimmed content of a fixture's first choice.
func fixtureContent(tb testing.TB, name string) string {
	tb.Helper()
	var v struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(llmtest.Fixture(name)), &v); err != nil || len(v.Choices) == 0 {
		tb.Fatalf("fixture %s: %v", name, err)
	}
	return strings.TrimSpace(v.Choices[0].Message.Content)
}

func TestCompleteRequest(t *testing.T) {
	t.Parallel()
	full := testRequest()
	bare := patent.CompletionRequest{Model: "mistralai/mistral-nemo", Prompt: "p"}
	for _, tt := range []struct {
		name     string
		req      patent.CompletionRequest
		trailing string
		want     map[string]any
	}{
		{"full request", full, "", map[string]any{
			"model": full.Model,
			"messages": []any{
				map[string]any{"role": "system", "content": full.System},
				map[string]any{"role": "user", "content": full.Prompt},
			},
			"max_tokens":  1500.0,
			"temperature": 0.3,
			"provider":    map[string]any{"data_collection": "deny"},
		}},
		{"no system, no max tokens, temperature 0, base url with slash", bare, "/", map[string]any{
			"model":       bare.Model,
			"messages":    []any{map[string]any{"role": "user", "content": "p"}},
			"temperature": 0.0,
			"provider":    map[string]any{"data_collection": "deny"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			c := newClient(fake.BaseURL()+tt.trailing, 5*time.Second, 0)
			if _, err := c.Complete(t.Context(), tt.req); err != nil {
				t.Fatalf("Complete() error = %v, want nil", err)
			}
			calls := fake.Calls()
			if len(calls) != 1 {
				t.Fatalf("Complete() made %d calls, want 1", len(calls))
			}
			call := calls[0]
			if call.Method != http.MethodPost || call.Path != llmtest.Path {
				t.Errorf("Complete() sent %s %s, want POST %s", call.Method, call.Path, llmtest.Path)
			}
			for name, want := range map[string]string{
				"Authorization": "Bearer " + testKey,
				"Content-Type":  "application/json",
				"Accept":        "application/json",
				"HTTP-Referer":  llm.AppURL,
				"X-Title":       llm.AppTitle,
			} {
				if got := call.Header.Get(name); got != want {
					t.Errorf("Complete() header %s = %q, want %q", name, got, want)
				}
			}
			if ua := call.Header.Get("User-Agent"); !strings.HasPrefix(ua, "patentsvc/") {
				t.Errorf("Complete() User-Agent = %q, want a patentsvc/ agent", ua)
			}
			var got map[string]any
			if err := json.Unmarshal(call.Body, &got); err != nil {
				t.Fatalf("request body %q is not JSON: %v", call.Body, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Complete() body = %v, want %v", got, tt.want)
			}
			if call.DecodeErr != "" || call.Request.Provider == nil || call.Request.Provider.DataCollection != "deny" {
				t.Errorf("fake decoded %+v (err %q), want provider.data_collection deny", call.Request, call.DecodeErr)
			}
		})
	}
}

func TestCompleteDefaultAnswer(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	req := testRequest()
	got, err := c.Complete(t.Context(), req)
	if err != nil {
		t.Fatalf("Complete() error = %v, want nil", err)
	}
	want := patent.Completion{
		Text:             llmtest.Answer(req.Prompt),
		Model:            req.Model,
		PromptTokens:     llmtest.Tokens(req.System) + llmtest.Tokens(req.Prompt),
		CompletionTokens: llmtest.Tokens(llmtest.Answer(req.Prompt)),
	}
	if got != want {
		t.Errorf("Complete() = %+v, want %+v", got, want)
	}
	if got.PromptTokens == 0 || got.CompletionTokens == 0 {
		t.Errorf("Complete() usage = %d/%d, want both > 0", got.PromptTokens, got.CompletionTokens)
	}

	again, err := c.Complete(t.Context(), req)
	if err != nil || again.Text != got.Text {
		t.Errorf("Complete() again = %q, %v; want the same text %q", again.Text, err, got.Text)
	}
	other := req
	other.Prompt += " And US11999999B1."
	diff, err := c.Complete(t.Context(), other)
	if err != nil || diff.Text == got.Text {
		t.Errorf("Complete(other prompt) = %q, %v; want a different text", diff.Text, err)
	}
}

func TestCompleteAnsweredModel(t *testing.T) {
	t.Parallel()
	const fallback = "anthropic/claude-sonnet-4.5"
	for _, tt := range []struct {
		name  string
		setup func(*llmtest.Server)
		want  string
	}{
		{"echoes the requested model", func(*llmtest.Server) {}, "openai/gpt-4o-mini"},
		{"fallback model", func(s *llmtest.Server) { s.SetAnsweredModel(fallback) }, fallback},
		{"recorded fallback answer", func(s *llmtest.Server) {
			s.Script(llmtest.Reply{Body: llmtest.Fixture("success_fallback.json")})
		}, "google/gemini-2.5-flash"},
		{"answer without a model", func(s *llmtest.Server) {
			s.Script(llmtest.Reply{Body: `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`})
		}, "openai/gpt-4o-mini"},
		{"answer with a null model", func(s *llmtest.Server) {
			s.Script(llmtest.Reply{Body: `{"model":null,"choices":[{"message":{"content":"ok"}}]}`})
		}, "openai/gpt-4o-mini"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			tt.setup(fake)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			got, err := c.Complete(t.Context(), testRequest())
			if err != nil {
				t.Fatalf("Complete() error = %v, want nil", err)
			}
			if got.Model != tt.want {
				t.Errorf("Complete() Model = %q, want %q", got.Model, tt.want)
			}
		})
	}
}

func TestCompleteParsing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		body string
		want patent.Completion
	}{
		{"recorded answer", llmtest.Fixture("success.json"), patent.Completion{
			Text: fixtureContent(t, "success.json"), Model: "openai/gpt-4o-mini", PromptTokens: 1184, CompletionTokens: 212,
		}},
		{"recorded fallback answer", llmtest.Fixture("success_fallback.json"), patent.Completion{
			Text: fixtureContent(t, "success_fallback.json"), Model: "google/gemini-2.5-flash", PromptTokens: 902, CompletionTokens: 23,
		}},
		{"built answer", llmtest.Completion("meta-llama/llama-3.3-70b-instruct", "text", 10, 2), patent.Completion{
			Text: "text", Model: "meta-llama/llama-3.3-70b-instruct", PromptTokens: 10, CompletionTokens: 2,
		}},
		{"white space trimmed", `{"model":"m/x","choices":[{"message":{"content":"\n\n  answer \n"}}]}`, patent.Completion{
			Text: "answer", Model: "m/x",
		}},
		{"content parts", `{"model":"m/x","choices":[{"message":{"content":[{"type":"text","text":"a "},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]}}]}`, patent.Completion{
			Text: "a b", Model: "m/x",
		}},
		{"no usage", `{"model":"m/x","choices":[{"message":{"content":"x"}}]}`, patent.Completion{Text: "x", Model: "m/x"}},
		{"odd usage", `{"model":"m/x","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":-3,"completion_tokens":"7"}}`, patent.Completion{Text: "x", Model: "m/x"}},
		{"fractional and huge usage", `{"model":"m/x","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1.5,"completion_tokens":1e300}}`, patent.Completion{Text: "x", Model: "m/x"}},
		{"cut at max tokens", `{"model":"m/x","choices":[{"finish_reason":"length","message":{"content":"partial"}}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`, patent.Completion{
			Text: "partial", Model: "m/x", PromptTokens: 5, CompletionTokens: 9,
		}},
		{"null error fields and unknown fields", `{"error":null,"extra":[1,2],"model":"m/x","choices":[{"error":null,"message":{"content":"x","tool_calls":[]}},{"message":{"content":"second"}}]}`, patent.Completion{
			Text: "x", Model: "m/x",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Body: tt.body})
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			got, err := c.Complete(t.Context(), testRequest())
			if err != nil {
				t.Fatalf("Complete() error = %v, want nil", err)
			}
			if got != tt.want {
				t.Errorf("Complete() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStatuses: with two retries allowed and the status scripted three
// times, retryable statuses are tried three times and the others once.
func TestStatuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status    int
		wantCalls int
		rejected  bool
		wantMsg   string
	}{
		{400, 1, true, "is not a valid model ID"},
		{401, 1, true, "No auth credentials found"},
		{402, 1, true, "requires more credits"},
		{403, 1, true, `flagged for \"violence\"`},
		{404, 1, false, "No endpoints found matching your data policy"},
		{408, 3, false, "Request timed out"},
		{429, 3, false, "Rate limit exceeded: free-models-per-min"},
		{500, 3, false, "Internal Server Error"},
		{501, 1, false, "Not Implemented"},
		{502, 3, false, "Provider returned error (provider Together): upstream connect error"},
		{503, 3, false, "No allowed providers are available"},
		{504, 3, false, "Gateway Timeout"},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Status: tt.status}, llmtest.Reply{Status: tt.status}, llmtest.Reply{Status: tt.status})
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			_, err := c.Complete(t.Context(), testRequest())
			if !errors.Is(err, llm.ErrUpstream) {
				t.Fatalf("Complete() after %d error = %v, want ErrUpstream", tt.status, err)
			}
			if got := errors.Is(err, llm.ErrRejected); got != tt.rejected {
				t.Errorf("errors.Is(%v, ErrRejected) = %v, want %v", err, got, tt.rejected)
			}
			for _, want := range []string{fmt.Sprintf("status %d", tt.status), tt.wantMsg, "openai/gpt-4o-mini"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Complete() error = %q, want it to contain %q", err, want)
				}
			}
			if n := fake.CallCount(); n != tt.wantCalls {
				t.Errorf("Complete() after %d made %d calls, want %d", tt.status, n, tt.wantCalls)
			}
		})
	}
}

// TestRetryThenSuccess: each retryable status is followed by a second
// attempt, which succeeds.
func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	for _, status := range []int{408, 429, 500, 502, 503, 504} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Status: status})
			c := newClient(fake.BaseURL(), 5*time.Second, 1)
			req := testRequest()
			got, err := c.Complete(t.Context(), req)
			if err != nil {
				t.Fatalf("Complete() after one %d error = %v, want nil (retried)", status, err)
			}
			if got.Text != llmtest.Answer(req.Prompt) {
				t.Errorf("Complete() Text = %q, want the default answer", got.Text)
			}
			calls := fake.Calls()
			if len(calls) != 2 {
				t.Fatalf("Complete() made %d calls, want 2", len(calls))
			}
			if !bytes.Equal(calls[0].Body, calls[1].Body) || calls[1].Header.Get("Authorization") != "Bearer "+testKey {
				t.Errorf("retry sent body %q with auth %v, want the first body %q and the key again", calls[1].Body, calls[1].HasHeader("Authorization"), calls[0].Body)
			}
		})
	}
}

func TestRetryCounts(t *testing.T) {
	t.Parallel()
	r := func(status int) llmtest.Reply { return llmtest.Reply{Status: status} }
	for _, tt := range []struct {
		name         string
		retries      int
		replies      []llmtest.Reply
		wantErr      bool
		wantRejected bool
		wantCalls    int
	}{
		{"no retries", 0, []llmtest.Reply{r(503)}, true, false, 1},
		{"retries spent", 3, []llmtest.Reply{r(503), r(429), r(502), r(408), r(503)}, true, false, 4},
		{"three failures then success", 3, []llmtest.Reply{r(503), r(429), r(502)}, false, false, 4},
		{"retryable then rejected", 5, []llmtest.Reply{r(429), r(502), r(401)}, true, true, 3},
		{"retryable then 404", 5, []llmtest.Reply{r(503), r(404)}, true, false, 2},
		{"negative retries are none", -2, []llmtest.Reply{r(503)}, true, false, 1},
		{"200 with an error is not retried", 3, []llmtest.Reply{{Body: llmtest.Fixture("error_200_choice.json")}}, true, false, 1},
		{"empty content is not retried", 3, []llmtest.Reply{{Body: llmtest.Fixture("empty_content.json")}}, true, false, 1},
		{"garbage is not retried", 3, []llmtest.Reply{{Body: "<html>Bad gateway</html>", ContentType: "text/html"}}, true, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(tt.replies...)
			c := newClient(fake.BaseURL(), 5*time.Second, tt.retries)
			_, err := c.Complete(t.Context(), testRequest())
			if tt.wantErr != (err != nil) {
				t.Fatalf("Complete() error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, llm.ErrUpstream) {
				t.Errorf("Complete() error = %v, want ErrUpstream", err)
			}
			if got := errors.Is(err, llm.ErrRejected); got != tt.wantRejected {
				t.Errorf("errors.Is(%v, ErrRejected) = %v, want %v", err, got, tt.wantRejected)
			}
			if n := fake.CallCount(); n != tt.wantCalls {
				t.Errorf("Complete() made %d calls, want %d", n, tt.wantCalls)
			}
		})
	}
}

// TestRetryAfter: a Retry-After on 429 and 503 sets the wait, up to the
// maximum; other statuses use the (here tiny) back-off.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	// One real wait of a second; TestBackoff covers 503, HTTP dates and the
	// other forms without waiting.
	for _, tt := range []struct {
		name    string
		reply   llmtest.Reply
		maxWait time.Duration // the client's RetryWaitMax
		minGap  time.Duration
		maxGap  time.Duration
	}{
		{"seconds on 429", llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, 5 * time.Second, 950 * time.Millisecond, 4 * time.Second},
		{"capped at the maximum", llmtest.Reply{Status: 503, Header: http.Header{"Retry-After": {"3600"}}}, 100 * time.Millisecond, 0, 3 * time.Second},
		{"ignored on 502", llmtest.Reply{Status: 502, Header: http.Header{"Retry-After": {"30"}}}, 10 * time.Second, 0, 3 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(tt.reply)
			c := llm.NewClient(fake.BaseURL(), testKey, 5*time.Second, 1, 0, discardLogger())
			llm.SetRetryWaits(c, time.Millisecond, tt.maxWait)
			if _, err := c.Complete(t.Context(), testRequest()); err != nil {
				t.Fatalf("Complete() error = %v, want nil", err)
			}
			calls := fake.Calls()
			if len(calls) != 2 {
				t.Fatalf("Complete() made %d calls, want 2", len(calls))
			}
			if gap := calls[1].At.Sub(calls[0].At); gap < tt.minGap || gap > tt.maxGap {
				t.Errorf("Complete() retried after %v, want %v to %v", gap, tt.minGap, tt.maxGap)
			}
		})
	}
}

// TestFailuresInside200: once generation has started, OpenRouter reports
// failures inside a 200. Each is ErrUpstream (not ErrRejected), tried once.
func TestFailuresInside200(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		body    string
		wantMsg []string
	}{
		{"error on the choice", llmtest.Fixture("error_200_choice.json"), []string{"gateway reported an error", "Provider returned error (provider Together): model stream ended unexpectedly"}},
		{"top-level error", llmtest.Fixture("error_200_body.json"), []string{"gateway reported an error", "Internal Server Error"}},
		{"top-level error beside choices", `{"error":{"code":502,"message":"upstream died"},"choices":[{"message":{"content":"half"}}]}`, []string{"upstream died"}},
		{"error as a string", `{"error":"overloaded","choices":[]}`, []string{"overloaded"}},
		{"error without message", `{"error":{"code":429}}`, []string{"unspecified error (code 429)"}},
		{"empty content", llmtest.Fixture("empty_content.json"), []string{"answer has no content"}},
		{"null content", `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":null}}]}`, []string{"no content", "finish reason \"stop\""}},
		{"white-space content", `{"choices":[{"message":{"content":" \n\t "}}]}`, []string{"no content"}},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."}}]}`, []string{"no content", "refusal \"I can't help with that.\""}},
		{"no message", `{"choices":[{"finish_reason":"content_filter"}]}`, []string{"no content", "content_filter"}},
		{"empty choices", `{"id":"gen-1","choices":[],"usage":{"prompt_tokens":3}}`, []string{"answer has no choices"}},
		{"no choices", `{"id":"gen-1","object":"chat.completion"}`, []string{"answer has no choices"}},
		{"null choice", `{"choices":[null]}`, []string{"not a chat completion"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Body: tt.body})
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			_, err := c.Complete(t.Context(), testRequest())
			if !errors.Is(err, llm.ErrUpstream) || errors.Is(err, llm.ErrRejected) {
				t.Fatalf("Complete() error = %v, want ErrUpstream and not ErrRejected", err)
			}
			for _, want := range tt.wantMsg {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Complete() error = %q, want it to contain %q", err, want)
				}
			}
			if n := fake.CallCount(); n != 1 {
				t.Errorf("Complete() made %d calls, want 1", n)
			}
		})
	}
}

func TestGarbage(t *testing.T) {
	t.Parallel()
	success := llmtest.Fixture("success.json")
	for _, tt := range []struct {
		name string
		body string
		ct   string
	}{
		{"html page", "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"},
		{"truncated json", success[:len(success)/2], ""},
		{"truncated at the last byte", strings.TrimSpace(success)[:len(strings.TrimSpace(success))-1], ""},
		{"white space", " \n ", ""},
		{"null", "null", ""},
		{"array", "[]", ""},
		{"number", "42", ""},
		{"string", `"ok"`, ""},
		{"plain text", "upstream error", "text/plain"},
		{"choices of the wrong type", `{"choices":"x"}`, ""},
		{"message of the wrong type", `{"choices":[{"message":"x"}]}`, ""},
		{"invalid utf-8", "{\"choices\":[{\"message\":{\"content\":\"\xff\xfe\"}}]", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Body: tt.body, ContentType: tt.ct})
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			_, err := c.Complete(t.Context(), testRequest())
			if !errors.Is(err, llm.ErrUpstream) || errors.Is(err, llm.ErrRejected) {
				t.Errorf("Complete() error = %v, want ErrUpstream and not ErrRejected", err)
			}
			if n := fake.CallCount(); n != 1 {
				t.Errorf("Complete() made %d calls, want 1", n)
			}
		})
	}
	t.Run("empty body", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
		})
		c := newClient(srv.URL, 5*time.Second, 0)
		_, err := c.Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrUpstream) || !strings.Contains(err.Error(), "empty answer") {
			t.Errorf("Complete() error = %v, want ErrUpstream naming an empty answer", err)
		}
	})
	t.Run("error status with an html body", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.Script(llmtest.Reply{Status: 403, Body: "<html>Cloudflare: access denied</html>", ContentType: "text/html"})
		c := newClient(fake.BaseURL(), 5*time.Second, 0)
		_, err := c.Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrRejected) || !strings.HasSuffix(err.Error(), "status 403") {
			t.Errorf("Complete() error = %v, want ErrRejected ending in the bare status", err)
		}
	})
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		status  int
		size    int
		wantErr bool
	}{
		{"1 MiB answer", 200, 1 << 20, false},
		{"answer just over 4 MiB", 200, 4<<20 + 1, true},
		{"error body over 4 MiB", 502, 4 << 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			// Built by hand: encoding megabytes under -race is slow.
			body := `{"model":"openai/gpt-4o-mini","choices":[{"message":{"content":"` + strings.Repeat("a", tt.size) + `"}}]}`
			if tt.status != 200 {
				body = `{"error":{"code":502,"message":"` + strings.Repeat("b", tt.size) + `"}}`
			}
			fake.Script(llmtest.Reply{Status: tt.status, Body: body})
			c := newClient(fake.BaseURL(), time.Minute, 0) // megabytes under -race on a busy machine
			got, err := c.Complete(t.Context(), testRequest())
			if tt.wantErr {
				if !errors.Is(err, llm.ErrUpstream) || !strings.Contains(err.Error(), "larger than") {
					t.Errorf("Complete() error = %v, want ErrUpstream about the size", err)
				}
				return
			}
			// Accepted, and then cut to the cap on the answer's text (the
			// default, 256 KiB): the two bounds are apart.
			if err != nil || len(got.Text) != patent.DefaultMaxAnswerBytes || !strings.HasSuffix(got.Text, patent.AnswerTruncated) {
				t.Errorf("Complete() = %d bytes, %v; want %d bytes ending %q", len(got.Text), err, patent.DefaultMaxAnswerBytes, patent.AnswerTruncated)
			}
		})
	}
}

// hangUp is an upstream that closes every connection without answering.
func hangUp(tb testing.TB) (srv *httptest.Server, calls *atomic.Int32) {
	tb.Helper()
	calls = new(atomic.Int32)
	srv = newServer(tb, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			tb.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	})
	return srv, calls
}

// closedURL returns the URL of a server that is no longer listening.
func closedURL(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// firstThenFake answers the first request with first and the others with
// the fake.
func firstThenFake(t *testing.T, first http.HandlerFunc) (baseURL string, calls *atomic.Int32) {
	t.Helper()
	fake := llmtest.New(t)
	calls = new(atomic.Int32)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			first(w, r)
			return
		}
		fake.Config.Handler.ServeHTTP(w, r)
	})
	return srv.URL + "/api/v1", calls
}

func TestNetworkErrors(t *testing.T) {
	t.Parallel()
	t.Run("connection closed", func(t *testing.T) {
		t.Parallel()
		srv, calls := hangUp(t)
		c := newClient(srv.URL, 5*time.Second, 2)
		_, err := c.Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrUpstream) || errors.Is(err, llm.ErrRejected) {
			t.Errorf("Complete() error = %v, want ErrUpstream", err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("Complete() made %d attempts, want 3", n)
		}
	})
	t.Run("connection closed then answer", func(t *testing.T) {
		t.Parallel()
		base, calls := firstThenFake(t, func(w http.ResponseWriter, r *http.Request) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		})
		c := newClient(base, 5*time.Second, 1)
		if _, err := c.Complete(t.Context(), testRequest()); err != nil {
			t.Errorf("Complete() error = %v, want nil after a retry", err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("Complete() made %d attempts, want 2", n)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		c := newClient(closedURL(t), 5*time.Second, 1)
		if _, err := c.Complete(t.Context(), testRequest()); !errors.Is(err, llm.ErrUpstream) {
			t.Errorf("Complete() error = %v, want ErrUpstream", err)
		}
	})
}

// TestRetryBrokenBody: a connection that breaks or stalls while the answer's
// body is read is retried like any network error.
func TestRetryBrokenBody(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		first http.HandlerFunc
	}{
		{"connection closed mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "5000")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"id":"gen-1","choices":[{"message":{"content":"The filings`)
			// Returning short of Content-Length closes the connection.
		}},
		{"body stalls past the timeout", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"id":"gen-1","choices":[`)
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base, calls := firstThenFake(t, tt.first)
			c := newClient(base, time.Second, 1)
			req := testRequest()
			got, err := c.Complete(t.Context(), req)
			if err != nil || got.Text != llmtest.Answer(req.Prompt) {
				t.Errorf("Complete() = %q, %v; want the default answer after a retry", got.Text, err)
			}
			if n := calls.Load(); n != 2 {
				t.Errorf("Complete() made %d attempts, want 2", n)
			}
		})
	}
	t.Run("broken every time", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Header().Set("Content-Length", "5000")
			io.WriteString(w, `{"choices":[`)
		})
		c := newClient(srv.URL, 5*time.Second, 2)
		_, err := c.Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrUpstream) || !strings.Contains(err.Error(), "read answer") {
			t.Errorf("Complete() error = %v, want ErrUpstream naming the read", err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("Complete() made %d attempts, want 3", n)
		}
	})
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	t.Run("slow answer", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 300*time.Millisecond, 0)
		start := time.Now()
		_, err := c.Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrUpstream) || errors.Is(err, llm.ErrRejected) {
			t.Fatalf("Complete() error = %v, want ErrUpstream", err)
		}
		if !strings.Contains(err.Error(), "timeout") {
			t.Errorf("Complete() error = %q, want it to say timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Complete() took %v, want about the 300ms timeout", d)
		}
	})
	t.Run("slow answers retried", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 300*time.Millisecond, 1)
		if _, err := c.Complete(t.Context(), testRequest()); !errors.Is(err, llm.ErrUpstream) {
			t.Errorf("Complete() error = %v, want ErrUpstream", err)
		}
		if n := fake.CallCount(); n != 2 {
			t.Errorf("Complete() made %d calls, want 2", n)
		}
	})
	t.Run("slow answer then fast", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.Script(llmtest.Reply{Delay: 10 * time.Second})
		c := newClient(fake.BaseURL(), time.Second, 1)
		if _, err := c.Complete(t.Context(), testRequest()); err != nil {
			t.Errorf("Complete() error = %v, want nil after a retry", err)
		}
		if n := fake.CallCount(); n != 2 {
			t.Errorf("Complete() made %d calls, want 2", n)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Complete(ctx, testRequest())
		if !errors.Is(err, llm.ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Complete() error = %v, want ErrUpstream and DeadlineExceeded", err)
		}
		if err != nil && !strings.Contains(err.Error(), "timeout") {
			t.Errorf("Complete() error = %q, want it to say timeout", err)
		}
		if n := fake.CallCount(); n > 1 {
			t.Errorf("Complete() made %d calls, want at most 1 (no retry after the deadline)", n)
		}
	})
}

func TestMaxCallDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		timeout time.Duration
		retries int
		want    time.Duration
	}{
		// 3 attempts of 2s and 2 back-off waits of at most 10s.
		{2 * time.Second, 2, 26 * time.Second},
		{time.Second, 0, time.Second},
		{0, 0, 2 * time.Minute},
		{time.Second, -1, time.Second},
	} {
		c := llm.NewClient("http://127.0.0.1:1", testKey, tt.timeout, tt.retries, 0, nil)
		if got := c.MaxCallDuration(); got != tt.want {
			t.Errorf("NewClient(%v, %d).MaxCallDuration() = %v, want %v", tt.timeout, tt.retries, got, tt.want)
		}
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, err error, start time.Time) {
		t.Helper()
		if !errors.Is(err, context.Canceled) || !errors.Is(err, llm.ErrUpstream) || errors.Is(err, llm.ErrRejected) {
			t.Errorf("Complete() with a cancelled context error = %v, want context.Canceled and ErrUpstream", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Complete() returned %v after cancellation, want promptly", d)
		}
	}
	t.Run("during an attempt", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Complete(ctx, testRequest())
		check(t, err, start)
		if n := fake.CallCount(); n != 1 {
			t.Errorf("Complete() made %d calls, want 1 (no retry after cancellation)", n)
		}
	})
	t.Run("during back-off", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.Script(llmtest.Reply{Status: 503}, llmtest.Reply{Status: 503})
		c := llm.NewClient(fake.BaseURL(), testKey, 5*time.Second, 3, 0, nil)
		llm.SetRetryWaits(c, 10*time.Second, 10*time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Complete(ctx, testRequest())
		check(t, err, start)
		if n := fake.CallCount(); n != 1 {
			t.Errorf("Complete() made %d calls, want 1", n)
		}
	})
	t.Run("while the body is read", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"choices":[`)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		})
		c := newClient(srv.URL, 30*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Complete(ctx, testRequest())
		check(t, err, start)
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		c := newClient(fake.BaseURL(), 5*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := c.Complete(ctx, testRequest())
		check(t, err, time.Now())
		if n := fake.CallCount(); n != 0 {
			t.Errorf("Complete() with a cancelled context made %d calls, want 0", n)
		}
	})
}

func TestInvalidRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		edit func(*patent.CompletionRequest)
	}{
		{"no model", func(r *patent.CompletionRequest) { r.Model = "" }},
		{"blank model", func(r *patent.CompletionRequest) { r.Model = "  " }},
		{"blank prompt", func(r *patent.CompletionRequest) { r.Prompt = " \n" }},
		{"temperature above 2", func(r *patent.CompletionRequest) { r.Temperature = 2.5 }},
		{"negative temperature", func(r *patent.CompletionRequest) { r.Temperature = -0.1 }},
		{"NaN temperature", func(r *patent.CompletionRequest) { r.Temperature = math.NaN() }},
		{"negative max tokens", func(r *patent.CompletionRequest) { r.MaxTokens = -1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			req := testRequest()
			tt.edit(&req)
			_, err := c.Complete(t.Context(), req)
			if err == nil || errors.Is(err, llm.ErrUpstream) {
				t.Errorf("Complete(%+v) error = %v, want a local error that is not ErrUpstream", req, err)
			}
			if n := fake.CallCount(); n != 0 {
				t.Errorf("Complete(%+v) made %d calls, want 0", req, n)
			}
		})
	}
}

func TestNoKey(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t)
	c := llm.NewClient(fake.BaseURL(), "", 5*time.Second, 2, 0, nil)
	_, err := c.Complete(t.Context(), testRequest())
	if !errors.Is(err, llm.ErrRejected) || !strings.Contains(err.Error(), "No auth credentials found") {
		t.Errorf("Complete() without a key error = %v, want ErrRejected from the gateway's 401", err)
	}
	calls := fake.Calls()
	if len(calls) != 1 || calls[0].HasHeader("Authorization") {
		t.Errorf("Complete() without a key made %d calls (Authorization sent: %v), want 1 without the header",
			len(calls), len(calls) > 0 && calls[0].HasHeader("Authorization"))
	}
}

// TestErrorMessageCut: a long gateway message is cut to about 200
// characters, and control characters do not reach the error text.
func TestErrorMessageCut(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t)
	long := "Start\n\tof " + strings.Repeat("very long message ", 300) + "END"
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 402, "message": long}})
	fake.Script(llmtest.Reply{Status: 402, Body: string(b)})
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	_, err := c.Complete(t.Context(), testRequest())
	if !errors.Is(err, llm.ErrRejected) {
		t.Fatalf("Complete() error = %v, want ErrRejected", err)
	}
	msg := err.Error()
	if len(msg) > 400 || strings.Contains(msg, "END") || !strings.Contains(msg, "Start of very long") || !strings.Contains(msg, "…") {
		t.Errorf("Complete() error = %q (%d bytes), want the message's first ~200 characters, cleaned, and an ellipsis", msg, len(msg))
	}
	if strings.ContainsAny(msg, "\n\t") {
		t.Errorf("Complete() error = %q, want no control characters", msg)
	}
}

// TestErrorsOmitSecrets: no failure's text, and no log line, contains the
// API key, the upstream's address or the request URL, even when the
// gateway echoes the key.
func TestErrorsOmitSecrets(t *testing.T) {
	t.Parallel()
	type upstream struct {
		base    string
		host    string
		timeout time.Duration
		retries int
	}
	fakeWith := func(t *testing.T, replies ...llmtest.Reply) upstream {
		fake := llmtest.New(t)
		fake.Script(replies...)
		return upstream{base: fake.BaseURL(), host: hostOf(t, fake.URL), timeout: 5 * time.Second, retries: len(replies) - 1}
	}
	echo := func(status int, msg string) llmtest.Reply {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg}})
		return llmtest.Reply{Status: status, Body: string(b)}
	}
	// The key straddles the 200-character cut.
	straddle := strings.Repeat("x", 180) + " " + testKey
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T) upstream
	}{
		{"401 echoing the key", func(t *testing.T) upstream { return fakeWith(t, echo(401, "Invalid API key "+testKey)) }},
		{"400 echoing a bearer header", func(t *testing.T) upstream {
			return fakeWith(t, echo(400, "bad header Authorization: Bearer "+testKey))
		}},
		{"402 with the key at the cut", func(t *testing.T) upstream { return fakeWith(t, echo(402, straddle)) }},
		{"503 echoing the key, retries spent", func(t *testing.T) upstream {
			return fakeWith(t, echo(503, "key "+testKey), echo(503, "key "+testKey))
		}},
		{"200 with an error echoing the key", func(t *testing.T) upstream {
			return fakeWith(t, llmtest.Reply{Body: `{"choices":[{"error":{"code":502,"message":"Provider returned error","metadata":{"raw":"bad key ` + testKey + `"}}}]}`})
		}},
		{"200 with a refusal at the cut", func(t *testing.T) upstream {
			return fakeWith(t, llmtest.Reply{Body: `{"choices":[{"message":{"content":"","refusal":"` + straddle + `"}}]}`})
		}},
		{"garbage", func(t *testing.T) upstream { return fakeWith(t, llmtest.Reply{Body: "<html>" + testKey + "</html>"}) }},
		{"timeout", func(t *testing.T) upstream {
			u := fakeWith(t, llmtest.Reply{Delay: 10 * time.Second})
			u.timeout = 200 * time.Millisecond
			return u
		}},
		{"connection closed", func(t *testing.T) upstream {
			srv, _ := hangUp(t)
			return upstream{base: srv.URL + "/api/v1", host: hostOf(t, srv.URL), timeout: 5 * time.Second, retries: 1}
		}},
		{"connection refused", func(t *testing.T) upstream {
			u := closedURL(t)
			return upstream{base: u + "/api/v1", host: hostOf(t, u), timeout: 5 * time.Second}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.setup(t)
			var logs syncbuf.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := llm.NewClient(u.base, testKey, u.timeout, u.retries, 0, logger)
			llm.SetRetryWaits(c, time.Millisecond, 5*time.Millisecond)
			_, err := c.Complete(t.Context(), testRequest())
			if !errors.Is(err, llm.ErrUpstream) {
				t.Fatalf("Complete() error = %v, want ErrUpstream", err)
			}
			for _, bad := range []string{testKey, testKey[:20], testKey[len(testKey)-20:], u.host, "http://", "/chat/completions"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("Complete() error = %q, want no %q in it", err, bad)
				}
				if strings.Contains(logs.String(), bad) {
					t.Errorf("logs = %q, want no %q in them", logs.String(), bad)
				}
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	fake := llmtest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 1)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			req := testRequest()
			req.Prompt = fmt.Sprintf("prompt %d", i)
			got, err := c.Complete(t.Context(), req)
			if err != nil || got.Text != llmtest.Answer(req.Prompt) {
				t.Errorf("Complete(%q) = %q, %v; want its default answer", req.Prompt, got.Text, err)
			}
		})
	}
	wg.Wait()
	if n := fake.CallCount(); n != 16 {
		t.Errorf("16 concurrent calls made %d requests, want 16", n)
	}
}

func BenchmarkComplete(b *testing.B) {
	fake := llmtest.Start()
	defer fake.Close()
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	req := testRequest()
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
