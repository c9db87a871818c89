// Package retry is the wait between attempts that every outbound client of
// both services shares (vinsvc's vPIC client; patentsvc's search API, LLM
// gateway, PDF downloads and webhooks): exponential with "equal jitter"
// (half fixed, half random, so retries from many pods spread out), or the
// server's Retry-After, as delay seconds or an HTTP date. It is the
// outbound-request counterpart of the shared middleware: Backoff is the
// hook handed to go-retryablehttp clients, so one rule serves every client
// instead of a private copy per service that drifts.
package retry

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After parses a Retry-After value (RFC 9110 section 10.2.3): delay
// seconds or an HTTP date, which counts from now (a past date is 0). ok is
// false when v is empty or neither.
func After(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, math.MaxInt64/int64(time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Exponential is lo·2^attempt (attempt from 0), capped at hi; 0 when lo
// is not positive.
func Exponential(lo, hi time.Duration, attempt int) time.Duration {
	attempt = max(attempt, 0)
	switch {
	case lo <= 0:
		return 0
	case attempt >= 63 || lo > hi>>attempt: // lo<<attempt would pass hi (or overflow)
		return hi
	}
	return lo << attempt
}

// Jitter is a random wait between w/2 and w.
func Jitter(w time.Duration) time.Duration {
	if w <= 0 {
		return 0
	}
	half := w / 2
	return half + rand.N(w-half+1)
}

// Backoff is a retryablehttp.Backoff: Jitter(Exponential(...)), or on a
// 429 or 503 with a usable Retry-After that delay, capped at hi.
func Backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := After(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(d, hi)
		}
	}
	return Jitter(Exponential(lo, hi, attempt))
}
