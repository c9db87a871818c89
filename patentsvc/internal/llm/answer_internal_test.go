package llm

import (
	"encoding/json"
	"testing"
)

// TestWhatReachesTheParser pins down what the model's answer holds when
// the parser cleans it: Go's JSON decoder has already turned each raw byte
// that is not UTF-8, and a lone surrogate escape, into U+FFFD (one per
// byte), but a \u0000 escape arrives as a NUL character, which is what
// PostgreSQL refuses (SQLSTATE 22021) and parseCompletion removes.
func TestWhatReachesTheParser(t *testing.T) {
	raw := json.RawMessage("\"a\xff\xfe\\u0000b\\ud800\"")
	if got, want := contentText(raw), "a\uFFFD\uFFFD\x00b\uFFFD"; got != want {
		t.Errorf("contentText(%q) = %q, want %q", raw, got, want)
	}
	body := []byte(`{"model":"m/x\u0000","choices":[{"message":{"content":` + string(raw) + `}}]}`)
	c, err := parseCompletion(body, func(s string) string { return s })
	if err != nil || c.text != "a\uFFFD\uFFFDb\uFFFD" || c.model != "m/x" {
		t.Errorf("parseCompletion(%q) = %+v, %v; want text %q, model %q", body, c, err, "a\uFFFD\uFFFDb\uFFFD", "m/x")
	}
}
