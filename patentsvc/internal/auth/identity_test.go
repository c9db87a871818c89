package auth_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestParseEmail: an address is kept in one normal form (NFKC, lower
// case), so a fullwidth or otherwise compatibility-equal spelling is the
// same address; one that could print like another's (an invisible
// character, a local part mixing Latin with Cyrillic or Greek) is refused.
func TestParseEmail(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "" for a refusal
		why      string
	}{
		{"Ada@Example.com", "ada@example.com", "lower case"},
		{"ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ", "ada@example.com", "fullwidth letters are their ASCII selves (NFKC)"},
		{"ａlice@example.com", "alice@example.com", "one fullwidth letter"},
		{"ＡＤＡ@example.com", "ada@example.com", "fullwidth capitals"},
		{"a.b+tag@sub.example.org", "a.b+tag@sub.example.org", "punctuation kept"},
		{"ﬁsh@example.com", "fish@example.com", "a ligature is its letters"},
		{"jürgen@example.de", "jürgen@example.de", "one script with marks"},
		{"Jürgen@example.de", "jürgen@example.de", "lower case beyond ASCII"},
		{"δημήτρης@example.gr", "δημήτρης@example.gr", "Greek alone"},
		{"иван@example.ru", "иван@example.ru", "Cyrillic alone"},
		{"tanaka田中たなか@example.jp", "tanaka田中たなか@example.jp", "Latin with Han and Hiragana (UTS #39 highly restrictive)"},
		{"alice\u200b@example.com", "", "zero-width space"},
		{"\u202ealice@example.com", "", "right-to-left override"},
		{"al\u00adice@example.com", "", "soft hyphen"},
		{"alice\u2060@example.com", "", "word joiner"},
		{"alice\ufe0f@example.com", "", "variation selector"},
		{"ali\x00ce@example.com", "", "NUL"},
		{"ali\tce@example.com", "", "a tab"},
		{"аlice@example.com", "", "Cyrillic а among Latin letters"},
		{"alicε@example.com", "", "Greek ε among Latin letters"},
		{"ivan\u0438@example.ru", "", "Latin and Cyrillic"},
		{"ali\ufffdce@example.com", "", "a replacement character"},
		{"ali\xffce@example.com", "", "invalid UTF-8"},
		{"", "", "empty"},
		{"ada", "", "no domain"},
		{"Ada <ada@example.com>", "", "a display name"},
		{strings.Repeat("a", 250) + "@x.io", "", "too long"},
	} {
		t.Run(tt.why, func(t *testing.T) {
			got, err := auth.ParseEmail(tt.in)
			if tt.want == "" {
				if err == nil || !errors.Is(err, patent.ErrInvalid) {
					t.Errorf("ParseEmail(%q) = %q, %v; want ErrInvalid", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseEmail(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestCheckPassword: a password holding a NUL or another control
// character is refused, at any length; a password of printable
// characters (spaces, any script) passes.
func TestCheckPassword(t *testing.T) {
	for p, ok := range map[string]bool{
		strings.Repeat("\x00", 20):   false,
		"correct horse\x00battery":   false,
		"correct horse\nbattery":     false,
		"correct horse\u0085battery": false, // NEL, a C1 control
		"correct horse battery":      true,
		"κωδικός πρόσβασης":          true,
	} {
		if err := auth.CheckPassword(p); (err == nil) != ok {
			t.Errorf("CheckPassword(%q) = %v, want ok=%v", p, err, ok)
		}
	}
}

// FuzzParseEmail: whatever the input, an accepted address is its own normal
// form (parsing it again gives it back), holds no invisible or control
// character and is valid UTF-8; the parser never panics.
func FuzzParseEmail(f *testing.F) {
	for _, s := range []string{"Ada@Example.com", "ａlice@example.com", "alice\u200b@example.com", "аlice@example.com", "ﬁsh@example.com", "tanaka田中たなか@example.jp", "ali\xffce@example.com", "ß@example.de", "İ@example.tr"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := auth.ParseEmail(in)
		if err != nil {
			if !errors.Is(err, patent.ErrInvalid) {
				t.Fatalf("ParseEmail(%q): %v, not ErrInvalid", in, err)
			}
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("ParseEmail(%q) = %q: invalid UTF-8", in, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
				t.Fatalf("ParseEmail(%q) = %q holds %U", in, got, r)
			}
		}
		again, err := auth.ParseEmail(got)
		if err != nil || again != got {
			t.Fatalf("ParseEmail(%q) = %q, but ParseEmail(%q) = %q, %v: not a normal form", in, got, got, again, err)
		}
	})
}
