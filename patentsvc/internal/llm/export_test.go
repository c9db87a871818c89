package llm

import "time"

// SetRetryWaits sets c's back-off bounds, so the black-box tests need not
// wait the production back-off between attempts.
func SetRetryWaits(c *Client, lo, hi time.Duration) {
	c.http.RetryWaitMin, c.http.RetryWaitMax = lo, hi
}
