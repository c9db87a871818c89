package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// newPatentsAlert is a stored new_patents alert listing n patents.
func newPatentsAlert(n int) patent.Alert {
	var ch patent.PatentChanges
	for i := range n {
		id := fmt.Sprintf("US%08dB2", 11000000+i)
		ch.New = append(ch.New, patent.Publication{PatentID: id, Title: fmt.Sprintf("Hearing aid <%d> & beamformer", i),
			PublicationDate: "2026-11-03", PDFLink: "https://patentimages.storage.googleapis.com/aa/bb/cc/0123456789abcd/" + id + ".pdf"})
	}
	a, _ := patent.NewPatentsAlert("Oticon", 10, ch)
	a.ID, a.CreatedAt = 7, time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	return a
}

// TestNewPatentsEvent: the generic body is alert.new_patents with the
// alert's patents; the count alert keeps its event type and an empty
// list.
func TestNewPatentsEvent(t *testing.T) {
	e := AlertEvent(newPatentsAlert(12))
	e.id = "msg_1"
	body, err := genericBody(e)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Event string `json:"event"`
		Data  struct {
			AlertType string  `json:"alert_type"`
			NewValue  float64 `json:"new_value"`
			Patents   []struct {
				PatentID string `json:"patent_id"`
			} `json:"patents"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Event != EventNewPatents || got.Data.AlertType != patent.AlertTypeNewPatents || got.Data.NewValue != 12 ||
		len(got.Data.Patents) != 12 || got.Data.Patents[11].PatentID != "US11000011B2" {
		t.Errorf("generic body = %s", body)
	}
	if !strings.Contains(string(body), `"pdf_link":"https://patentimages`) || !strings.Contains(string(body), `"publication_date":"2026-11-03"`) {
		t.Errorf("generic body lacks the patents' fields: %s", body)
	}
	count, _ := patent.CountChangeAlert("Oticon", 10, 14, 20)
	ce := AlertEvent(count)
	ce.id = "msg_2"
	body, _ = genericBody(ce)
	if ce.Type != EventAlert || !strings.Contains(string(body), `"patents":[]`) {
		t.Errorf("count alert: type %s, body %s", ce.Type, body)
	}
}

// TestNewPatentsSlack: Slack's message lists the first ten patents, each
// linked to its PDF, their titles escaped, within Slack's limits.
func TestNewPatentsSlack(t *testing.T) {
	e := AlertEvent(newPatentsAlert(12))
	e.id = "msg_1"
	body, err := slackBody(e)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Text   string       `json:"text"`
		Blocks []slackBlock `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Blocks[0].Text.Text != "New patents alert" || !strings.HasPrefix(msg.Text, "12 new patents for Oticon") {
		t.Errorf("header %q, text %q", msg.Blocks[0].Text.Text, msg.Text)
	}
	var links string
	for _, b := range msg.Blocks {
		if b.Text != nil && strings.HasPrefix(b.Text.Text, "• ") {
			links = b.Text.Text
		}
		if b.Text != nil && width(b.Text.Text) > slackMaxSectionText {
			t.Errorf("a section of %d units, over Slack's limit", width(b.Text.Text))
		}
	}
	lines := strings.Split(links, "\n")
	if len(lines) != 10 {
		t.Fatalf("%d linked lines, want the first 10:\n%s", len(lines), links)
	}
	want := "• <https://patentimages.storage.googleapis.com/aa/bb/cc/0123456789abcd/US11000000B2.pdf|US11000000B2> Hearing aid &lt;0&gt; &amp; beamformer (2026-11-03)"
	if lines[0] != want {
		t.Errorf("first line = %q\nwant %q", lines[0], want)
	}
	if strings.Contains(links, "US11000010B2") {
		t.Error("the 11th patent is listed")
	}
}

// TestLinkLines: a URL Slack's link syntax cannot carry is left out, the
// id shown plain; long notes are cut to share the section.
func TestLinkLines(t *testing.T) {
	got := linkLines([]Link{{Text: "US1B2", URL: "https://x.example/a|b.pdf", Note: "t"}, {Text: "US2B2", Note: strings.Repeat("x", 5000)}})
	lines := strings.Split(got, "\n")
	if lines[0] != "• US1B2 t" || width(got) > slackMaxSectionText || !strings.HasSuffix(lines[1], "…") {
		t.Errorf("linkLines = %q", got)
	}
}
