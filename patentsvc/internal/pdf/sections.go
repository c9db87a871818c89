package pdf

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// This file finds the sections in the lines of a document. The patterns
// are tolerant on purpose: most patent PDFs are scans whose text layer
// comes from OCR, which reads "(57)" as "( 57 )", "(5 7)" or "a7)", drops
// the hyphens at line ends and puts spaces around punctuation.

// document is a document's cleaned lines.
type document struct {
	lines []string
	page  []int  // page index of each line
	sheet []bool // per page: a drawing sheet or a front-page continuation
}

var (
	// Running headers and footers.
	reSheet     = regexp.MustCompile(`(?i)\bsheet\s*\d+\s*of\s*\d+\b`)
	reAppPub    = regexp.MustCompile(`(?i)^(?:u\.?\s?s\.?\s*)?patent\s+application\s+publication\b`)
	reUSPatent  = regexp.MustCompile(`(?i)^u\.?\s?s\.?\s*patent\b`)
	rePatentNum = regexp.MustCompile(`(?i)^(?:us|u\.\s?s\.)\s*[\dO][\dO ,./]{5,}\s*[AB]\s?[\dl]?\b`)
	reBarcode   = regexp.MustCompile(`(?i)^us\s*[\dO][\dO. ]{6,}\s*[AB]\s?[\dl]$`)
	rePageN     = regexp.MustCompile(`(?i)^page(?:\s+\d+(?:\s+of\s+\d+)?)?$`)

	// The abstract.
	// The INID code before ABSTRACT may be misread in any of its
	// characters: "(87)", "67)", "657)", "a7)", "©)".
	reAbstractHead = regexp.MustCompile(`^(?i:[(\[{]?\s*[5s]\s*[7t]\s*[)\]}]?\s*|[(\[{]?\s*(?:[^\s)\]}]\s*){1,3}[)\]}]\s*)?(?:ABSTRACT|Abstract)(?i:\s+of\s+the\s+disclosure)?\s*[:.]?\s*(.*)$`)
	reINID57       = regexp.MustCompile(`(?i)^(?:[(\[{]\s*[5s]\s*[7t]\s*[)\]}]|a7\)|\(\s*5\s*7|5\s*7\s*\))\s*(.*)$`)
	reINIDOnly57   = regexp.MustCompile(`^[(\[{]?\s*[5s]\s*7\s*[)\]}]?$`)
	reINID         = regexp.MustCompile(`^[(\[{]\s*\d\s*\d\s*[)\]}]`)
	reClaimsSheets = regexp.MustCompile(`(?i)^\d+\s*claims?\s*[,.]?\s*\d+\s*drawing\s*sheets?\b`)
	reContinued    = regexp.MustCompile(`(?i)^[(\[{]\s*continued\s*[)\]}]$`)

	// The claims.
	reClaimSignal = regexp.MustCompile(`(?i)^(?:what\s+is\s+claimed\s+is|what\s+is\s+claimed|the\s+invention\s+claimed\s+is|what\s+(?:we|i)\s+claim\s+is|we\s+claim|i\s+claim|it\s+is\s+claimed|claims|the\s+claims\s+are|patent\s+claims)\s*[:;.]?\s*(.*)$`)
	reClaimOne    = regexp.MustCompile(`^[1lI]\s?[.,]\s*\S`)
	reEndMarker   = regexp.MustCompile(`(?i)^(?:(?:\*|[ck]{1,2}|\*k|k\*)\s*){4,6}$`)
	reCertificate = regexp.MustCompile(`(?i)^(?:certificate\s+of\s+correction|united\s+states\s+patent\s+and\s+trademark\s+office)\b`)

	// Section headings.
	reSummaryHead     = regexp.MustCompile(`^(?:BRIEF\s+)?(?:SUMMARY|DISCLOSURE\s+OF\s+(?:THE\s+)?INVENTION)\b`)
	reDescriptionHead = regexp.MustCompile(`^(?:DETAILED\s+DESCRIPTION|DESCRIPTION\s+OF\s+(?:THE\s+)?(?:\w+\s+)?EMBODIMENTS?|(?:BEST\s+)?MODES?\s+FOR\s+CARRYING\s+OUT|DESCRIPTION\s+OF\s+(?:THE\s+)?(?:\w+\s+)?EXAMPLE)`)
	reMajorHead       = regexp.MustCompile(`^(?:BRIEF\s+DESCRIPTION\s+OF\s+(?:THE\s+)?(?:\w+\s+)?(?:DRAWINGS?|FIGURES?)|(?:DRAWINGS?|FIGURES?)\s*$|BACKGROUND|(?:TECHNICAL\s+)?FIELD\b|CROSS[\s-]*REFERENCE|DETAILED\s+DESCRIPTION|DESCRIPTION\s+OF\s+(?:THE\s+)?(?:\w+\s+)?EMBODIMENTS?|(?:BEST\s+)?MODES?\s+FOR\s+CARRYING\s+OUT)`)

	reParaNum = regexp.MustCompile(`\[\s*[0-9Ol]{4,5}\s*\]`)
)

