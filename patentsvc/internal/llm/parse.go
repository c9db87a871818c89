package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The ways a 200 answer can fail to be a completion. parseCompletion's
// errors wrap exactly one of them.
var (
	errNotCompletion = errors.New("answer is not a chat completion")
	errAnswerError   = errors.New("gateway reported an error")
	errNoChoices     = errors.New("answer has no choices")
	errNoContent     = errors.New("answer has no content")
)

// completion is what a 200 answer holds.
type completion struct {
	text             string // trimmed, clean (patent.CleanText), not empty; not yet cut to the cap
	model            string // "" when the answer names none
	finishReason     string
	promptTokens     int
	completionTokens int
}

// wireResponse is a chat completion as OpenRouter sends it. Fields are kept
// raw and decoded one by one, so a field of an unexpected type loses only
// itself.
type wireResponse struct {
	Model   json.RawMessage `json:"model"`
	Choices json.RawMessage `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Message      json.RawMessage `json:"message"`
	FinishReason json.RawMessage `json:"finish_reason"`
	Error        json.RawMessage `json:"error"`
}

type wireMessage struct {
	Content json.RawMessage `json:"content"`
	Refusal json.RawMessage `json:"refusal"`
}

// parseCompletion decodes a 200 answer. Once generation has started,
// OpenRouter reports failures inside a 200: a top-level "error", an "error"
// on the choice, no choices, or empty content. All of those are failures.
// scrub cleans gateway text of secrets before it is cut to length and put
// in an error.
func parseCompletion(body []byte, scrub func(string) string) (completion, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return completion{}, fmt.Errorf("%w: empty answer", errNotCompletion)
	}
	if trimmed[0] != '{' {
		if trimmed[0] == '<' {
			return completion{}, fmt.Errorf("%w: answer is HTML or XML", errNotCompletion)
		}
		return completion{}, fmt.Errorf("%w: answer is not a JSON object", errNotCompletion)
	}
	var w wireResponse
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return completion{}, fmt.Errorf("%w: invalid JSON", errNotCompletion)
	}
	if msg, ok := apiErrorMessage(w.Error); ok {
		return completion{}, fmt.Errorf("%w: %s", errAnswerError, quoteMessage(scrub(msg)))
	}
	var choices []json.RawMessage
	if err := json.Unmarshal(w.Choices, &choices); err != nil || len(choices) == 0 {
		return completion{}, errNoChoices
	}
	var ch wireChoice
	if err := json.Unmarshal(choices[0], &ch); err != nil || isNull(choices[0]) {
		return completion{}, fmt.Errorf("%w: first choice is not an object", errNotCompletion)
	}
	if msg, ok := apiErrorMessage(ch.Error); ok {
		return completion{}, fmt.Errorf("%w: %s", errAnswerError, quoteMessage(scrub(msg)))
	}
	// The answer and the model's name are stored (the LLM cache, the
	// analysis): cleaned of NUL and invalid UTF-8 here, where they enter
	// (patent.CleanText). An answer of NUL characters alone is no content.
	c := completion{
		model:        patent.CleanText(jsonString(w.Model)),
		finishReason: jsonString(ch.FinishReason),
	}
	var m wireMessage
	if len(ch.Message) > 0 && json.Unmarshal(ch.Message, &m) == nil {
		c.text = strings.TrimSpace(patent.CleanText(contentText(m.Content)))
	}
	if c.text == "" {
		detail := ""
		if r := strings.TrimSpace(jsonString(m.Refusal)); r != "" {
			detail = ": refusal " + quoteMessage(scrub(r))
		} else if c.finishReason != "" {
			detail = ": finish reason " + quoteMessage(scrub(c.finishReason))
		}
		return completion{}, fmt.Errorf("%w%s", errNoContent, detail)
	}
	var u struct {
		PromptTokens     json.RawMessage `json:"prompt_tokens"`
		CompletionTokens json.RawMessage `json:"completion_tokens"`
	}
	if len(w.Usage) > 0 && json.Unmarshal(w.Usage, &u) == nil {
		c.promptTokens = tokenCount(u.PromptTokens)
		c.completionTokens = tokenCount(u.CompletionTokens)
	}
	return c, nil
}

// contentText returns a message's content: a string, or the text parts of
// an array of content parts (some providers answer that way); null and
// anything else are "".
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string          `json:"type"`
		Text json.RawMessage `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(jsonString(p.Text))
		}
	}
	return b.String()
}

// apiErrorMessage reads an "error" value: {"code","message","metadata"} in
// OpenRouter's shape, or a bare string. It reports false when the value is
// absent or null. A generic message ("Provider returned error") is followed
// by the provider's name and its raw error when the metadata has them.
func apiErrorMessage(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || isNull(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "unspecified error", true
		}
		return s, true
	}
	var e struct {
		Code     json.RawMessage `json:"code"`
		Message  json.RawMessage `json:"message"`
		Metadata struct {
			ProviderName json.RawMessage `json:"provider_name"`
			Raw          json.RawMessage `json:"raw"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &e) != nil {
		// Not an object of that shape (an array, a number, metadata of
		// another type...): still an error.
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			if m := jsonString(obj["message"]); strings.TrimSpace(m) != "" {
				return m, true
			}
		}
		return "unspecified error", true
	}
	msg := strings.TrimSpace(jsonString(e.Message))
	if msg == "" {
		msg = "unspecified error"
		if code := strings.TrimSpace(jsonString(e.Code)); code != "" {
			msg += " (code " + code + ")"
		} else if n := tokenCount(e.Code); n > 0 {
			msg += " (code " + strconv.Itoa(n) + ")"
		}
	}
	if p := strings.TrimSpace(jsonString(e.Metadata.ProviderName)); p != "" {
		msg += " (provider " + p + ")"
	}
	if r := strings.TrimSpace(jsonString(e.Metadata.Raw)); r != "" && r != msg {
		msg += ": " + r
	}
	return msg, true
}

// quoteMessage makes gateway text safe for an error string: control
// characters and runs of white space become one space, invalid UTF-8 is
// replaced, the result is cut to maxMessage runes and quoted.
func quoteMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if n >= maxMessage {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return strconv.Quote(b.String())
}

// jsonString returns raw as a string when it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// tokenCount reads a usage count: a non-negative whole number up to
// MaxInt32, else 0.
func tokenCount(raw json.RawMessage) int {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil {
		return 0
	}
	if math.IsNaN(f) || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
