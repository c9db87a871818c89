package serpapi

import "time"

// SetRetryWaits shortens c's back-off so that tests of retry counts run
// fast; the waits themselves are tested with the real values.
func SetRetryWaits(c *Client, lo, hi time.Duration) {
	c.http.RetryWaitMin = lo
	c.http.RetryWaitMax = hi
}