// newDocument drops the running headers from each page and records which
// pages are drawing sheets.
func newDocument(pages [][]string) *document {
	d := &document{sheet: make([]bool, len(pages))}
	for p, lines := range pages {
		for i, l := range lines {
			if i < 4 && p > 0 && isRunningHeader(l) {
				if reSheet.MatchString(l) || rePageN.MatchString(l) {
					d.sheet[p] = true
				}
				continue
			}
			if reBarcode.MatchString(l) {
				continue
			}
			d.lines = append(d.lines, l)
			d.page = append(d.page, p)
		}
	}
	return d
}

// isRunningHeader reports whether l is a page's running header: the patent
// number, "U.S. Patent  Jan. 4, 2022  Sheet 3 of 7", "Page 2", or a column
// number.
func isRunningHeader(l string) bool {
	return reSheet.MatchString(l) && (reUSPatent.MatchString(l) || reAppPub.MatchString(l) || strings.Contains(l, "US")) ||
		reAppPub.MatchString(l) || rePatentNum.MatchString(l) || reBarcode.MatchString(l) ||
		rePageN.MatchString(l) || isNumber(l)
}

// findSections finds the sections of a document given as lines per page.
func findSections(pages [][]string) patent.Sections {
	d := newDocument(pages)
	v := newVocabulary(d.lines)
	var s patent.Sections
	s.Abstract = normalize(v.join(d.abstract()))

	claimsAt, claimsEnd := d.claims()
	bodyEnd := len(d.lines)
	if claimsAt >= 0 {
		bodyEnd = claimsAt
		s.Claims = splitClaims(v.join(d.lines[claimsAt:claimsEnd]))
	}
	start := d.bodyStart(bodyEnd)
	if start < 0 {
		return s
	}
	body := d.lines[start:bodyEnd]
	if a, b := headedSection(body, reSummaryHead); a >= 0 {
		s.Summary = normalize(v.join(body[a:b]))
	}
	if a, _ := headedSection(body, reDescriptionHead); a >= 0 {
		s.Description = normalize(v.join(body[a:]))
	} else {
		s.Description = normalize(v.join(body))
	}
	return s
}

// abstract returns the abstract's lines: from "(57) ABSTRACT" on the first
// pages to "N Claims, M Drawing Sheets", the next INID code or the end of
// its column, following "(Continued)" onto the next page.
func (d *document) abstract() []string {
	at, first := d.abstractStart()
	if at < 0 {
		return nil
	}
	var out []string
	if first != "" {
		out = append(out, first)
	}
	page := d.page[at]
	for i := at + 1; i < len(d.lines); i++ {
		l := d.lines[i]
		if d.page[i] != page {
			break
		}
		// Before the first line of text: a misread INID code, the
		// heading again, or a speck read as a word ("So").
		if len(out) == 0 && (reINIDOnly57.MatchString(l) || strings.EqualFold(l, "abstract") || len(strings.Fields(l)) < 2) {
			continue
		}
		if reClaimsSheets.MatchString(l) || reINID.MatchString(l) {
			break
		}
		if reContinued.MatchString(l) {
			out = append(out, d.continuation(page+1)...)
			break
		}
		if isScrap(l) {
			// Specks of the scan that OCR read as ". an ." or "| _":
			// inside a sentence they are passed over (the abstract
			// goes on below them); after a finished one they are
			// the figure's.
			if len(out) == 0 || !endsSentence(out[len(out)-1]) {
				continue
			}
			break
		}
		if len(out) > 0 && endsAbstract(out[len(out)-1], l) {
			break
		}
		out = append(out, l)
	}
	return out
}

