package decoding

import (
	"sync"
	"time"
)

const (
	windowSpan    = 24 * time.Hour
	windowBuckets = 24 * 60 // one per minute
)

// hitWindow counts cache hits and lookups over a sliding 24 hours in
// one-minute buckets, so the rate it reports is at most a minute stale at
// the window's tail and needs constant memory whatever the traffic.
type hitWindow struct {
	mu      sync.Mutex
	buckets [windowBuckets]hitBucket
}

type hitBucket struct {
	minute  int64 // minutes since the Unix epoch; identifies the bucket's age
	hits    uint64
	lookups uint64
}

func newHitWindow() *hitWindow { return &hitWindow{} }

func (w *hitWindow) add(now time.Time, hits, lookups int) {
	if lookups == 0 {
		return
	}
	m := now.Unix() / 60
	w.mu.Lock()
	b := &w.buckets[m%windowBuckets]
	if b.minute != m {
		*b = hitBucket{minute: m}
	}
	b.hits += uint64(hits)
	b.lookups += uint64(lookups)
	w.mu.Unlock()
}

func (w *hitWindow) rate(now time.Time) float64 {
	m := now.Unix() / 60
	var hits, lookups uint64
	w.mu.Lock()
	for i := range w.buckets {
		b := &w.buckets[i]
		if b.lookups > 0 && b.minute > m-windowBuckets && b.minute <= m {
			hits += b.hits
			lookups += b.lookups
		}
	}
	w.mu.Unlock()
	if lookups == 0 {
		return 0
	}
	return float64(hits) / float64(lookups)
}
