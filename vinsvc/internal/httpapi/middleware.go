package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

// Gateway headers (the spec's neutral names).
const (
	headerProxySecret  = "X-Gateway-Proxy-Secret"
	headerSubscription = "X-Gateway-Subscription"
	headerUser         = "X-Gateway-User"
)

// requireProxySecret answers 403 unless the request carries one of the
// accepted secrets (two while rotating). Both sides are hashed first and
// every secret is compared, so the time taken does not depend on which
// secret matched, how much of it, or on the lengths.
func requireProxySecret(secrets []string) echo.MiddlewareFunc {
	want := make([][sha256.Size]byte, len(secrets))
	for i, s := range secrets {
		want[i] = sha256.Sum256([]byte(s))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			got := sha256.Sum256([]byte(c.Request().Header.Get(headerProxySecret)))
			ok := 0
			for i := range want {
				ok |= subtle.ConstantTimeCompare(want[i][:], got[:])
			}
			if ok != 1 {
				return httperr.New(http.StatusForbidden, "missing or invalid proxy secret").WithCode(codeForbidden)
			}
			return next(c)
		}
	}
}

// limit spends cost(c) tokens of the caller's bucket, answering 429 with
// Retry-After when they are not there. It runs after the secret check (a
// 403 costs nothing) and before input validation (an invalid request that
// passed the secret still costs). Every limited response carries
// X-RateLimit-Limit and X-RateLimit-Remaining.
func limit(l *ratelimit.Limiter, cost func(echo.Context) int) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if l == nil {
			return next
		}
		return func(c echo.Context) error {
			req := c.Request()
			subscriber := req.Header.Get(headerUser)
			if subscriber == "" {
				subscriber = "ip:" + c.RealIP()
			}
			d := l.Take(req.Context(), req.Header.Get(headerSubscription), subscriber, cost(c))
			h := c.Response().Header()
			setLimitHeaders(h, d.Limit, d.Remaining)
			if !d.Allowed {
				secs := int(math.Ceil(d.RetryAfter.Seconds()))
				if secs < 1 {
					secs = 1
				}
				h.Set("Retry-After", strconv.Itoa(secs))
				return httperr.Newf(http.StatusTooManyRequests,
					"rate limit exceeded: %d requests per plan period; retry in %d s", d.Limit, secs).WithCode(codeRateLimit)
			}
			return next(c)
		}
	}
}

func decodeCost(echo.Context) int { return 1 }

// setLimitHeaders sets X-RateLimit-Limit and X-RateLimit-Remaining (their
// canonical keys directly: this is on every request's path), the two
// values in one string and their slices in one array: two allocations
// where two strconv.Itoa and two slices take four.
func setLimitHeaders(h http.Header, limit, remaining int) {
	var buf [40]byte
	b := strconv.AppendInt(buf[:0], int64(limit), 10)
	n := len(b)
	both := string(strconv.AppendInt(b, int64(remaining), 10))
	vals := new([2]string)
	vals[0], vals[1] = both[:n], both[n:]
	h["X-Ratelimit-Limit"] = vals[0:1:1]
	h["X-Ratelimit-Remaining"] = vals[1:2:2]
}
