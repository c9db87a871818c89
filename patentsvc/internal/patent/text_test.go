package patent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestCleanText(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"clean", "Résumé 特許 🦀\t\n", "Résumé 特許 🦀\t\n"},
		{"nul", "a\x00b\x00", "ab"},
		{"only nul", "\x00\x00", ""},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"a run, one per byte", "a\xff\xfe\xfdb", "a\uFFFD\uFFFD\uFFFDb"},
		{"truncated sequence", "a\xe7\x89", "a\uFFFD\uFFFD"},
		{"surrogate half", "a\xed\xa0\x80b", "a\uFFFD\uFFFD\uFFFDb"},
		{"overlong", "\xc0\xaf", "\uFFFD\uFFFD"},
		{"past U+10FFFF", "\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"replacement kept", "\uFFFD", "\uFFFD"},
		{"other controls kept", "\x01\x1b[0m\x7f", "\x01\x1b[0m\x7f"},
		{"nul and invalid", "\x00\xff\x00", "\uFFFD"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := patent.CleanText(tt.in); got != tt.want {
				t.Errorf("CleanText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCleanTextLikeJSON: CleanText replaces invalid bytes as Go's JSON
// decoder does, so the model's answers (JSON) and PDF text (raw bytes)
// come out alike.
func TestCleanTextLikeJSON(t *testing.T) {
	in := "x\xff\xfe\xed\xa0\x80\xe7\x89y"
	var viaRange strings.Builder
	for _, r := range in {
		viaRange.WriteRune(r)
	}
	if got := patent.CleanText(in); got != viaRange.String() {
		t.Errorf("CleanText(%q) = %q, want %q (one U+FFFD per invalid byte)", in, got, viaRange.String())
	}
}

func TestCleanTextNoCopy(t *testing.T) {
	s := strings.Repeat("clean text ", 100)
	if n := testing.AllocsPerRun(10, func() { _ = patent.CleanText(s) }); n != 0 {
		t.Errorf("CleanText(clean) allocates %v times, want 0", n)
	}
}

func TestCutAnswer(t *testing.T) {
	const mark = "\n\n" + patent.AnswerTruncated
	for _, tt := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"no cap", strings.Repeat("a", 100), 0, strings.Repeat("a", 100)},
		{"negative cap", "abc", -1, "abc"},
		{"under", "abc", 30, "abc"},
		{"exactly", strings.Repeat("a", 30), 30, strings.Repeat("a", 30)},
		{"over", strings.Repeat("a", 31), 30, strings.Repeat("a", 10) + mark},
		{"white space at the cut dropped", "aaaaaaaa  bbbbbbbbbbbbbbbbbbbbbbbb", 30, "aaaaaaaa" + mark},
		// 10 bytes are left for text: "éééé" is 8, the fifth é would
		// straddle byte 10.
		{"two-byte characters", strings.Repeat("é", 20), 29, strings.Repeat("é", 4) + mark},
		{"three-byte characters", strings.Repeat("特", 20), 30, strings.Repeat("特", 3) + mark},
		{"four-byte characters", strings.Repeat("🦀", 20), 30, strings.Repeat("🦀", 2) + mark},
		{"cap below the marker", strings.Repeat("a", 50), 5, mark},
		{"cap below the marker, short answer", "abcdefghij", 5, "abcdefghij"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := patent.CutAnswer(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("CutAnswer(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if tt.max > 0 && len(got) > max(tt.max, len(mark)) {
				t.Errorf("CutAnswer(%q, %d) is %d bytes, over the cap", tt.in, tt.max, len(got))
			}
		})
	}
}

// FuzzCleanText checks the stored-text rules on any input: CleanText gives
// valid UTF-8 without NUL, changes clean text not at all and is
// idempotent; CutAnswer of clean text stays valid, within the cap, marked
// when cut, a prefix of its input otherwise, and idempotent.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00b", "\xff\xfe", "\xed\xa0\x80", "Résumé 特許 🦀", "\x00\xe7\x89\x00", strings.Repeat("é", 40)} {
		f.Add(s, 30)
	}
	f.Add(strings.Repeat("a ", 100), 21)
	f.Add("short", -3)
	f.Fuzz(func(t *testing.T, s string, maxBytes int) {
		c := patent.CleanText(s)
		if !utf8.ValidString(c) || strings.IndexByte(c, 0) >= 0 {
			t.Fatalf("CleanText(%q) = %q, want valid UTF-8 without NUL", s, c)
		}
		if again := patent.CleanText(c); again != c {
			t.Errorf("CleanText not idempotent: %q, then %q", c, again)
		}
		if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && c != s {
			t.Errorf("CleanText(%q) = %q, want clean text unchanged", s, c)
		}
		if utf8.RuneCountInString(c) > len(s) {
			t.Errorf("CleanText(%q) has %d characters, more than the input's %d bytes", s, utf8.RuneCountInString(c), len(s))
		}

		maxBytes %= 1 << 12 // small caps reach the interesting cases
		a := patent.CutAnswer(c, maxBytes)
		if !utf8.ValidString(a) || strings.IndexByte(a, 0) >= 0 {
			t.Fatalf("CutAnswer(%q, %d) = %q, want valid UTF-8 without NUL", c, maxBytes, a)
		}
		if again := patent.CutAnswer(a, maxBytes); again != a {
			t.Errorf("CutAnswer not idempotent: %q, then %q", a, again)
		}
		if maxBytes <= 0 || a == c {
			if a != c {
				t.Errorf("CutAnswer(%q, %d) = %q, want it unchanged", c, maxBytes, a)
			}
			return
		}
		if limit := max(maxBytes, 20); len(a) > limit {
			t.Errorf("CutAnswer(%q, %d) is %d bytes, over the cap %d", c, maxBytes, len(a), limit)
		}
		kept, ok := strings.CutSuffix(a, "\n\n"+patent.AnswerTruncated)
		if !ok || !strings.HasPrefix(c, kept) {
			t.Errorf("CutAnswer(%q, %d) = %q, want a prefix of the answer and the marker", c, maxBytes, a)
		}
	})
}
