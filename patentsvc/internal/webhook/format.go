package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Slack Block Kit limits (research/patent.md §3.1 and Slack's reference):
// a longer text or more blocks makes Slack answer 400 invalid_blocks.
const (
	slackMaxBlocks      = 50
	slackMaxSectionText = 3000
	slackMaxHeaderText  = 150
	slackMaxFieldText   = 2000
	slackMaxFields      = 10 // per section
	// slackMaxLinks is the most linked lines a message shows (a
	// new_patents alert's first ten patents; decisions.md).
	slackMaxLinks = 10
)

// IsSlack reports whether rawURL is a Slack incoming webhook, which gets
// Slack's {"text","blocks"} format: host hooks.slack.com (any case, any
// port) and a path starting /services/. Slack's /triggers/ URLs (Workflow
// Builder) take arbitrary JSON and get the generic format, as does
// everything else.
func IsSlack(rawURL string) bool {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Hostname(), "hooks.slack.com") && strings.HasPrefix(u.EscapedPath(), "/services/")
}

// genericBody is the format of every URL but Slack's:
// {"event","id","timestamp","data"} and nothing else.
func genericBody(e Event) ([]byte, error) {
	var data any = json.RawMessage("{}")
	if e.Data != nil {
		data = e.Data
	}
	b, err := json.Marshal(struct {
		Event     string `json:"event"`
		ID        string `json:"id"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{e.Type, e.id, e.Timestamp.UTC().Format(time.RFC3339Nano), data})
	if err != nil {
		return nil, fmt.Errorf("encode event data: %w", err)
	}
	return b, nil
}

type slackText struct {
	Type string `json:"type"` // plain_text or mrkdwn
	Text string `json:"text"`
	// Verbatim, on every mrkdwn text: Slack does not turn a bare URL or
	// a mention in it into a link (decisions.md, "Both services: ...
	// identities that cannot pose as others").
	Verbatim bool `json:"verbatim,omitempty"`
}

// mrkdwn is a mrkdwn text object, verbatim.
func mrkdwn(s string) slackText { return slackText{Type: "mrkdwn", Text: s, Verbatim: true} }

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

// slackTitles are the header lines of the known event types.
var slackTitles = map[string]string{
	EventJobCompleted: "Patent analysis job finished",
	EventAlert:        "Patent count change alert",
	EventNewPatents:   "New patents alert",
}

// slackBody is Slack's format: a header, the summary, the fields ten to a
// section, and a context line with the event id and time, within Slack's
// limits. text (the notification fallback) is the summary.
func slackBody(e Event) ([]byte, error) {
	title := slackTitles[e.Type]
	if title == "" {
		title = e.Type
	}
	summary := strings.TrimSpace(flat(e.Summary))
	text := summary
	if text == "" {
		text = title
	}
	blocks := []slackBlock{{Type: "header", Text: &slackText{Type: "plain_text", Text: fit(flat(title), slackMaxHeaderText, false)}}}
	if summary != "" {
		blocks = append(blocks, slackBlock{Type: "section", Text: ptr(mrkdwn(atLineStart(fit(summary, slackMaxSectionText, true))))})
	}
	// One block is kept for the context line, and one for the links.
	room := (slackMaxBlocks - len(blocks) - 2) * slackMaxFields
	shown := e.Fields[:min(len(e.Fields), room)]
	for len(shown) > 0 {
		n := min(len(shown), slackMaxFields)
		b := slackBlock{Type: "section"}
		for _, f := range shown[:n] {
			b.Fields = append(b.Fields, mrkdwn(fieldText(f)))
		}
		blocks = append(blocks, b)
		shown = shown[n:]
	}
	if lines := linkLines(e.Links); lines != "" {
		blocks = append(blocks, slackBlock{Type: "section", Text: ptr(mrkdwn(lines))})
	}
	ctx := fmt.Sprintf("Event %s at %s", e.id, e.Timestamp.UTC().Format(time.RFC3339))
	if left := len(e.Fields) - room; left > 0 {
		ctx += fmt.Sprintf(" (%d more fields not shown)", left)
	}
	blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{mrkdwn(fit(ctx, slackMaxSectionText, true))}})

	b, err := json.Marshal(struct {
		Text   string       `json:"text"`
		Blocks []slackBlock `json:"blocks"`
	}{atLineStart(fit(text, slackMaxSectionText, true)), blocks})
	if err != nil {
		return nil, fmt.Errorf("encode slack message: %w", err)
	}
	return b, nil
}

// linkLines are links as one mrkdwn text, a line each: "• <URL|Text>
// Note", within Slack's section limit (each line gets an equal share).
// Text and Note are escaped; a URL that holds a character Slack's link
// syntax cannot carry (|, <, >, white space) is left out, the text shown
// plain.
func linkLines(links []Link) string {
	links = links[:min(len(links), slackMaxLinks)]
	if len(links) == 0 {
		return ""
	}
	share := slackMaxSectionText/len(links) - 1
	lines := make([]string, len(links))
	for i, l := range links {
		text := fit(flat(l.Text), 60, true)
		if l.URL != "" && !strings.ContainsAny(l.URL, "|<> \t\n") && len(l.URL) < share-80 {
			text = "<" + l.URL + "|" + text + ">"
		}
		line := "• " + text
		if note := strings.TrimSpace(flat(l.Note)); note != "" {
			line += " " + fit(note, share-width(line)-1, true)
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// fieldText is a field as "*Label*\nValue". Slack refuses empty texts, so
// an empty value shows as "-".
func fieldText(f Field) string {
	v := strings.TrimSpace(flat(f.Value))
	if v == "" {
		v = "-"
	}
	l := strings.TrimSpace(flat(f.Label))
	if l == "" {
		return atLineStart(fit(v, slackMaxFieldText, true))
	}
	lt := fit(l, slackMaxFieldText/4, true)
	return "*" + lt + "*\n" + atLineStart(fit(v, slackMaxFieldText-width(lt)-4, true))
}

// flat is text from an upstream as a Slack message may show it: on one
// line, so that it cannot start a line of its own (a quote, a list) or
// end one of ours: line breaks and other control characters become
// spaces; bidirectional controls (which could turn the text around, or
// the message's after it) are removed; a backtick becomes U+02CB, which
// looks the same but opens no code span or fence. &, < and > are escaped
// by fit.
func flat(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
			return ' '
		case bidiControl(r):
			return -1
		case r == '`':
			return '\u02cb'
		}
		return r
	}, s)
}

