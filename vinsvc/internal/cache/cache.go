package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// DefaultSweepChunk is how many expired entries one sweep transaction
// deletes at most.
const DefaultSweepChunk = 1000

const schemaVersion = 1

var (
	bucketResults = []byte("results")
	bucketRaw     = []byte("raw")
	bucketStored  = []byte("stored")
	bucketMeta    = []byte("meta")

	keyVersion = []byte("version")
	keyCount   = []byte("count")
)

// ErrSchema is returned by Open for a file written by an incompatible
// version of the service.
var ErrSchema = errors.New("cache: unsupported schema version")

// ErrLocked is matched (errors.Is) by Open's error when another process
// holds the file's lock for longer than Open waits: another vinsvc, most
// likely, started with the same CACHE_PATH. bbolt says only "timeout".
var ErrLocked = errors.New("cache file is locked by another process")

// lockedError is Open's error for a file another process holds: it names
// the file and matches ErrLocked.
type lockedError struct{ path string }

func (e *lockedError) Error() string {
	return "cache file " + e.path + " is locked by another process (another vinsvc running with the same CACHE_PATH?)"
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// Cache is a TTL cache of decoded VINs in a bbolt file. It is safe for
// concurrent use.
type Cache struct {
	db     *bolt.DB
	ttl    time.Duration
	logger *slog.Logger
	now    func() time.Time
	hot    *hot

	entries   atomic.Int64
	evictions atomic.Uint64
	writeErr  atomic.Pointer[error] // last write failure, nil after a success
}

// Open opens (creating if needed) the bbolt file at path and its directory.
// now is the clock used for lifetimes; tests inject a fake one. It returns
// an error matching ErrLocked when another process holds the file for a
// second, and ErrSchema for a file of an incompatible version.
func Open(path string, ttl time.Duration, logger *slog.Logger, now func() time.Time) (*Cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("cache: create directory: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: time.Second,
		// The freelist is rebuilt at open instead of being written on every
		// commit: much cheaper commits for a file that deletes in bulk.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, &lockedError{path: path}
	}
	if err != nil {
		return nil, fmt.Errorf("cache: open %s: %w", path, err)
	}
	// Put uses Batch to share one commit among concurrent writers; a short
	// delay keeps that from adding noticeable latency to a single miss.
	db.MaxBatchDelay = 2 * time.Millisecond
	c := &Cache{db: db, ttl: ttl, logger: logger, now: now, hot: newHot(HotEntries)}
	var count uint64
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketResults, bucketRaw, bucketStored, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyVersion); v == nil {
			if err := meta.Put(keyVersion, u64(schemaVersion)); err != nil {
				return err
			}
		} else if len(v) != 8 || binary.BigEndian.Uint64(v) != schemaVersion {
			return ErrSchema
		}
		if v := meta.Get(keyCount); len(v) == 8 {
			count = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("cache: initialise %s: %w", path, err)
	}
	c.entries.Store(int64(count))
	return c, nil
}

// Close closes the file. Callers must stop using the cache first.
func (c *Cache) Close() error {
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("cache: close: %w", err)
	}
	return nil
}

// Get returns the unexpired entry for v. Raw is read only when withRaw is
// true. ok is false for a missing or expired entry. Without raw, recently
// used entries are answered from memory.
//
// Inside a recording span, a read of the file is a span of its own,
// "cache.local.get", with cache.hit (and cache.memory when memory knew the
// entry had expired); a hit answered from memory (0.1 µs, less than a
// span costs) is the attribute vinsvc.cache.memory_hit on the enclosing
// span instead. Outside a recording span it costs no more than without
// tracing (a context lookup).
func (c *Cache) Get(ctx context.Context, v string, withRaw bool) (vin.Decoded, bool, error) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		d, ok, _, err := c.get(v, withRaw)
		return d, ok, err
	}
	if !withRaw {
		if e, ok := c.hot.get(v); ok && c.live(e.stored, c.now()) {
			parent.SetAttributes(attribute.Bool("vinsvc.cache.memory_hit", true))
			return vin.Decoded{Result: e.res}, true, nil
		}
	}
	_, span := observe.StartSpan(ctx, "cache.local.get")
	defer span.End()
	d, ok, memory, err := c.get(v, withRaw)
	span.SetAttributes(attribute.Bool("cache.hit", ok), attribute.Bool("cache.memory", memory))
	if err != nil {
		span.SetStatus(codes.Error, "cache get failed")
	}
	return d, ok, err
}

