package llm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzKey is the API key of the client whose scrubber the fuzz targets use.
const fuzzKey = "sk-or-v1-fuzzfuzzfuzzfuzz0123456789"

// maxErrorLen bounds a parse error's text: a short prefix plus a message of
// at most maxMessage runes, each quoted as at most 10 bytes (\U0010FFFF).
const maxErrorLen = 100 + 10*maxMessage + 16

func addSeeds(f *testing.F) {
	paths, err := filepath.Glob("llmtest/testdata/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures in llmtest/testdata (err %v)", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		" ",
		"{}",
		"[]",
		"null",
		`"x"`,
		"<html><body>502 Bad Gateway</body></html>",
		`{"choices":null}`,
		`{"choices":[]}`,
		`{"choices":[null]}`,
		`{"choices":[1,"x",[]]}`,
		`{"choices":{"0":{}}}`,
		`{"choices":[{}]}`,
		`{"choices":[{"message":null}]}`,
		`{"choices":[{"message":{"content":null}}]}`,
		`{"choices":[{"message":{"content":["a",{"type":"text","text":5},{"text":"b"}]}}]}`,
		`{"choices":[{"message":{"content":"  "},"finish_reason":7}]}`,
		`{"choices":[{"message":{"content":"x"},"error":{}}]}`,
		`{"choices":[{"message":{"content":"x"},"error":[]}]}`,
		`{"choices":[{"message":{"content":"x"},"error":""}]}`,
		`{"choices":[{"message":{"content":"x"},"error":{"message":7,"code":"x"}}]}`,
		`{"error":{"code":1e400}}`,
		`{"error":{"code":429.5,"message":"","metadata":{"raw":{"a":1},"provider_name":5}}}`,
		`{"error":{"message":"sk-or-v1-fuzzfuzzfuzzfuzz0123456789","metadata":"x"}}`,
		`{"error":{"message":"\u0000\u001b[31m\ud800 Bearer abcdef"}}`,
		`{"model":"m\u0000","choices":[{"message":{"content":"a\u0000b\ud800"}}]}`,
		`{"choices":[{"message":{"content":"\u0000"}}]}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"\u0000"},{"text":"x\u0000"}]}}]}`,
		`{"model":5,"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e400,"completion_tokens":-0}}`,
		`{"model":"m/x","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":2147483648,"completion_tokens":2147483647}}`,
		`{"model":"m/x","choices":[{"message":{"content":"x"}}],"usage":[]}`,
		"{\"choices\":[{\"message\":{\"content\":\"\xff\xfe\"}}]}",
		`{"choices":[{"message":{"content":"x"}}]}trailing`,
		`{"choices":[{"message":{"content":"x","refusal":"no"}}],"choices":[]}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzParseCompletion feeds arbitrary answers to the parser: it must never
// panic, every error must wrap exactly one of the documented parse errors
// and stay short, valid and free of the key, and every success must carry
// trimmed, non-empty text, valid UTF-8 without NUL in the text and the
// model, and non-negative token counts.
func FuzzParseCompletion(f *testing.F) {
	addSeeds(f)
	scrub := (&Client{apiKey: fuzzKey}).scrub
	documented := []error{errNotCompletion, errAnswerError, errNoChoices, errNoContent}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseCompletion(body, scrub)
		if err != nil {
			matched := 0
			for _, d := range documented {
				if errors.Is(err, d) {
					matched++
				}
			}
			if matched != 1 {
				t.Errorf("parseCompletion(%q) error = %v, want exactly one documented error", body, err)
			}
			if c != (completion{}) {
				t.Errorf("parseCompletion(%q) = %+v with error %v, want a zero completion", body, c, err)
			}
			msg := err.Error()
			if len(msg) > maxErrorLen || !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r\t\x00") {
				t.Errorf("parseCompletion(%q) error text %q (%d bytes) is too long, invalid or has control characters", body, msg, len(msg))
			}
			if strings.Contains(msg, fuzzKey) {
				t.Errorf("parseCompletion(%q) error %q contains the key", body, msg)
			}
			return
		}
		if c.text == "" || c.text != strings.TrimSpace(c.text) {
			t.Errorf("parseCompletion(%q) text = %q, want trimmed and non-empty", body, c.text)
		}
		if !utf8.ValidString(c.text) || !utf8.ValidString(c.model) || strings.ContainsRune(c.text, 0) || strings.ContainsRune(c.model, 0) {
			t.Errorf("parseCompletion(%q) = %+v, want valid UTF-8 without NUL", body, c)
		}
		if c.promptTokens < 0 || c.completionTokens < 0 {
			t.Errorf("parseCompletion(%q) tokens = %d/%d, want >= 0", body, c.promptTokens, c.completionTokens)
		}
	})
}

// FuzzGatewayMessage feeds arbitrary error bodies to the message reader: it
// must never panic and return "" or a short quoted message without the key
// or control characters.
func FuzzGatewayMessage(f *testing.F) {
	addSeeds(f)
	c := &Client{apiKey: fuzzKey}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := c.gatewayMessage(body)
		if msg == "" {
			return
		}
		if len(msg) > 10*maxMessage+16 || !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r\t\x00") ||
			!strings.HasPrefix(msg, `"`) || !strings.HasSuffix(msg, `"`) {
			t.Errorf("gatewayMessage(%q) = %q, want a short, quoted, clean message", body, msg)
		}
		if strings.Contains(msg, fuzzKey) {
			t.Errorf("gatewayMessage(%q) = %q, contains the key", body, msg)
		}
	})
}
