package pdf

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// vocabulary counts the words of a document that stand inside a line, not
// at either end, where a word may be half of a word broken across lines.
// It lets join decide whether "com" + "puter" is one word.
type vocabulary map[string]int

func newVocabulary(lines []string) vocabulary {
	v := vocabulary{}
	for _, l := range lines {
		words := strings.Fields(l)
		for i := 1; i < len(words)-1; i++ {
			if w := wordCore(words[i]); w != "" {
				v[w]++
			}
		}
	}
	return v
}

// wordCore lowercases w and strips punctuation around it; it is empty when
// w has anything but letters inside.
func wordCore(w string) string {
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return ""
		}
	}
	return strings.ToLower(w)
}

// suffixes are line-start fragments of words broken by hyphenation that
// are not words of their own.
var suffixes = map[string]bool{
	"able": true, "ably": true, "ally": true, "ance": true, "ances": true,
	"ancy": true, "ane": true, "ary": true, "ated": true, "ates": true,
	"ating": true, "ation": true, "ations": true, "ator": true, "ators": true,
	"ber": true, "bers": true, "cal": true, "cing": true, "ded": true,
	"ding": true, "ed": true, "ence": true, "ences": true, "ency": true,
	"ene": true, "ent": true, "ents": true, "ers": true, "fer": true,
	"fers": true, "ful": true, "fully": true, "gies": true, "ging": true,
	"graphy": true, "ible": true, "ibly": true, "ic": true, "ical": true,
	"ically": true, "ics": true, "ide": true, "ides": true, "ied": true,
	"ient": true, "ients": true, "ier": true, "ies": true, "iest": true,
	"ine": true, "ines": true, "ing": true, "ings": true, "ise": true,
	"ised": true, "ism": true, "ist": true, "ists": true, "ities": true,
	"ity": true, "ium": true, "ive": true, "ively": true, "ives": true,
	"ize": true, "ized": true, "izes": true, "izing": true, "king": true,
	"less": true, "lessly": true, "ling": true, "lings": true, "logies": true,
	"logy": true, "ly": true, "ment": true, "ments": true, "ness": true,
	"nesses": true, "ning": true, "nomy": true, "ories": true, "ory": true,
	"ose": true, "oses": true, "ous": true, "ously": true, "ping": true,
	"ple": true, "ples": true, "ring": true, "sing": true, "sion": true,
	"sions": true, "ted": true, "ter": true, "ters": true, "tial": true,
	"tially": true, "ting": true, "tion": true, "tions": true, "tive": true,
	"tives": true, "tling": true, "tor": true, "tors": true, "tric": true,
	"trical": true, "tronic": true, "tronics": true, "ture": true,
	"tures": true, "ual": true, "ually": true, "ular": true, "ularly": true,
	"ure": true, "ures": true, "ving": true, "ward": true, "wards": true,
	"yl": true, "ylene": true, "zing": true,
}

// join joins lines into text, mending words broken at line ends: "opera-"
// + "tion" is "operation", "anti-" + "HIV" is "anti-HIV", and, because OCR
// drops the hyphen, "com" + "puter" is "computer" when the document uses
// "computer" elsewhere or when the second half is a bare suffix ("ing"). Other line breaks stay as
// newlines, which claim splitting relies on.
func (v vocabulary) join(lines []string) string {
	parts := make([]string, 0, 2*len(lines))
	last := -1 // index in parts of the previous line
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if last >= 0 {
			prev := parts[last]
			sep := v.separator(prev, l)
			if sep == "" && strings.HasSuffix(prev, "-") && !keepHyphen(prev, l) {
				parts[last] = strings.TrimSuffix(prev, "-")
			}
			parts = append(parts, sep)
		}
		parts = append(parts, l)
		last = len(parts) - 1
	}
	return strings.Join(parts, "")
}

// separator returns what goes between the text so far and the next line:
// "" to mend a broken word, else a newline.
func (v vocabulary) separator(prev, next string) string {
	last := lastField(prev)
	first := firstField(next)
	if last == "" || first == "" {
		return "\n"
	}
	r, _ := utf8.DecodeRuneInString(first)
	if strings.HasSuffix(last, "-") {
		stem := strings.TrimSuffix(last, "-")
		if s, _ := utf8.DecodeLastRuneInString(stem); unicode.IsLetter(s) && unicode.IsLetter(r) {
			return ""
		}
		return "\n"
	}
	if !unicode.IsLower(r) {
		return "\n"
	}
	// Only the part after an inner hyphen: "non-forge" + "able".
	a := wordCore(last[strings.LastIndex(last, "-")+1:])
	bw := wordCore(strings.TrimRight(first, ",.;:)"))
	// Only a word that runs to the end of the line can be broken.
	if a == "" || bw == "" || !endsInLetter(last) || bw != strings.ToLower(strings.TrimRight(first, ",.;:)")) {
		return "\n"
	}
	if v[a+bw] > 0 || suffixes[bw] {
		return ""
	}
	return "\n"
}

// keepHyphen reports whether the hyphen at the end of prev belongs to the
// word ("anti-" + "HIV"): the two halves differ in case.
func keepHyphen(prev, next string) bool {
	stem := strings.TrimSuffix(lastField(prev), "-")
	a, _ := utf8.DecodeLastRuneInString(stem)
	b, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(a) != unicode.IsLower(b)
}

func endsInLetter(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r)
}

func lastField(s string) string {
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	return s[i+1:]
}

func firstField(s string) string {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i]
	}
	return s
}
