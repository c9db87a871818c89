package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// hostile is upstream text that tries to reshape a Slack message: a line
// break that starts a quote, a code fence, a right-to-left override, a
// bare URL, a mention and Slack's own link syntax.
const hostile = "Beamformer\n&gt; quoted\n> also quoted ```rm -rf``` \u202eevil\u202c https://evil.example/x <@U123> <https://evil.example|click>"

// TestSlackTextCannotReshapeTheMessage (decisions.md, "Both services: ...
// identities that cannot pose as others"): text from an upstream (a
// patent's title, a company's name, an alert's message) shows in a Slack
// message on one line, without bidirectional controls, escaped, with no
// code span, no quote of its own at a line's start, and in text objects
// that Slack takes verbatim (no bare URL or mention made a link).
func TestSlackTextCannotReshapeTheMessage(t *testing.T) {
	ch := patent.PatentChanges{New: []patent.Publication{{PatentID: "US1B2", Title: hostile, PublicationDate: "2026-11-03",
		PDFLink: "https://patentimages.storage.googleapis.com/US1B2.pdf"}}}
	a, _ := patent.NewPatentsAlert("> Acme\nCorp", 10, ch)
	a.ID, a.CreatedAt = 7, time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	e := AlertEvent(a)
	e.id = "msg_1"
	e.Fields = append(e.Fields, Field{Label: "Title", Value: hostile})
	body, err := slackBody(e)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string      `json:"type"`
			Text     *slackText  `json:"text"`
			Fields   []slackText `json:"fields"`
			Elements []slackText `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	texts := []slackText{{Type: "plain_text", Text: msg.Text}}
	for _, b := range msg.Blocks {
		if b.Text != nil {
			texts = append(texts, *b.Text)
		}
		texts = append(texts, b.Fields...)
		texts = append(texts, b.Elements...)
	}
	for _, tx := range texts {
		if tx.Type == "mrkdwn" && !tx.Verbatim {
			t.Errorf("mrkdwn text without verbatim: %q", tx.Text)
		}
		for _, bad := range []string{"\u202e", "\u202c", "```", "`", "<@U123>", "<https://evil.example|click>", "\n&gt;", "\n>"} {
			if strings.Contains(tx.Text, bad) {
				t.Errorf("text %q holds %q", tx.Text, bad)
			}
		}
		for _, line := range strings.Split(tx.Text, "\n") {
			if strings.HasPrefix(line, "&gt;") || strings.HasPrefix(line, ">") {
				t.Errorf("a line starts a quote: %q", line)
			}
		}
	}
	// Every line is one of ours (a field's label, then its value): the
	// title's line breaks became spaces.
	breaks, title := 0, ""
	for _, tx := range texts {
		breaks += strings.Count(tx.Text, "\n")
		if strings.HasPrefix(tx.Text, "*Title*\n") {
			title = strings.TrimPrefix(tx.Text, "*Title*\n")
		}
	}
	if breaks != 4 {
		t.Errorf("%d line breaks in the message, want the 4 of its own layout (4 fields): %s", breaks, body)
	}
	const want = "Beamformer &amp;gt; quoted &gt; also quoted ˋˋˋrm -rfˋˋˋ evil https://evil.example/x &lt;@U123&gt; &lt;https://evil.example|click&gt;"
	if title != want {
		t.Errorf("the title shows as %q, want %q", title, want)
	}
}

// FuzzSlackText: whatever an upstream sends, the text a Slack message
// shows of it (flat, then fit) holds no control or bidirectional
// character, no backtick and no bare & < > of Slack's syntax, and fits
// its limit.
func FuzzSlackText(f *testing.F) {
	for _, s := range []string{hostile, "Acme & Sons <Ltd>", "```code```", "a\u2028b\u2029c", "&gt; quote", "x\u202ey"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, in string, limit int) {
		limit = 8 + int(uint(limit)%300)
		got := fit(flat(in), limit, true)
		if width(got) > limit {
			t.Fatalf("fit(flat(%q), %d) = %q: %d units", in, limit, got, width(got))
		}
		for _, r := range got {
			if unicode.IsControl(r) || bidiControl(r) || r == '`' || r == '<' || r == '>' || r == '\u2028' || r == '\u2029' {
				t.Fatalf("fit(flat(%q), %d) = %q holds %U", in, limit, got, r)
			}
		}
		// Every & starts one of the three entities fit writes.
		for i := strings.IndexByte(got, '&'); i >= 0; {
			rest := got[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				t.Fatalf("fit(flat(%q), %d) = %q: a bare & at %d", in, limit, got, i)
			}
			j := strings.IndexByte(rest[1:], '&')
			if j < 0 {
				break
			}
			i += j + 1
		}
	})
}