// bidiControl reports the characters that change the direction of text:
// the marks, embeddings, overrides and isolates (Unicode's Bidi_Control).
func bidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// atLineStart is an escaped text that starts a line of the message: one
// that starts with "&gt;" (a quote, in mrkdwn) gets a zero-width space
// before it, so it shows as written.
func atLineStart(s string) string {
	if strings.HasPrefix(s, "&gt;") {
		return "\u200b" + s
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// fit returns s, escaped for Slack's mrkdwn when escape is set (&, < and >
// are control characters there; company names may hold '&'), cut to at
// most limit UTF-16 code units (Slack does not document how it counts;
// UTF-16 units are never fewer than characters) and ended with an ellipsis
// when cut. An entity such as &amp; is never split.
func fit(s string, limit int, escape bool) string {
	piece := func(r rune) (string, int) {
		if escape {
			switch r {
			case '&':
				return "&amp;", 5
			case '<':
				return "&lt;", 4
			case '>':
				return "&gt;", 4
			}
		}
		return string(r), width(string(r))
	}
	total := 0
	for _, r := range s {
		_, w := piece(r)
		total += w
	}
	cut := total > limit
	if !cut && !escape {
		return s
	}
	budget := limit
	if cut {
		budget = limit - 1 // room for the ellipsis
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		p, w := piece(r)
		if n+w > budget {
			break
		}
		b.WriteString(p)
		n += w
	}
	if cut {
		b.WriteString("…")
	}
	return b.String()
}

// width is the length of s in UTF-16 code units.
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
