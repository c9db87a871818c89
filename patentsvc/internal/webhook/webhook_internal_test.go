package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/shared/redact"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestOutcome checks the retry rule of decisions.md on the default
// schedule: 2xx delivered; 410 failed at once; anything else retried after
// the schedule's wait for that attempt (a Retry-After may lengthen it, up
// to an hour), until the 8th attempt, whose failure is final.
func TestOutcome(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &Dispatcher{cfg: Config{Schedule: DefaultSchedule}, now: func() time.Time { return now }}
	for _, tt := range []struct {
		name      string
		attempts  int // made before this one
		r         result
		status    string
		wait      time.Duration
		wantError string
	}{
		{"2xx", 0, result{status: 204}, patent.DeliveryDelivered, 0, ""},
		{"first 503", 0, result{status: 503}, patent.DeliveryPending, 5 * time.Second, "HTTP 503"},
		{"second 500", 1, result{status: 500}, patent.DeliveryPending, 5 * time.Minute, "HTTP 500"},
		{"400 is retried too", 2, result{status: 400}, patent.DeliveryPending, 30 * time.Minute, "HTTP 400"},
		{"retry-after longer", 0, result{status: 429, retryAfter: time.Minute}, patent.DeliveryPending, time.Minute, "HTTP 429"},
		{"retry-after capped", 0, result{status: 429, retryAfter: 48 * time.Hour}, patent.DeliveryPending, time.Hour, "HTTP 429"},
		{"network error", 6, result{err: errors.New("connection refused")}, patent.DeliveryPending, 10 * time.Hour, "connection refused"},
		{"8th attempt fails for good", 7, result{status: 503}, patent.DeliveryFailed, 0, "HTTP 503"},
		{"410 at once", 0, result{status: 410}, patent.DeliveryFailed, 0, "HTTP 410"},
		{"slack error code", 0, result{status: 404, slackError: "no_service"}, patent.DeliveryPending, 5 * time.Second, "HTTP 404: no_service"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := d.outcome(patent.Delivery{Attempts: tt.attempts}, tt.r)
			if a.Status != tt.status || a.Error != tt.wantError || a.StatusCode != tt.r.status {
				t.Errorf("outcome = %+v, want status %s, error %q", a, tt.status, tt.wantError)
			}
			if tt.status == patent.DeliveryPending && a.NextAttemptAt != now.Add(tt.wait) {
				t.Errorf("next attempt at %v, want %v later", a.NextAttemptAt, tt.wait)
			}
		})
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		s      string
		limit  int
		escape bool
		want   string
	}{
		{"short", 10, false, "short"},
		{"a<b>&c", 20, true, "a&lt;b&gt;&amp;c"},
		{"a<b>&c", 20, false, "a<b>&c"},
		{"abcdef", 4, false, "abc…"},
		{"ab&cd", 6, true, "ab…"},      // &amp; does not fit whole: never split
		{"ab&cd", 8, true, "ab&amp;…"}, // 2+5+1
		{"😀😀😀", 4, false, "😀…"},        // 2 UTF-16 units each
		{"ééé", 3, false, "ééé"},
	} {
		got := fit(tt.s, tt.limit, tt.escape)
		if got != tt.want {
			t.Errorf("fit(%q, %d, %v) = %q, want %q", tt.s, tt.limit, tt.escape, got, tt.want)
		}
		if width(got) > tt.limit {
			t.Errorf("fit(%q, %d, %v) = %q is %d units long", tt.s, tt.limit, tt.escape, got, width(got))
		}
	}
}

func TestRedact(t *testing.T) {
	const u = "https://hooks.slack.com/services/T0/B0/TOKEN?x=QUERY"
	for _, err := range []error{
		&url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 443}, Err: errors.New("connect: connection refused")}},
		&url.Error{Op: "Post", URL: u, Err: &net.DNSError{Err: "no such host", Name: "hooks.slack.com"}},
		&url.Error{Op: "Post", URL: u, Err: fmt.Errorf("context deadline exceeded")},
	} {
		got := redact.Error(err)
		for _, leak := range []string{"TOKEN", "QUERY", "hooks.slack.com", "10.1.2.3", "/services"} {
			if strings.Contains(got, leak) {
				t.Errorf("redact(%v) = %q, holds %q", err, got, leak)
			}
		}
	}
}

func TestSigningKey(t *testing.T) {
	for _, tt := range []struct {
		secret, key string
		err         bool
	}{
		{"raw-secret", "raw-secret", false},
		{"whsec_a2V5", "key", false},
		{"whsec_a2V5MQ==", "key1", false},
		{"whsec_a2V5MQ", "key1", false},
		{"whsec_%%%", "", true},
		{"WHSEC_a2V5", "WHSEC_a2V5", false}, // the prefix is lowercase
	} {
		key, err := signingKey(tt.secret)
		if (err != nil) != tt.err || (err == nil && string(key) != tt.key) {
			t.Errorf("signingKey(%q) = %q, %v, want %q (error %v)", tt.secret, key, err, tt.key, tt.err)
		}
	}
}
