package retry_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gatewayapis/shared/retry"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"3", 3 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Wednesday, 01-Jul-26 12:00:30 GMT", 30 * time.Second, true}, // RFC 850, still valid to receive
		{"99999999999999999", time.Duration(1<<63 - 1).Truncate(time.Second), true},
		{"99999999999999999999", 0, false},
	} {
		got, ok := retry.After(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("After(%q) = %v, %t, want %v, %t", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestExponentialAndJitter(t *testing.T) {
	const lo, hi = 500 * time.Millisecond, 10 * time.Second
	for attempt, want := range []time.Duration{lo, 2 * lo, 4 * lo, 8 * lo, 16 * lo, hi, hi} {
		if got := retry.Exponential(lo, hi, attempt); got != want {
			t.Errorf("Exponential(attempt %d) = %v, want %v", attempt, got, want)
		}
	}
	for _, tt := range []struct {
		lo, hi  time.Duration
		attempt int
		want    time.Duration
	}{
		{lo, hi, 40, hi},
		{lo, hi, 1000, hi},
		{lo, hi, -1, lo},
		{time.Hour, 24 * time.Hour, 40, 24 * time.Hour}, // lo<<40 overflows
		{time.Hour, 1<<63 - 1, 62, 1<<63 - 1},
		{0, hi, 3, 0},
	} {
		if got := retry.Exponential(tt.lo, tt.hi, tt.attempt); got != tt.want {
			t.Errorf("Exponential(%v, %v, %d) = %v, want %v", tt.lo, tt.hi, tt.attempt, got, tt.want)
		}
	}
	seen := map[time.Duration]bool{}
	for range 200 {
		got := retry.Jitter(hi)
		if got < hi/2 || got > hi {
			t.Fatalf("Jitter(%v) = %v, want %v to %v", hi, got, hi/2, hi)
		}
		seen[got] = true
	}
	if len(seen) < 2 {
		t.Error("Jitter gave one value 200 times: no jitter")
	}
	if got := retry.Jitter(0); got != 0 {
		t.Errorf("Jitter(0) = %v", got)
	}
}

func TestBackoff(t *testing.T) {
	const lo, hi = 500 * time.Millisecond, 10 * time.Second
	for attempt, want := range []time.Duration{lo, 2 * lo, 4 * lo, 8 * lo, 16 * lo, hi, hi} {
		for range 50 {
			if got := retry.Backoff(lo, hi, attempt, nil); got < want/2 || got > want {
				t.Fatalf("Backoff(attempt %d) = %v, want %v to %v", attempt, got, want/2, want)
			}
		}
	}
	resp := func(status int, retryAfter string) *http.Response {
		return &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {retryAfter}}}
	}
	for _, tt := range []struct {
		name     string
		resp     *http.Response
		min, max time.Duration
	}{
		{"429 seconds", resp(429, "3"), 3 * time.Second, 3 * time.Second},
		{"503 seconds", resp(503, " 2 "), 2 * time.Second, 2 * time.Second},
		{"429 zero", resp(429, "0"), 0, 0},
		{"429 capped", resp(429, "86400"), hi, hi},
		{"429 overflow", resp(429, "99999999999999999"), hi, hi},
		{"429 date", resp(429, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), hi, hi},
		{"429 past date", resp(429, time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)), 0, 0},
		{"429 negative", resp(429, "-5"), lo / 2, lo},
		{"429 junk", resp(429, "soon"), lo / 2, lo},
		{"500 ignores it", resp(500, "3"), lo / 2, lo},
		{"502 ignores it", resp(502, "3"), lo / 2, lo},
		{"408 ignores it", resp(408, "3"), lo / 2, lo},
	} {
		if got := retry.Backoff(lo, hi, 0, tt.resp); got < tt.min || got > tt.max {
			t.Errorf("Backoff(%s) = %v, want %v to %v", tt.name, got, tt.min, tt.max)
		}
	}
}
