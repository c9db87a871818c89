// Package llmtest is a fake OpenRouter chat-completions gateway for tests
// and benchmarks. It answers in OpenRouter's real format: by default a
// deterministic answer that depends on the prompt (Answer), with usage, an
// id "gen-..." and the requested model (or the one SetAnsweredModel names,
// as when OpenRouter falls back to another model). Scripted replies
// reproduce faults: error statuses with OpenRouter's error bodies
// (testdata/), errors inside a 200, garbage and slow answers.
//
// Like OpenRouter it answers 401 without a bearer token and 400 for a body
// that is not a chat request; it does not check the key's value.
package llmtest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/testkit/fakehttp"
)

//go:embed testdata/*.json
var fixtures embed.FS

// Path is where the fake serves chat completions, under BaseURL.
const Path = "/api/v1/chat/completions"

// Reply is a scripted answer (Script). Status 0 means 200. An empty Body
// means the default answer for a 200 and ErrorBody(Status) for any other
// status, so Reply{Status: 429} is a realistic rate limit and
// Reply{Delay: d} a slow normal answer. ContentType defaults to
// application/json.
type Reply = fakehttp.Reply

// ChatRequest is a decoded request body.
type ChatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	MaxTokens   *int      `json:"max_tokens"`
	Temperature *float64  `json:"temperature"`
	Provider    *Provider `json:"provider"`
	Stream      bool      `json:"stream"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Provider is OpenRouter's provider-routing preferences.
type Provider struct {
	DataCollection string `json:"data_collection"`
}

// Call is a request the fake received.
type Call struct {
	Method string
	Path   string
	Header http.Header // all request headers, as received
	Body   []byte      // the raw body
	// Request is Body decoded; zero when it is not a chat request
	// (DecodeErr says why).
	Request   ChatRequest
	DecodeErr string
	At        time.Time
}

// HasHeader reports whether the request carried header name, non-empty.
func (c Call) HasHeader(name string) bool { return c.Header.Get(name) != "" }

// Server is the fake gateway. The Recorder's methods script replies
// (Script), slow every answer (SetLatency), and count the calls
// (CallCount) or wait for them (WaitCalls).
type Server struct {
	*httptest.Server
	fakehttp.Recorder[Call]

	mu       sync.Mutex
	answered string
	seq      int
}

// New starts a fake gateway, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := Start()
	tb.Cleanup(s.Close)
	return s
}

// Start starts a fake gateway outside a test (a benchmark's server process,
// say); the caller closes it.
func Start() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the value for LLM_BASE_URL.
func (s *Server) BaseURL() string { return s.URL + "/api/v1" }

// SetAnsweredModel makes default answers name model m as the one that
// answered, whatever was asked for; "" echoes the requested model again.
func (s *Server) SetAnsweredModel(m string) {
	s.mu.Lock()
	s.answered = m
	s.mu.Unlock()
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	out := s.Recorder.Calls()
	for i := range out {
		out[i].Header = out[i].Header.Clone()
		out[i].Body = append([]byte(nil), out[i].Body...)
	}
	return out
}

// Answer is the default answer's content for a user prompt: Markdown, as
// models answer, built from the prompt alone and deterministically. It
// says that it is a stand-in, restates the portfolio facts the prompt
// gives (the "- " lines under "Portfolio facts"), lists the patents the
// prompt names (its "=== <id> (published <date>): <title>" lines) and
// carries a fingerprint
// of the prompt, so different prompts get different answers and the same
// prompt the same one. make demo serves it as the language model.
func Answer(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	h := hex.EncodeToString(sum[:6])
	var b strings.Builder
	b.WriteString("## Stand-in analysis\n")
	b.WriteString("Written by the demo's stand-in for a language model, not by a model: it restates the prompt " +
		"(fingerprint " + h + ") and judges nothing.\n")
	var listed, facts []string
	inFacts := false
	for _, line := range strings.Split(prompt, "\n") {
		if rest, ok := strings.CutPrefix(line, "=== "); ok && strings.TrimSpace(rest) != "" {
			listed = append(listed, "- "+strings.TrimSpace(rest))
		}
		switch {
		case strings.HasPrefix(line, "Portfolio facts"):
			inFacts = true
		case inFacts && strings.HasPrefix(line, "- "):
			facts = append(facts, line)
		default:
			inFacts = false
		}
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, "\n## Portfolio facts in the prompt\n%s\n", strings.Join(facts, "\n"))
	}
	if len(listed) > 0 {
		fmt.Fprintf(&b, "\n## Patents in the prompt (%d)\n%s\n", len(listed), strings.Join(listed, "\n"))
	}
	fmt.Fprintf(&b, "\n## Summary\nThe prompt holds %d patent(s) and %d words; a real model would analyse them here.",
		len(listed), len(strings.Fields(prompt)))
	return b.String()
}

// Tokens is the fake's token count for text: one per four characters,
// rounded up.
func Tokens(text string) int {
	return (utf8.RuneCountInString(text) + 3) / 4
}

// Completion returns a successful answer body in OpenRouter's format.
func Completion(model, content string, promptTokens, completionTokens int) string {
	return completionBody("gen-1767225600-fake000000000000", time.Now().Unix(), model, content, promptTokens, completionTokens)
}

// Fixture returns testdata/name (e.g. "success.json"). It panics when there
// is no such file.
func Fixture(name string) string {
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("llmtest: no fixture %q", name))
	}
	return string(b)
}

// ErrorBody returns OpenRouter's error body for status: the file
// testdata/error_<status>.json when there is one, else a body of the same
// shape with the status text as message.
func ErrorBody(status int) string {
	if b, err := fixtures.ReadFile(fmt.Sprintf("testdata/error_%d.json", status)); err == nil {
		return string(b)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": http.StatusText(status)}})
	return string(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	call := Call{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()}
	if err := json.Unmarshal(body, &call.Request); err != nil {
		call.Request = ChatRequest{}
		call.DecodeErr = err.Error()
	}

	s.mu.Lock()
	s.seq++
	seq := s.seq
	answered := s.answered
	s.mu.Unlock()

	reply, ok := s.Receive(r, call)
	if !ok {
		return
	}
	if reply != nil && (reply.Body != "" || (reply.Status != 0 && reply.Status != http.StatusOK)) {
		if reply.Body == "" {
			reply.Body = ErrorBody(reply.Status)
		}
		if reply.ContentType == "" {
			reply.ContentType = "application/json"
		}
		reply.Write(w)
		return
	}
	var header http.Header
	if reply != nil {
		header = reply.Header
	}

	switch {
	case r.URL.Path != Path:
		writeError(w, http.StatusNotFound, "Not Found")
		return
	case r.Method != http.MethodPost:
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") ||
		strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) == "":
		writeError(w, http.StatusUnauthorized, "No auth credentials found")
		return
	case call.DecodeErr != "":
		writeError(w, http.StatusBadRequest, "Invalid JSON body")
		return
	case call.Request.Model == "":
		writeError(w, http.StatusBadRequest, "No models provided")
		return
	case len(call.Request.Messages) == 0:
		writeError(w, http.StatusBadRequest, `Input required: specify "prompt" or "messages"`)
		return
	case call.Request.Stream:
		writeError(w, http.StatusBadRequest, "the fake does not stream")
		return
	}

	prompt, promptTokens := "", 0
	for _, m := range call.Request.Messages {
		promptTokens += Tokens(m.Content)
		if m.Role == "user" {
			prompt = m.Content
		}
	}
	model := call.Request.Model
	if answered != "" {
		model = answered
	}
	content := Answer(prompt)
	now := time.Now().Unix()
	id := fmt.Sprintf("gen-%d-fake%016d", now, seq)
	for k, vs := range header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, completionBody(id, now, model, content, promptTokens, Tokens(content)))
}

// completionBody renders a chat completion as OpenRouter does.
func completionBody(id string, created int64, model, content string, promptTokens, completionTokens int) string {
	provider := model
	if p, _, ok := strings.Cut(model, "/"); ok {
		provider = p
	}
	b, err := json.Marshal(map[string]any{
		"id":       id,
		"provider": provider,
		"model":    model,
		"object":   "chat.completion",
		"created":  created,
		"choices": []any{map[string]any{
			"logprobs":             nil,
			"finish_reason":        "stop",
			"native_finish_reason": "stop",
			"index":                0,
			"message":              map[string]any{"role": "assistant", "content": content, "refusal": nil, "reasoning": nil},
		}},
		"usage": map[string]any{
			"prompt_tokens":     promptTokens,
			"completion_tokens": completionTokens,
			"total_tokens":      promptTokens + completionTokens,
		},
	})
	if err != nil {
		panic(err) // only plain values above
	}
	return string(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg}})
}
