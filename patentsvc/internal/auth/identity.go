package auth

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Identities that cannot pose as others (decisions.md, "Both services: the
// platform's own HTTP framing, and identities that cannot pose as
// others"): an address is compared and stored in one normal form, and an
// address that could print like another's is refused.

// ParseEmail checks an e-mail address and returns it in the form it is
// stored and compared in: Unicode NFKC, lower case (a fullwidth
// "ａda@example.com" is "ada@example.com"). It refuses, with a
// patent.ErrInvalid naming what is wrong, an address that holds a
// control, format or default-ignorable character (a zero-width space, a
// bidirectional override, ...), one whose local part mixes scripts the
// way look-alikes do (Latin with Cyrillic or Greek: "аda" with a Cyrillic
// а; UTS #39's "highly restrictive" level allows Latin only with Han and
// the Japanese or Korean scripts), and one that is not an address
// (patent.ParseEmail).
func ParseEmail(s string) (string, error) {
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		return "", patent.Invalidf("email must be valid UTF-8 text")
	}
	for _, r := range s {
		if invisible(r) {
			return "", patent.Invalidf("email must not hold control, format or invisible characters (U+%04X)", r)
		}
	}
	e, err := patent.ParseEmail(strings.ToLower(norm.NFKC.String(s)))
	if err != nil {
		return "", err
	}
	local := e[:strings.LastIndexByte(e, '@')]
	if !oneScript(local) {
		return "", patent.Invalidf("email must not mix scripts in its local part (Latin with Cyrillic or Greek, say)")
	}
	return e, nil
}

// CheckPassword checks a password: patent.CheckPassword's length, and no
// NUL or other control character (decisions.md: 422).
func CheckPassword(p string) error {
	if err := CheckPasswordCharacters(p); err != nil {
		return err
	}
	return patent.CheckPassword(p)
}

// CheckPasswordCharacters refuses a password that holds a control
// character (NUL included), at registration and at login alike: no
// account can have one.
func CheckPasswordCharacters(p string) error {
	for _, r := range p {
		if unicode.IsControl(r) {
			return patent.Invalidf("password must not hold control characters (U+%04X)", r)
		}
	}
	return nil
}

// invisible reports a control (Cc), format (Cf: zero-width spaces and
// joiners, bidirectional controls, soft hyphens) or other default-ignorable
// character (variation selectors, fillers).
func invisible(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// restrictive are the sets of scripts a local part may mix (UTS #39,
// "highly restrictive"): one script, or Latin with Han and Japanese, with
// Han and Bopomofo, or with Han and Hangul.
var restrictive = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
	{unicode.Latin, unicode.Han, unicode.Bopomofo},
	{unicode.Latin, unicode.Han, unicode.Hangul},
}

// oneScript reports whether s's letters (Common and Inherited characters,
// digits and punctuation, left out) are of one script, or of an allowed
// mix (restrictive).
func oneScript(s string) bool {
	var scripts []*unicode.RangeTable
	for _, r := range s {
		if t := scriptOf(r); t != nil && !contains(scripts, t) {
			scripts = append(scripts, t)
		}
	}
	if len(scripts) <= 1 {
		return true
	}
	for _, set := range restrictive {
		if subset(scripts, set) {
			return true
		}
	}
	return false
}

// scriptOf is the script of r, nil for Common and Inherited characters.
func scriptOf(r rune) *unicode.RangeTable {
	if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
		return nil
	}
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

func contains(ts []*unicode.RangeTable, t *unicode.RangeTable) bool { return slices.Contains(ts, t) }

// subset reports whether every table of ts is in of.
func subset(ts, of []*unicode.RangeTable) bool {
	for _, t := range ts {
		if !slices.Contains(of, t) {
			return false
		}
	}
	return true
}
