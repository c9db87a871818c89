package patent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from upstreams (the model's answers, search results, PDF text) is
// stored as CleanText makes it, and a model's answer is cut by CutAnswer
// (decisions.md, "Both services: hostile input answered, never a 5xx"):
// PostgreSQL refuses NUL characters and invalid UTF-8 in text columns
// (SQLSTATE 22021), which SQLite stores, so the two databases would keep
// different things, and an answer PostgreSQL refuses is lost, with its
// cache entry.

// DefaultMaxAnswerBytes is the default cap on a stored model answer
// (LLM_MAX_ANSWER_KB, 256 KiB).
const DefaultMaxAnswerBytes = 256 << 10

// AnswerTruncated ends a model answer that CutAnswer cut.
const AnswerTruncated = "[answer truncated]"

// truncatedTail is what CutAnswer appends: the marker as a paragraph of its
// own, so a Markdown answer shows it apart from the cut text.
const truncatedTail = "\n\n" + AnswerTruncated

// CleanText returns s without NUL characters (U+0000) and as valid UTF-8:
// every byte that does not belong to a valid UTF-8 encoding becomes
// U+FFFD, one per byte (so "\xff\xfe" becomes two), as Go's JSON decoder
// and a range loop over a string read such bytes; text that reached us
// through JSON and text read from a PDF are therefore cleaned alike.
// Encodings of surrogate halves (U+D800 to U+DFFF) and of code points past
// U+10FFFF are invalid UTF-8 and are replaced byte by byte too. U+FFFD
// already in s, and every other character, control characters included,
// is kept.
//
// CleanText is idempotent, and returns s itself when s is already clean.
func CleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != 0 {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// CutAnswer returns answer when it is at most maxBytes long. A longer one
// is cut at a character boundary, white space at the cut is dropped, and
// "\n\n" and AnswerTruncated follow: the whole is at most maxBytes.
// maxBytes of 0 or less means no cap; a cap shorter than the marker and
// its separator (20 bytes) is raised to that length, so a cut answer
// always says it was cut.
//
// answer should be clean (CleanText): invalid UTF-8 before the cut is
// kept as it is. CutAnswer is idempotent.
func CutAnswer(answer string, maxBytes int) string {
	if maxBytes <= 0 {
		return answer
	}
	maxBytes = max(maxBytes, len(truncatedTail))
	if len(answer) <= maxBytes {
		return answer
	}
	n := maxBytes - len(truncatedTail)
	// Back to the start of the character that straddles n (at most
	// utf8.UTFMax-1 continuation bytes in valid UTF-8).
	for n > 0 && !utf8.RuneStart(answer[n]) {
		n--
	}
	return strings.TrimRightFunc(answer[:n], unicode.IsSpace) + truncatedTail
}
