package cache

import (
	"hash/maphash"
	"sync"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// HotEntries is how many recently used results the cache also keeps in
// memory (about 0.5 KiB each), so hits on popular VINs skip the bbolt read
// transaction. The memory tier holds copies of what the file holds, with
// the same store time, so it serves nothing the file would not.
const HotEntries = 16384

const hotShards = 16

// hot is a bounded in-memory map of results, sharded to keep lock
// contention low. A full shard evicts an arbitrary entry (Go's map order is
// random), which keeps often-requested VINs in memory with high
// probability without LRU bookkeeping on every hit.
type hot struct {
	seed   maphash.Seed
	per    int
	shards [hotShards]hotShard
}

type hotShard struct {
	mu sync.RWMutex
	m  map[string]hotEntry
}

type hotEntry struct {
	stored int64 // UnixNano, as in the file
	res    vin.Result
}

func newHot(size int) *hot {
	h := &hot{seed: maphash.MakeSeed(), per: max(size/hotShards, 1)}
	for i := range h.shards {
		h.shards[i].m = make(map[string]hotEntry)
	}
	return h
}

func (h *hot) shard(v string) *hotShard {
	return &h.shards[maphash.String(h.seed, v)%hotShards]
}

func (h *hot) get(v string) (hotEntry, bool) {
	s := h.shard(v)
	s.mu.RLock()
	e, ok := s.m[v]
	s.mu.RUnlock()
	return e, ok
}

func (h *hot) put(v string, e hotEntry) {
	s := h.shard(v)
	s.mu.Lock()
	if _, ok := s.m[v]; !ok && len(s.m) >= h.per {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[v] = e
	s.mu.Unlock()
}

// drop removes v if it still holds the entry stored at stamp.
func (h *hot) drop(v string, stored int64) {
	s := h.shard(v)
	s.mu.Lock()
	if e, ok := s.m[v]; ok && e.stored == stored {
		delete(s.m, v)
	}
	s.mu.Unlock()
}
