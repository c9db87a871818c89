package cluster

import "time"

// SetClock makes r read the time from now instead of time.Now, so that a
// test moves past RetryInterval instead of waiting it out. Call it before
// r is used, from the goroutine that opened it.
func SetClock(r *Redis, now func() time.Time) { r.now = now }