// get is Get; memory is true when the answer (or its expiry) came from
// memory.
func (c *Cache) get(v string, withRaw bool) (d vin.Decoded, ok, memory bool, err error) {
	now := c.now()
	if !withRaw {
		if e, ok := c.hot.get(v); ok {
			if c.live(e.stored, now) {
				return vin.Decoded{Result: e.res}, true, true, nil
			}
			return vin.Decoded{}, false, true, nil
		}
	}
	d, ok, err = c.getStored(v, now, withRaw)
	return d, ok, false, err
}

// getStored reads v's entry from the file, and remembers it in memory.
func (c *Cache) getStored(v string, now time.Time, withRaw bool) (vin.Decoded, bool, error) {
	var (
		d      vin.Decoded
		ok     bool
		stored int64
	)
	err := c.db.View(func(tx *bolt.Tx) error {
		val := tx.Bucket(bucketResults).Get([]byte(v))
		if len(val) < 8 {
			return nil
		}
		stored = int64(binary.BigEndian.Uint64(val[:8]))
		if !c.live(stored, now) {
			return nil
		}
		r, err := decodeRecord(val[8:], v)
		if err != nil {
			return fmt.Errorf("decode entry %s: %w", v, err)
		}
		d.Result = r
		if withRaw {
			// Values are only valid inside the transaction: copy.
			d.Raw = bytes.Clone(tx.Bucket(bucketRaw).Get([]byte(v)))
		}
		ok = true
		return nil
	})
	if err != nil {
		return vin.Decoded{}, false, fmt.Errorf("cache get: %w", err)
	}
	if ok {
		c.hot.put(v, hotEntry{stored: stored, res: d.Result})
	}
	return d, ok, nil
}

// live reports whether an entry stored at stored (UnixNano) is within its
// lifetime at now.
func (c *Cache) live(stored int64, now time.Time) bool {
	return now.Before(time.Unix(0, stored).Add(c.ttl))
}

// Put stores answers, stamped with the current time (moved back for an
// answer whose TTL is shorter than the cache's: storedAt), replacing older
// entries for the same VINs. Concurrent Puts are coalesced into one
// transaction (bbolt's Batch), so a burst of misses costs one disk sync.
// Inside a recording span it is a span of its own, "cache.local.put".
func (c *Cache) Put(ctx context.Context, ds []vin.Decoded) error {
	if len(ds) == 0 {
		return nil
	}
	_, span := observe.StartSpan(ctx, "cache.local.put")
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("cache.count", len(ds)))
	}
	type encoded struct {
		key, val, raw, idx []byte
		stored             int64
	}
	now := c.now()
	enc := make([]encoded, len(ds))
	for i, d := range ds {
		stored := c.storedAt(now, d.TTL)
		stamp := u64(uint64(stored))
		body := encodeRecord(d.Result)
		key := []byte(d.Result.VIN)
		enc[i] = encoded{
			key:    key,
			val:    append(append(make([]byte, 0, 8+len(body)), stamp...), body...),
			raw:    d.Raw,
			idx:    indexKey(stamp, key),
			stored: stored,
		}
	}

	var added int64
	err := c.db.Batch(func(tx *bolt.Tx) error {
		added = 0 // Batch may run this function again on its own
		results, raw, stored := tx.Bucket(bucketResults), tx.Bucket(bucketRaw), tx.Bucket(bucketStored)
		for _, e := range enc {
			if old := results.Get(e.key); len(old) >= 8 {
				if err := stored.Delete(indexKey(old[:8], e.key)); err != nil {
					return err
				}
			} else {
				added++
			}
			if err := results.Put(e.key, e.val); err != nil {
				return err
			}
			if err := raw.Put(e.key, e.raw); err != nil {
				return err
			}
			if err := stored.Put(e.idx, nil); err != nil {
				return err
			}
		}
		return addCount(tx, added)
	})
	if err != nil {
		c.writeErr.Store(&err)
		return fmt.Errorf("cache put: %w", err)
	}
	c.writeErr.Store(nil)
	c.entries.Add(added)
	for i, d := range ds {
		c.hot.put(d.Result.VIN, hotEntry{stored: enc[i].stored, res: d.Result})
	}
	return nil
}

// storedAt is the store stamp (UnixNano) of an entry put at now that lives
// for ttl: now itself for the cache's own lifetime (ttl 0 or not shorter),
// or a stamp moved back so that stamp + CACHE_TTL = now + ttl. Every
// lifetime check and the sweep work on the stamp alone, so a shorter-lived
// entry (a snapshot answer) needs no other field and no schema change.
func (c *Cache) storedAt(now time.Time, ttl time.Duration) int64 {
	if ttl <= 0 || ttl >= c.ttl {
		return now.UnixNano()
	}
	return now.Add(ttl - c.ttl).UnixNano()
}

