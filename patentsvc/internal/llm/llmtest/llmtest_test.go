package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
)

func post(t *testing.T, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("POST %s answered %d with %q, not a JSON object", url, resp.StatusCode, b)
	}
	return resp.StatusCode, v
}

func TestFakeValidates(t *testing.T) {
	fake := llmtest.New(t)
	good := `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, path, auth, body string
		want                   int
	}{
		{"ok", llmtest.Path, "Bearer k", good, 200},
		{"no auth", llmtest.Path, "", good, 401},
		{"empty bearer", llmtest.Path, "Bearer ", good, 401},
		{"wrong path", "/api/v1/completions", "Bearer k", good, 404},
		{"not json", llmtest.Path, "Bearer k", "{", 400},
		{"no model", llmtest.Path, "Bearer k", `{"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"no messages", llmtest.Path, "Bearer k", `{"model":"m/x"}`, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, fake.URL+tt.path, tt.auth, tt.body)
			if status != tt.want {
				t.Errorf("POST %s = %d %v, want %d", tt.path, status, body, tt.want)
			}
			if status != 200 {
				e, _ := body["error"].(map[string]any)
				if code, _ := e["code"].(float64); int(code) != status || e["message"] == "" {
					t.Errorf("error body = %v, want {error:{code:%d, message}}", body, status)
				}
			}
		})
	}
	if n := fake.CallCount(); n != 7 {
		t.Errorf("CallCount() = %d, want 7", n)
	}
}

func TestFakeAnswerFormat(t *testing.T) {
	fake := llmtest.New(t)
	status, v := post(t, fake.BaseURL()+"/chat/completions", "Bearer k",
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"sys"},{"role":"user","content":"the prompt"}]}`)
	if status != 200 {
		t.Fatalf("status = %d, want 200", status)
	}
	id, _ := v["id"].(string)
	if !strings.HasPrefix(id, "gen-") || v["object"] != "chat.completion" || v["model"] != "openai/gpt-4o-mini" || v["created"] == nil {
		t.Errorf("answer = %v, want id gen-..., object chat.completion, created and the requested model", v)
	}
	choices, _ := v["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices = %v, want one", v["choices"])
	}
	ch, _ := choices[0].(map[string]any)
	msg, _ := ch["message"].(map[string]any)
	if ch["index"] != 0.0 || ch["finish_reason"] != "stop" || msg["role"] != "assistant" || msg["content"] != llmtest.Answer("the prompt") {
		t.Errorf("choice = %v, want index 0, finish_reason stop, an assistant message with Answer(prompt)", ch)
	}
	usage, _ := v["usage"].(map[string]any)
	p, c := llmtest.Tokens("sys")+llmtest.Tokens("the prompt"), llmtest.Tokens(llmtest.Answer("the prompt"))
	if usage["prompt_tokens"] != float64(p) || usage["completion_tokens"] != float64(c) || usage["total_tokens"] != float64(p+c) {
		t.Errorf("usage = %v, want %d + %d", usage, p, c)
	}

	fake.SetAnsweredModel("google/gemini-2.5-flash")
	if _, v := post(t, fake.BaseURL()+"/chat/completions", "Bearer k", `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`); v["model"] != "google/gemini-2.5-flash" {
		t.Errorf("model after SetAnsweredModel = %v, want google/gemini-2.5-flash", v["model"])
	}
	if a1, a2 := llmtest.Answer("a"), llmtest.Answer("a"); llmtest.Answer("a") == llmtest.Answer("b") || a1 != a2 {
		t.Errorf("Answer is not deterministic per prompt")
	}
}

func TestFakeScript(t *testing.T) {
	fake := llmtest.New(t)
	fake.Script(llmtest.Reply{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, llmtest.Reply{Status: 418})
	good := `{"model":"m/x","messages":[{"role":"user","content":"x"}]}`
	if status, v := post(t, fake.BaseURL()+"/chat/completions", "Bearer k", good); status != 429 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "Rate limit exceeded") {
		t.Errorf("first scripted reply = %d %v, want 429 with the recorded body", status, v)
	}
	if status, v := post(t, fake.BaseURL()+"/chat/completions", "Bearer k", good); status != http.StatusTeapot || v["error"].(map[string]any)["message"] != http.StatusText(http.StatusTeapot) {
		t.Errorf("second scripted reply = %d %v, want 418 with a generic error body", status, v)
	}
	if status, _ := post(t, fake.BaseURL()+"/chat/completions", "Bearer k", good); status != 200 {
		t.Errorf("after the script, status = %d, want 200", status)
	}
	calls := fake.Calls()
	if len(calls) != 3 || calls[0].Request.Model != "m/x" || !calls[0].HasHeader("Authorization") {
		t.Errorf("Calls() = %+v, want 3 decoded calls with Authorization", calls)
	}
}
