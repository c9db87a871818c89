package llm_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/llm"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestCompleteCleansAnswer (decisions.md, "Both services: hostile input
// answered, never a 5xx"): NUL characters (\u0000) leave the answer and
// the answering model's name; raw bytes that are not UTF-8 and a lone
// surrogate escape arrive as U+FFFD, one per byte, and stay so; an answer
// of NUL characters alone is an answer without content.
func TestCompleteCleansAnswer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, content, model string
		want                 patent.Completion
	}{
		{"nul", `a\u0000b\u0000`, "m/x", patent.Completion{Text: "ab", Model: "m/x"}},
		{"nul in the model", "x", `m/x\u0000`, patent.Completion{Text: "x", Model: "m/x"}},
		{"raw bytes", "a\xff\xfeb", "m/x", patent.Completion{Text: "a\uFFFD\uFFFDb", Model: "m/x"}},
		{"surrogate half, escaped and raw", `a\ud800b` + "\xed\xa0\x80", "m/x", patent.Completion{Text: "a\uFFFDb\uFFFD\uFFFD\uFFFD", Model: "m/x"}},
		{"nul at the edges, white space trimmed", `\u0000 answer \u0000`, "m/x", patent.Completion{Text: "answer", Model: "m/x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Body: `{"model":"` + tt.model + `","choices":[{"message":{"content":"` + tt.content + `"}}]}`})
			got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Complete(t.Context(), testRequest())
			if err != nil || got != tt.want {
				t.Errorf("Complete() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	t.Run("only nul", func(t *testing.T) {
		t.Parallel()
		fake := llmtest.New(t)
		fake.Script(llmtest.Reply{Body: `{"model":"m/x","choices":[{"message":{"content":"\u0000 \u0000"}}]}`})
		_, err := newClient(fake.BaseURL(), 5*time.Second, 0).Complete(t.Context(), testRequest())
		if !errors.Is(err, llm.ErrUpstream) || !strings.Contains(err.Error(), "no content") {
			t.Errorf("Complete() error = %v, want ErrUpstream, no content", err)
		}
	})
}

// TestCompleteCapsAnswer: an answer over the client's cap is cut at a
// character boundary, within the cap, ending with [answer truncated], and
// the cut is logged; one at the cap is kept whole; a cap of 0 is the
// default, 256 KiB.
func TestCompleteCapsAnswer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Résumé 特許 ", 400) // 6,400 bytes
	for _, tt := range []struct {
		name      string
		content   string
		cap       int
		wantLen   int // exact, or 0 for "at most cap"
		wantWhole bool
	}{
		{"over the cap", long, 1024, 0, false},
		{"at the cap", strings.Repeat("é", 512), 1024, 1024, true},
		{"default cap", strings.Repeat("a", 300<<10), 0, patent.DefaultMaxAnswerBytes, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := llmtest.New(t)
			fake.Script(llmtest.Reply{Body: llmtest.Completion("m/x", tt.content, 10, 2000)})
			var logs bytes.Buffer
			c := llm.NewClient(fake.BaseURL(), testKey, 5*time.Second, 0, tt.cap, slog.New(slog.NewJSONHandler(&logs, nil)))
			got, err := c.Complete(t.Context(), testRequest())
			if err != nil {
				t.Fatalf("Complete() error = %v", err)
			}
			limit := tt.cap
			if limit == 0 {
				limit = patent.DefaultMaxAnswerBytes
			}
			cut := strings.Contains(logs.String(), `"msg":"llm answer cut at LLM_MAX_ANSWER_KB"`)
			switch {
			case tt.wantWhole:
				if got.Text != tt.content || cut {
					t.Errorf("Complete() = %d bytes (cut logged: %v), want the %d-byte answer whole", len(got.Text), cut, len(tt.content))
				}
			default:
				kept, marked := strings.CutSuffix(got.Text, "\n\n"+patent.AnswerTruncated)
				if !marked || len(got.Text) > limit || !utf8.ValidString(got.Text) || !strings.HasPrefix(tt.content, kept) ||
					(tt.wantLen != 0 && len(got.Text) != tt.wantLen) {
					t.Errorf("Complete() = %d bytes ending %q, want a prefix of the answer cut within %d bytes and marked",
						len(got.Text), got.Text[max(0, len(got.Text)-40):], limit)
				}
				if !cut {
					t.Errorf("the cut was not logged: %s", logs.String())
				}
			}
		})
	}
}