// isScrap reports whether line l is no text but specks read by OCR: more
// other marks than letters, or marks that stand alone (". an .") with at
// most three letters.
func isScrap(l string) bool {
	letters, other, alone := 0, 0, 0
	for _, f := range strings.Fields(l) {
		if !strings.ContainsFunc(f, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
			alone++
		}
		for _, c := range f {
			if unicode.IsLetter(c) {
				letters++
			} else {
				other++
			}
		}
	}
	return letters < other || alone > 0 && letters <= 3
}

// abstractStart finds the abstract heading, on the first two pages or,
// failing that, anywhere as a line of its own. It returns the heading's
// line and any abstract text on the same line.
func (d *document) abstractStart() (int, string) {
	for i, l := range d.lines {
		if d.page[i] > 1 {
			break
		}
		// "Abstract" starting a sentence in prose is not the heading.
		if m := reAbstractHead.FindStringSubmatch(l); m != nil && !startsLower(m[1]) {
			return i, m[1]
		}
	}
	for i, l := range d.lines {
		if d.page[i] > 1 {
			break
		}
		if m := reINID57.FindStringSubmatch(l); m != nil && !startsLower(m[1]) {
			return i, m[1]
		}
	}
	for i, l := range d.lines {
		if strings.TrimRight(l, ":. ") == "ABSTRACT" || strings.TrimRight(l, ":. ") == "Abstract" {
			return i, ""
		}
	}
	return -1, ""
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// continuation returns the rest of an abstract continued on page p, which
// comes first on that page after the running header.
func (d *document) continuation(p int) []string {
	var out []string
	for i, l := range d.lines {
		if d.page[i] < p {
			continue
		}
		if d.page[i] > p || reINID.MatchString(l) {
			break
		}
		if reClaimsSheets.MatchString(l) {
			return out
		}
		if isScrap(l) {
			continue
		}
		if len(out) > 0 && endsAbstract(out[len(out)-1], l) {
			break
		}
		out = append(out, l)
	}
	// Without the "N Claims" line that closes an abstract, what follows the
	// header is not known to be the abstract.
	return nil
}

// endsAbstract reports whether line l, after prev, is no longer part of an
// abstract: a label of a figure (fewer than three words) after a finished
// sentence.
func endsAbstract(prev, l string) bool {
	return endsSentence(prev) && len(strings.Fields(l)) < 3
}

// endsSentence reports whether line l ends a sentence.
func endsSentence(l string) bool {
	l = strings.TrimRight(l, " )\"”'")
	return strings.HasSuffix(l, ".") || strings.HasSuffix(l, "!") || strings.HasSuffix(l, "?")
}

// claims returns the claims' lines as [from, to): from the last claim
// signal followed by claim 1 to the end marker "* * * * *" (OCR: "k k k k
// k"), a certificate of correction or the end. from is -1 without claims.
func (d *document) claims() (int, int) {
	at := -1
	weak := -1
	for i, l := range d.lines {
		m := reClaimSignal.FindStringSubmatch(l)
		if m == nil || !d.claimOneFollows(i, m[1]) {
			continue
		}
		if strings.EqualFold(strings.TrimRight(l, ":;. "), "claims") {
			weak = i
		} else {
			at = i
		}
	}
	if at < 0 {
		at = weak
	}
	if at < 0 {
		return -1, -1
	}
	for i := at + 1; i < len(d.lines); i++ {
		if reEndMarker.MatchString(d.lines[i]) || reCertificate.MatchString(d.lines[i]) ||
			endsSentence(d.lines[i-1]) && isMarkerScrap(d.lines[i]) {
			return at, i
		}
	}
	return at, len(d.lines)
}

// isMarkerScrap reports whether l may be the end marker "* * * * *" as OCR
// read it in the worst case ("eR Re &"): three to six marks of at most two
// characters, none a digit.
func isMarkerScrap(l string) bool {
	f := strings.Fields(l)
	if len(f) < 3 || len(f) > 6 {
		return false
	}
	for _, w := range f {
		if utf8.RuneCountInString(w) > 2 || strings.ContainsFunc(w, unicode.IsDigit) {
			return false
		}
	}
	return true
}

// claimOneFollows reports whether claim 1 starts right after the claim
// signal on line i, on the same line (rest) or the next. A rest of up to
// three characters is what OCR left of the signal's end ("What is
// claimed i").
func (d *document) claimOneFollows(i int, rest string) bool {
	if rest = strings.TrimSpace(rest); utf8.RuneCountInString(rest) > 3 {
		return reClaimOne.MatchString(rest)
	}
	return i+1 < len(d.lines) && reClaimOne.MatchString(d.lines[i+1])
}

// bodyStart returns the first line of the specification: the first line,
// before end, of a page after the first that is not a drawing sheet or a
// front-page continuation. It returns -1 when there is none.
func (d *document) bodyStart(end int) int {
	for i := 0; i < end; i++ {
		if p := d.page[i]; p > 0 && !d.sheet[p] {
			return i
		}
	}
	return -1
}

// headedSection finds the first heading in lines that matches head and
// returns the section's lines after it as [from, to), ending at the next
// major heading; from is -1 when there is no such heading.
func headedSection(lines []string, head *regexp.Regexp) (int, int) {
	for i, l := range lines {
		if !isHeading(l) {
			continue
		}
		from := i + 1
		if !head.MatchString(l) {
			// A heading may wrap onto a second line: "DESCRIPTION OF THE
			// PREFERRED" / "EMBODIMENTS".
			if from >= len(lines) || !isHeading(lines[from]) || !head.MatchString(l+" "+lines[from]) {
				continue
			}
			from++
		} else if from < len(lines) && isHeading(lines[from]) && len(strings.Fields(lines[from])) <= 3 && !reMajorHead.MatchString(lines[from]) {
			from++ // the heading's second line
		}
		for j := from; j < len(lines); j++ {
			if !isHeading(lines[j]) || head.MatchString(lines[j]) {
				continue
			}
			if reMajorHead.MatchString(lines[j]) ||
				j+1 < len(lines) && isHeading(lines[j+1]) && reMajorHead.MatchString(lines[j]+" "+lines[j+1]) {
				return from, j
			}
		}
		return from, len(lines)
	}
	return -1, -1
}

// isHeading reports whether l looks like a section heading: a short line
// in capitals.
func isHeading(l string) bool {
	words := strings.Fields(l)
	if len(words) == 0 || len(words) > 12 {
		return false
	}
	upper, lower := 0, 0
	for _, c := range l {
		switch {
		case unicode.IsUpper(c):
			upper++
		case unicode.IsLower(c):
			lower++
		}
	}
	return upper >= 4 && lower*5 <= upper
}

// normalize cleans a section's text: paragraph numbers "[0001]" go, the
// spaces OCR puts around punctuation go, and whitespace becomes single
// spaces.
func normalize(s string) string {
	s = reParaNum.ReplaceAllString(s, " ")
	s = strings.Join(strings.Fields(s), " ")
	for _, r := range punctFixes {
		// Twice, as matches that share a character ("a - b - c") are
		// found one at a time.
		s = r.re.ReplaceAllString(s, r.repl)
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return strings.TrimSpace(s)
}

var punctFixes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(\d) , (\d{3})\b`), "$1,$2"},
	{regexp.MustCompile(`(\d) \. (\d)`), "$1.$2"},
	{regexp.MustCompile(` ([,.;:!?%)\]”’])`), "$1"},
	{regexp.MustCompile(`([(\[“‘]) `), "$1"},
	{regexp.MustCompile(`(\w) - (\w)`), "$1-$2"},
	{regexp.MustCompile(`(\w) / (\w)`), "$1/$2"},
}
