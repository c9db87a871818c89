package pdf

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// reClaimMark finds candidate claim numbers: "12." (OCR also "12,", and
// "l." or "I." for 1) at the start of the text, of a line, or after the
// end of a sentence or clause.
var reClaimMark = regexp.MustCompile(`(?:^|\n|[.;:]\s)[ \t]*(\d{1,3}|[lI])\s?[.,][ \t\n]+`)

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
	for _, m := range reClaimMark.FindAllStringSubmatchIndex(text, -1) {
		num := text[m[2]:m[3]]
		n, err := strconv.Atoi(num)
		if err != nil {
			n = 1 // "l." or "I."
			if next != 1 {
				continue
			}
		}
		if n != next || !startsClaim(text[m[1]:]) {
			continue
		}
		if textAt >= 0 {
			claims[len(claims)-1].Text = cleanClaim(text[textAt:m[2]])
		}
		claims = append(claims, patent.Claim{Number: n})
		textAt = m[1]
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

// startsClaim reports whether s begins like a claim: a capital letter, a
// quote or a bracket.
func startsClaim(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || strings.ContainsRune(`"“'(`, r)
}

// cleanClaim normalises a claim's text and drops an end marker that
// trails it.
func cleanClaim(s string) string {
	s = normalize(s)
	for {
		t := strings.TrimRight(s, " *")
		if t == s {
			break
		}
		s = t
	}
	return s
}
