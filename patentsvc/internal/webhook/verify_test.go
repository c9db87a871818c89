package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/webhook"
)

func TestVerify(t *testing.T) {
	now := time.Unix(1_750_000_000, 0)
	body := []byte(`{"event":"job.completed","id":"msg_1","timestamp":"2025-06-15T15:06:40Z","data":{}}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := independentSignature(rawKey, "msg_1", ts, body)
	other := independentSignature([]byte("another key"), "msg_1", ts, body)
	headers := func(id, ts, sig string) http.Header {
		h := http.Header{}
		if id != "" {
			h.Set("webhook-id", id)
		}
		if ts != "" {
			h.Set("webhook-timestamp", ts)
		}
		if sig != "" {
			h.Set("webhook-signature", sig)
		}
		return h
	}
	at := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	signedAt := func(d time.Duration) string { return independentSignature(rawKey, "msg_1", at(d), body) }

	for _, tt := range []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		ok     bool
	}{
		{"valid", whsecSecret, headers("msg_1", ts, good), body, true},
		{"valid-raw-secret", "plain", headers("msg_1", ts, independentSignature([]byte("plain"), "msg_1", ts, body)), body, true},
		{"rotation-second-matches", whsecSecret, headers("msg_1", ts, other+" "+good), body, true},
		{"extra-spaces", whsecSecret, headers("msg_1", ts, "  "+other+"   "+good+" "), body, true},
		{"other-versions-ignored", whsecSecret, headers("msg_1", ts, "v1a,"+good[3:]+" "+good), body, true},
		{"lowercase-map-keys", whsecSecret, http.Header{"webhook-id": {"msg_1"}, "webhook-timestamp": {ts}, "webhook-signature": {good}}, body, true},
		{"4m59s-old", whsecSecret, headers("msg_1", at(-299*time.Second), signedAt(-299*time.Second)), body, true},
		{"4m59s-ahead", whsecSecret, headers("msg_1", at(299*time.Second), signedAt(299*time.Second)), body, true},

		{"wrong-secret", whsecSecret, headers("msg_1", ts, other), body, false},
		{"tampered-body", whsecSecret, headers("msg_1", ts, good), append([]byte(" "), body...), false},
		{"other-id", whsecSecret, headers("msg_2", ts, good), body, false},
		{"other-timestamp", whsecSecret, headers("msg_1", at(time.Second), good), body, false},
		{"too-old", whsecSecret, headers("msg_1", at(-6*time.Minute), signedAt(-6*time.Minute)), body, false},
		{"too-new", whsecSecret, headers("msg_1", at(6*time.Minute), signedAt(6*time.Minute)), body, false},
		{"no-id", whsecSecret, headers("", ts, good), body, false},
		{"no-timestamp", whsecSecret, headers("msg_1", "", good), body, false},
		{"no-signature", whsecSecret, headers("msg_1", ts, ""), body, false},
		{"no-secret", "", headers("msg_1", ts, good), body, false},
		{"bad-whsec", "whsec_!!!not base64", headers("msg_1", ts, good), body, false},
		{"timestamp-not-number", whsecSecret, headers("msg_1", "12a", good), body, false},
		{"timestamp-float", whsecSecret, headers("msg_1", ts+".0", good), body, false},
		{"timestamp-huge", whsecSecret, headers("msg_1", "99999999999999999999", good), body, false},
		{"timestamp-min", whsecSecret, headers("msg_1", "-9223372036854775808", good), body, false},
		{"sig-no-comma", whsecSecret, headers("msg_1", ts, "v1"+good[3:]), body, false},
		{"sig-not-base64", whsecSecret, headers("msg_1", ts, "v1,***"), body, false},
		{"sig-wrong-version", whsecSecret, headers("msg_1", ts, "v2,"+good[3:]), body, false},
		{"sig-empty", whsecSecret, headers("msg_1", ts, "v1,"), body, false},
		{"sig-truncated", whsecSecret, headers("msg_1", ts, good[:len(good)-4]), body, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secret, tt.header, tt.body, now)
			if (err == nil) != tt.ok {
				t.Fatalf("Verify = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, webhook.ErrVerification) {
				t.Errorf("Verify = %v, want it to wrap ErrVerification", err)
			}
		})
	}
}

// FuzzVerify feeds garbage headers to Verify: it must not panic, its
// errors wrap ErrVerification, and it accepts nothing signed with another
// key.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_750_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"a":1}`)
	f.Add("msg_1", ts, independentSignature(rawKey, "msg_1", ts, body), body)
	f.Add("msg_1", ts, "v1, v1,, ,v1 v1a,AAAA v1,====", body)
	f.Add("", "", "", []byte(nil))
	f.Add("a.b", "-1", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32)), []byte("x"))
	f.Add("msg", "1e9", "\x00\xff v1,\xff", []byte{0xff})
	f.Fuzz(func(t *testing.T, id, timestamp, sig string, body []byte) {
		h := http.Header{}
		h["Webhook-Id"] = []string{id}
		h["Webhook-Timestamp"] = []string{timestamp}
		h["Webhook-Signature"] = []string{sig}
		err := webhook.Verify(whsecSecret, h, body, now)
		if err != nil && !errors.Is(err, webhook.ErrVerification) {
			t.Fatalf("Verify = %v, want it to wrap ErrVerification", err)
		}
		// A key nobody signed with must never verify, whatever the input.
		if webhook.Verify("a key nobody used", h, body, now) == nil {
			m := hmac.New(sha256.New, []byte("a key nobody used"))
			m.Write([]byte(id + "." + timestamp + "." + string(body)))
			t.Fatalf("Verify accepted %q with an unrelated key (its mac %x)", sig, m.Sum(nil))
		}
	})
}
