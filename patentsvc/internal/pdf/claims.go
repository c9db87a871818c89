package pdf

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// reClaimMark finds candidate claim numbers: "12." (OCR also "12,",
// "l." or "I." for 1 and "§." or "S." for 5) at the start of the text, of
// a line, or after the end of a sentence or clause.
var reClaimMark = regexp.MustCompile(`(?:^|\n|[.;:]\s)[ \t]*(\d{1,3}|[lI§S])\s?[.,][ \t\n]+`)

// misread maps the letters OCR reads for a one-digit claim number to the
// number.
var misread = map[string]int{"l": 1, "I": 1, "§": 5, "S": 5}

// reDependent finds a reference to another claim: "claim 1", "claims 1-3",
// "claim l" (OCR), "any one of the preceding claims".
var reDependent = regexp.MustCompile(`(?i)\bclaims?\s*(?:\d|[lI]\b)|\b(?:preceding|previous|foregoing|above|prior)\s+claims?\b|\bany\s+(?:one\s+)?of\s+claims\b`)

// splitClaims splits the text of a claims section into claims. Claim N+1
// starts at the first "N+1." that follows claim N and begins a sentence
// with a capital letter or a quote, so numbers inside a claim ("about 2.
// The") only split when they are the expected next number. Text before
// claim 1 (the claim signal) is dropped.
func splitClaims(text string) []patent.Claim {
	var claims []patent.Claim
	next := 1
	textAt := -1 // where the current claim's text starts
	marks := claimMarks(text)
	for i, m := range marks {
		n := m.n
		if n == 0 {
			// A dependent claim whose number OCR lost: taken as
			// claim next when "next." is missing, that is when the
			// next numbered claim is next+1.
			if textAt < 0 || nextNumbered(marks[i+1:], next) != next+1 {
				continue
			}
			n = next
		}
		if n != next || !startsClaim(text[m.textAt:]) {
			continue
		}
		if textAt >= 0 {
			claims[len(claims)-1].Text = cleanClaim(text[textAt:m.at])
		}
		claims = append(claims, patent.Claim{Number: n})
		textAt = m.textAt
		next++
	}
	if textAt >= 0 {
		claims[len(claims)-1].Text = cleanClaim(text[textAt:])
	}
	for i := range claims {
		claims[i].Independent = !reDependent.MatchString(claims[i].Text)
	}
	// A claim left empty was a false start.
	out := claims[:0]
	for _, c := range claims {
		if c.Text != "" {
			out = append(out, c)
		}
	}
	return out
}

// reUnnumbered finds a line that starts a dependent claim without its
// number, after a line that ends a sentence: "The device of claim 1,".
var reUnnumbered = regexp.MustCompile(`[.;]\n((?:The|An?)\s[^\n]{0,80}?\b(?:of|to|in|by)\s+claim\s+\d{1,3}\b)`)

// claimMark is where a claim may start in a claims section's text: the
// number n (0 when the line has none) at text[at:], the claim's text from
// textAt.
type claimMark struct {
	n, at, textAt int
}

// claimMarks returns the candidate claim starts of text in order: the
// numbered ones, and lines that read like a dependent claim whose number
// was lost.
func claimMarks(text string) []claimMark {
	var marks []claimMark
	for _, m := range reClaimMark.FindAllStringSubmatchIndex(text, -1) {
		num := text[m[2]:m[3]]
		n, err := strconv.Atoi(num)
		if err != nil {
			n = misread[num]
		}
		if n > 0 {
			marks = append(marks, claimMark{n: n, at: m[2], textAt: m[1]})
		}
	}
	for _, m := range reUnnumbered.FindAllStringSubmatchIndex(text, -1) {
		marks = append(marks, claimMark{at: m[2], textAt: m[2]})
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].at < marks[j].at })
	return marks
}

// nextNumbered returns the first number of at least n among marks, or 0.
func nextNumbered(marks []claimMark, n int) int {
	for _, m := range marks {
		if m.n >= n {
			return m.n
		}
	}
	return 0
}

// startsClaim reports whether s begins like a claim: a capital letter, a
// quote or a bracket.
func startsClaim(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || strings.ContainsRune(`"“'(`, r)
}

// cleanClaim normalises a claim's text and drops an end marker that
// trails it, and the rows of a table that trail its last sentence (a
// table at the top of the next column, read by OCR as text: words with
// no lower-case one among them, numbers).
func cleanClaim(s string) string {
	s = normalize(s)
	for {
		t := strings.TrimRight(s, " *")
		if t == s {
			break
		}
		s = t
	}
	if i := strings.LastIndex(s, ". "); i >= 0 && isTableRows(s[i+2:]) {
		s = s[:i+1]
	}
	return s
}

// isTableRows reports whether s, at least three words, has none that
// starts with a lower-case letter.
func isTableRows(s string) bool {
	f := strings.Fields(s)
	if len(f) < 3 {
		return false
	}
	for _, w := range f {
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsLower(r) {
			return false
		}
	}
	return true
}