// SweepStats reports what one Sweep did.
type SweepStats struct {
	Deleted int // entries removed
	Chunks  int // write transactions used
}

// Sweep deletes the entries stored at or before now minus the TTL, at most
// chunk entries per write transaction, walking only the expiry index. It
// stops early, with what it did so far, when ctx ends.
func (c *Cache) Sweep(ctx context.Context, now time.Time, chunk int) (SweepStats, error) {
	if chunk <= 0 {
		chunk = DefaultSweepChunk
	}
	cutoff := u64(uint64(now.Add(-c.ttl).UnixNano()))
	var st SweepStats
	for ctx.Err() == nil {
		began := time.Now()
		n, err := c.sweepChunk(cutoff, chunk)
		if n > 0 {
			st.Deleted += n
			st.Chunks++
			c.entries.Add(-int64(n))
			c.evictions.Add(uint64(n))
		}
		if err != nil {
			c.writeErr.Store(&err)
			return st, fmt.Errorf("cache sweep: %w", err)
		}
		if n < chunk {
			break
		}
		// Pause as long as the chunk took before taking the write lock
		// again: a Put waiting behind this chunk gets the lock next instead
		// of racing the sweeper for it, so it waits at most one chunk.
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Since(began), 50*time.Millisecond)):
		}
	}
	return st, nil
}

// sweepChunk deletes up to chunk entries whose store stamp is <= cutoff.
func (c *Cache) sweepChunk(cutoff []byte, chunk int) (int, error) {
	var n int
	var swept [][]byte // expiry-index keys of the deleted entries
	err := c.db.Update(func(tx *bolt.Tx) error {
		n, swept = 0, swept[:0]
		results, raw, stored := tx.Bucket(bucketResults), tx.Bucket(bucketRaw), tx.Bucket(bucketStored)
		var keys [][]byte
		cur := stored.Cursor()
		for k, _ := cur.First(); k != nil && len(keys) < chunk; k, _ = cur.Next() {
			if len(k) < 8 || bytes.Compare(k[:8], cutoff) > 0 {
				break
			}
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			v := k[8:]
			if err := stored.Delete(k); err != nil {
				return err
			}
			// The index holds one key per entry (Put removes the old one), so
			// this entry's stamp is k's stamp; check anyway, never delete a
			// fresher entry.
			if cur := results.Get(v); len(cur) >= 8 && bytes.Equal(cur[:8], k[:8]) {
				if err := results.Delete(v); err != nil {
					return err
				}
				if err := raw.Delete(v); err != nil {
					return err
				}
				swept = append(swept, k)
				n++
			}
		}
		return addCount(tx, -int64(n))
	})
	if err == nil {
		for _, k := range swept {
			c.hot.drop(string(k[8:]), int64(binary.BigEndian.Uint64(k[:8])))
		}
	}
	return n, err
}

// RunSweeper sweeps once at once and then every interval until ctx ends.
func (c *Cache) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		start := time.Now()
		st, err := c.Sweep(ctx, c.now(), DefaultSweepChunk)
		switch {
		case err != nil:
			c.logger.Error("cache sweep failed", "deleted", st.Deleted, "err", err.Error())
		case st.Deleted > 0:
			c.logger.Info("cache sweep", "deleted", st.Deleted, "chunks", st.Chunks,
				"duration_ms", time.Since(start).Milliseconds())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stats returns the entry count, file size and evictions since start.
func (c *Cache) Stats() vin.CacheStats {
	s := vin.CacheStats{Entries: c.entries.Load(), Evictions: c.evictions.Load()}
	if fi, err := os.Stat(c.db.Path()); err == nil {
		s.SizeBytes = fi.Size()
	}
	return s
}

// Check reports whether the cache file works: it reads in a transaction, and
// fails while the last write failed (a full disk, say) until a write
// succeeds again.
func (c *Cache) Check(_ context.Context) error {
	if p := c.writeErr.Load(); p != nil {
		return fmt.Errorf("cache: last write failed: %w", *p)
	}
	err := c.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta).Get(keyVersion) == nil {
			return errors.New("schema version missing")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache: check: %w", err)
	}
	return nil
}

func addCount(tx *bolt.Tx, delta int64) error {
	if delta == 0 {
		return nil
	}
	meta := tx.Bucket(bucketMeta)
	var n int64
	if v := meta.Get(keyCount); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += delta
	if n < 0 {
		n = 0
	}
	return meta.Put(keyCount, u64(uint64(n)))
}

func indexKey(stamp, vinKey []byte) []byte {
	k := make([]byte, 0, len(stamp)+len(vinKey))
	return append(append(k, stamp...), vinKey...)
}

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}
