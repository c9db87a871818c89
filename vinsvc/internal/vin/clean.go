package vin

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from vPIC is stored and answered as CleanText makes it
// (decisions.md, "Both services: ... identities that cannot pose as
// others"): a decoded value, and the raw record (CleanRecord), never hold
// a NUL or another control character, and are valid UTF-8, as patentsvc's
// upstream text is. A hostile or broken answer would otherwise sit in the
// cache for CACHE_TTL (90 days) and reach every client that asks.

// CleanText returns s without control characters (white-space controls,
// such as a tab or a line break, become a space; NUL and the others are
// removed) and as valid UTF-8 (every byte that does not belong to a valid
// encoding becomes U+FFFD). It returns s itself when s is clean already,
// and is idempotent.
func CleanText(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case unicode.IsControl(r) && unicode.IsSpace(r):
			b.WriteByte(' ')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clean reports whether s is valid UTF-8 without control characters.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		} else if c >= utf8.RuneSelf {
			if !utf8.ValidString(s) {
				return false
			}
			for _, r := range s[i:] {
				if unicode.IsControl(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// CleanRecord returns raw, a JSON object (a vPIC record), with every string
// value cleaned by CleanText; the keys, their order and every value that
// was clean are kept byte for byte, and raw itself is returned when
// nothing needed cleaning (an ASCII record without escapes is that at a
// glance). A raw that is not a JSON object is returned as it is.
func CleanRecord(raw json.RawMessage) json.RawMessage {
	if plainASCII(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw
	}
	var out bytes.Buffer
	out.WriteByte('{')
	changed := false
	for dec.More() {
		kt, err := dec.Token()
		key, ok := kt.(string)
		if err != nil || !ok {
			return raw
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw
		}
		if c, dirty := cleanValue(v); dirty {
			v, changed = c, true
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	if !changed {
		return raw
	}
	out.WriteByte('}')
	return out.Bytes()
}

// cleanValue is v, a JSON value, with CleanText applied when it is a
// string that needs it (dirty).
func cleanValue(v json.RawMessage) (json.RawMessage, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return v, false
	}
	c := CleanText(s)
	if c == s && utf8.Valid(v) { // json.Unmarshal made invalid bytes U+FFFD already
		return v, false
	}
	b, err := json.Marshal(c)
	if err != nil {
		return v, false
	}
	return b, true
}

// plainASCII reports whether raw is printable ASCII without escapes: no
// string in it can hold a control character or invalid UTF-8.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
