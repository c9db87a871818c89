package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/webhook"
)

// rawKey is the key behind whsecSecret.
var rawKey = []byte("0123456789abcdef0123456789abcdef")

var whsecSecret = "whsec_" + base64.StdEncoding.EncodeToString(rawKey)

func TestIsSlack(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"https://hooks.slack.com/services/T000/B000/XXXX", true},
		{"https://HOOKS.Slack.COM/services/T000/B000/XXXX", true},
		{"https://hooks.slack.com:443/services/T000/B000/XXXX", true},
		{"http://hooks.slack.com/services/x", true},
		{"  https://hooks.slack.com/services/x  ", true},
		{"https://hooks.slack.com/triggers/T000/123/abc", false}, // Workflow Builder: generic
		{"https://hooks.slack.com/", false},
		{"https://hooks.slack.com/Services/x", false},
		{"https://hooks.slack.com.evil.example/services/x", false},
		{"https://evil.example/services/x?h=hooks.slack.com", false},
		{"https://slack.com/services/x", false},
		{"hooks.slack.com/services/x", false}, // no scheme: a path, not a host
		{"https://example.com/hook", false},
		{"://bad", false},
		{"", false},
	} {
		if got := webhook.IsSlack(tt.url); got != tt.want {
			t.Errorf("IsSlack(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// TestFormatPerURL sends one event to a Slack incoming webhook, a Slack
// Workflow trigger and a plain URL; each gets its own format.
func TestFormatPerURL(t *testing.T) {
	slack := newReceiver(t, nil)
	generic := newReceiver(t, nil)
	logger, _ := newLogger()
	d := newDispatcher(t, []string{
		"https://hooks.slack.com/services/T0/B0/TOKEN",
		"https://hooks.slack.com/triggers/T0/1/abc",
		generic.URL + "/hook",
	}, whsecSecret, logger)
	// Both Slack URLs share the host; the receiver behind it is chosen by
	// path below.
	webhook.SetTransport(d, rewrite{"hooks.slack.com": slack.URL})
	run(t, d)

	send(t, d, webhook.Event{Type: webhook.EventJobCompleted, Data: map[string]int{"total": 2},
		Summary: "Job j1 finished: 2 companies", Fields: []webhook.Field{{"Job", "j1"}}})

	got := slack.waitN(t, 2, 10*time.Second)
	byPath := map[string]delivery{}
	for _, g := range got {
		byPath[g.path] = g
	}
	s, ok := byPath["/services/T0/B0/TOKEN"]
	if !ok {
		t.Fatalf("Slack receiver paths = %v, want /services/T0/B0/TOKEN", keys(byPath))
	}
	if k := jsonKeys(t, s.body); !reflect.DeepEqual(k, []string{"blocks", "text"}) {
		t.Errorf("Slack body keys = %v, want [blocks text]", k)
	}
	if s.header.Get("webhook-signature") != "" || s.header.Get("webhook-id") != "" {
		t.Errorf("Slack delivery carries webhook-* headers: %v", s.header)
	}
	tr, ok := byPath["/triggers/T0/1/abc"]
	if !ok {
		t.Fatalf("Slack receiver paths = %v, want /triggers/T0/1/abc", keys(byPath))
	}
	if k := jsonKeys(t, tr.body); !reflect.DeepEqual(k, []string{"data", "event", "id", "timestamp"}) {
		t.Errorf("trigger body keys = %v, want the generic format", k)
	}
	if tr.header.Get("webhook-signature") == "" {
		t.Error("trigger delivery is not signed")
	}
	g := generic.waitN(t, 1, 10*time.Second)[0]
	if k := jsonKeys(t, g.body); !reflect.DeepEqual(k, []string{"data", "event", "id", "timestamp"}) {
		t.Errorf("generic body keys = %v, want [data event id timestamp]", k)
	}
}

func keys(m map[string]delivery) []string {
	var k []string
	for p := range m {
		k = append(k, p)
	}
	return k
}

// jsonKeys returns the sorted keys of a JSON object.
func jsonKeys(tb testing.TB, body []byte) []string {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Fatalf("body %s is not a JSON object: %v", body, err)
	}
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func TestGenericBodyAndHeaders(t *testing.T) {
	rc := newReceiver(t, nil)
	d := newDispatcher(t, []string{rc.URL + "/hook"}, "", nil)
	run(t, d)

	at := time.Date(2025, 3, 4, 10, 11, 12, 0, time.FixedZone("CET", 3600))
	first := send(t, d, webhook.Event{Type: webhook.EventAlert, Timestamp: at,
		Data: map[string]any{"company_name": "AT&T <Labs>", "old_count": 10, "new_count": 14}})
	send(t, d, webhook.Event{Type: webhook.EventJobCompleted})
	got := rc.waitN(t, 2, 10*time.Second)
	if jsonID(t, got[0].body) != first[0].ID { // attempts run concurrently
		got[0], got[1] = got[1], got[0]
	}

	g := got[0]
	var body struct {
		Event     string         `json:"event"`
		ID        string         `json:"id"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(g.body, &body); err != nil {
		t.Fatalf("body %s: %v", g.body, err)
	}
	if k := jsonKeys(t, g.body); !reflect.DeepEqual(k, []string{"data", "event", "id", "timestamp"}) {
		t.Errorf("body keys = %v, want exactly [data event id timestamp]", k)
	}
	if body.Event != webhook.EventAlert {
		t.Errorf("event = %q, want %q", body.Event, webhook.EventAlert)
	}
	if !strings.HasPrefix(body.ID, "msg_") || len(body.ID) < 10 || strings.Contains(body.ID, ".") {
		t.Errorf("id = %q, want msg_ and a unique suffix without dots", body.ID)
	}
	if body.Timestamp != "2025-03-04T09:11:12Z" {
		t.Errorf("timestamp = %q, want 2025-03-04T09:11:12Z (RFC 3339, UTC)", body.Timestamp)
	}
	want := map[string]any{"company_name": "AT&T <Labs>", "old_count": 10.0, "new_count": 14.0}
	if !reflect.DeepEqual(body.Data, want) {
		t.Errorf("data = %v, want %v", body.Data, want)
	}
	if ct := g.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if ua := g.header.Get("User-Agent"); !strings.Contains(ua, "patentsvc") {
		t.Errorf("User-Agent = %q, want one naming patentsvc", ua)
	}
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if v := g.header.Get(h); v != "" {
			t.Errorf("without a secret, %s = %q, want absent", h, v)
		}
	}
	if g.path != "/hook" {
		t.Errorf("path = %q, want /hook", g.path)
	}

	// The second event: an id of its own, nil data is {} and the timestamp
	// defaults to now.
	var second map[string]any
	if err := json.Unmarshal(got[1].body, &second); err != nil {
		t.Fatal(err)
	}
	if id, _ := second["id"].(string); !strings.HasPrefix(id, "msg_") || id == body.ID {
		t.Errorf("id = %v, want a msg_ id of its own (first: %s)", second["id"], body.ID)
	}
	if !reflect.DeepEqual(second["data"], map[string]any{}) {
		t.Errorf("nil data sent as %v, want {}", second["data"])
	}
	ts, err := time.Parse(time.RFC3339, second["timestamp"].(string))
	if err != nil || time.Since(ts).Abs() > time.Minute || !strings.HasSuffix(second["timestamp"].(string), "Z") {
		t.Errorf("default timestamp = %v (%v), want about now, in UTC", second["timestamp"], err)
	}
}

// independentSignature recomputes the Standard Webhooks signature without
// the package: HMAC-SHA256 over id.timestamp.body, base64, "v1," prefix.
func independentSignature(key []byte, id, ts string, body []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id + "." + ts + "." + string(body)))
	return "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func TestSignature(t *testing.T) {
	for _, tt := range []struct {
		name   string
		secret string
		key    []byte
	}{
		{"whsec", whsecSecret, rawKey},
		{"raw", "a-plain-shared-secret", []byte("a-plain-shared-secret")},
		{"whsec-unpadded", "whsec_" + base64.RawStdEncoding.EncodeToString([]byte("sixteen-byte-key!")), []byte("sixteen-byte-key!")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			d := newDispatcher(t, []string{rc.URL}, tt.secret, nil)
			run(t, d)
			send(t, d, webhook.Event{Type: webhook.EventJobCompleted, Data: map[string]string{"job_id": "j1"}})
			g := rc.waitN(t, 1, 10*time.Second)[0]

			id, ts, sig := g.header.Get("webhook-id"), g.header.Get("webhook-timestamp"), g.header.Get("webhook-signature")
			var body struct{ ID string }
			_ = json.Unmarshal(g.body, &body)
			if id == "" || id != body.ID {
				t.Errorf("webhook-id = %q, want the body's id %q", id, body.ID)
			}
			sec, err := strconv.ParseInt(ts, 10, 64)
			if err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
				t.Errorf("webhook-timestamp = %q, want unix seconds of about now", ts)
			}
			if want := independentSignature(tt.key, id, ts, g.body); sig != want {
				t.Errorf("webhook-signature = %q, want %q", sig, want)
			}
			if err := webhook.Verify(tt.secret, g.header, g.body, time.Now()); err != nil {
				t.Errorf("Verify = %v, want nil", err)
			}
			if err := webhook.Verify(tt.secret+"x", g.header, g.body, time.Now()); err == nil {
				t.Error("Verify with another secret = nil, want an error")
			}
		})
	}
}

func TestSlackMessage(t *testing.T) {
	rc := newReceiver(t, nil)
	d := newDispatcher(t, []string{"https://hooks.slack.com/services/T0/B0/TOKEN"}, whsecSecret, nil)
	webhook.SetTransport(d, rewrite{"hooks.slack.com": rc.URL})
	run(t, d)

	type text struct{ Type, Text string }
	type block struct {
		Type     string
		Text     *text
		Fields   []text
		Elements []text
	}
	type message struct {
		Text   string
		Blocks []block
	}
	decode := func(t *testing.T, b []byte) message {
		t.Helper()
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("Slack body %s: %v", b, err)
		}
		return m
	}

	t.Run("small", func(t *testing.T) {
		send(t, d, webhook.Event{Type: webhook.EventAlert,
			Summary: "Patent count for AT&T increased by 40.0% (from 10 to 14)",
			Fields:  []webhook.Field{{"Company", "AT&T"}, {"Change", "+40.0%"}, {"Empty", ""}}})
		g := rc.waitN(t, 1, 10*time.Second)[0]
		m := decode(t, g.body)
		if want := "Patent count for AT&amp;T increased by 40.0% (from 10 to 14)"; m.Text != want {
			t.Errorf("text = %q, want %q", m.Text, want)
		}
		if len(m.Blocks) != 4 {
			t.Fatalf("blocks = %+v, want header, summary, fields, context", m.Blocks)
		}
		if b := m.Blocks[0]; b.Type != "header" || b.Text == nil || b.Text.Type != "plain_text" || b.Text.Text == "" {
			t.Errorf("block 0 = %+v, want a plain_text header", b)
		}
		if b := m.Blocks[1]; b.Type != "section" || b.Text == nil || b.Text.Text != m.Text {
			t.Errorf("block 1 = %+v, want the summary section", b)
		}
		wantFields := []text{{"mrkdwn", "*Company*\nAT&amp;T"}, {"mrkdwn", "*Change*\n+40.0%"}, {"mrkdwn", "*Empty*\n-"}}
		if b := m.Blocks[2]; b.Type != "section" || !reflect.DeepEqual(b.Fields, wantFields) {
			t.Errorf("block 2 = %+v, want fields %+v", b, wantFields)
		}
		if b := m.Blocks[3]; b.Type != "context" || len(b.Elements) != 1 || !strings.Contains(b.Elements[0].Text, "Event msg_") {
			t.Errorf("block 3 = %+v, want a context naming the event id", b)
		}
	})

	t.Run("limits", func(t *testing.T) {
		fields := make([]webhook.Field, 600)
		for i := range fields {
			fields[i] = webhook.Field{Label: fmt.Sprintf("F%d", i), Value: strings.Repeat("v", 3000)}
		}
		send(t, d, webhook.Event{Type: webhook.EventJobCompleted, Summary: strings.Repeat("a&b ", 2000), Fields: fields})
		g := rc.waitN(t, 2, 10*time.Second)[1]
		m := decode(t, g.body)
		if len(m.Blocks) > 50 {
			t.Errorf("%d blocks, want at most 50", len(m.Blocks))
		}
		if n := len([]rune(m.Text)); n > 3000 {
			t.Errorf("text has %d chars, want at most 3000", n)
		}
		for i, b := range m.Blocks {
			if b.Text != nil && len([]rune(b.Text.Text)) > 3000 {
				t.Errorf("block %d text has %d chars, want at most 3000", i, len([]rune(b.Text.Text)))
			}
			if len(b.Fields) > 10 {
				t.Errorf("block %d has %d fields, want at most 10", i, len(b.Fields))
			}
			for _, f := range b.Fields {
				if n := len([]rune(f.Text)); n > 2000 {
					t.Errorf("block %d field has %d chars, want at most 2000", i, n)
				}
			}
		}
		s := m.Blocks[1].Text.Text
		if !strings.HasSuffix(s, "…") || strings.Contains(strings.ReplaceAll(strings.ReplaceAll(s, "&amp;", ""), "…", ""), "&") {
			t.Errorf("cut summary ends %q, want whole entities and an ellipsis", s[max(0, len(s)-20):])
		}
		last := m.Blocks[len(m.Blocks)-1]
		if last.Type != "context" || !strings.Contains(last.Elements[0].Text, "more fields not shown") {
			t.Errorf("last block = %+v, want a context saying fields were left out", last)
		}
	})
}

// TestLogsHoldNoSecrets drives every outcome through URLs whose path and
// query hold secrets, then searches the logs for them.
func TestLogsHoldNoSecrets(t *testing.T) {
	const secretPath, secretQuery = "/hook/PATHSECRET", "?token=QUERYSECRET"
	okRC := newReceiver(t, nil)
	failing := newReceiver(t, status(503))
	bad := newReceiver(t, status(400))
	gone := newReceiver(t, status(410))
	slack := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "no_service")
	})
	urls := []string{
		okRC.URL + secretPath + secretQuery,
		failing.URL + secretPath + secretQuery,
		bad.URL + secretPath + secretQuery,
		gone.URL + secretPath + secretQuery,
		closedURL(t, secretPath+secretQuery),
		"https://user:PASSWORDSECRET@hooks.slack.com/services/T0/B0/SLACKTOKENSECRET",
		"::not a url PATHSECRET",
	}
	logger, logs := newLogger()
	d := newDispatcher(t, urls, whsecSecret, logger)
	webhook.SetTransport(d, rewrite{"hooks.slack.com": slack.URL})
	run(t, d)
	send(t, d, webhook.Event{Type: webhook.EventJobCompleted, Summary: "done"})
	logs.waitFor(t, 6, `"msg":"webhook `, `"attempt":`)
	out := logs.String()
	for _, s := range []string{"PATHSECRET", "QUERYSECRET", "SLACKTOKENSECRET", "PASSWORDSECRET", "/services/", "/hook/",
		whsecSecret, strings.TrimPrefix(whsecSecret, "whsec_"), string(rawKey)} {
		if strings.Contains(out, s) {
			t.Errorf("logs hold %q:\n%s", s, out)
		}
	}
	for _, want := range []string{`"target":"` + okRC.URL + `"`, `"target":"https://hooks.slack.com"`, `HTTP 404: no_service`, `"entry":7`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
}

// jsonID returns the "id" of a generic body.
func jsonID(tb testing.TB, body []byte) string {
	tb.Helper()
	var m struct{ ID string }
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Fatalf("body %s: %v", body, err)
	}
	return m.ID
}
