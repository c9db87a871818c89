package observe

import (
	"io"
	"sync"
	"time"
)

// The services' log batching: up to LogBatchSize bytes, out within
// LogFlushInterval of the first line of a batch.
const (
	LogBatchSize     = 64 << 10
	LogFlushInterval = 100 * time.Millisecond
)

// LogWriter batches the writes of a logger to its output (the process's
// stdout), so that the access log costs one write(2) per batch instead of
// one per request. A write is appended to a buffer; the buffer goes out
// when the next write would take it past its size, interval after the
// first write into it, and on Flush and Close. slog's handlers write each
// record with one Write, so lines are never split between batches.
//
// Why: under load (make bench-wrk) the access line's write(2) was the
// largest cost of a cache hit after the connection's own reads and writes,
// about a seventh of the service's CPU per request (docs/performance.md).
//
// # Caveats
//
// Lines reach the output up to interval late. A process that ends without
// Close (SIGKILL, the OOM killer, an unrecovered panic) loses the lines of
// at most the last interval; a panic's own trace goes to stderr directly.
// After Close, writes go straight through, so nothing logged during
// shutdown is lost. It is safe for concurrent use.
type LogWriter struct {
	w        io.Writer
	size     int
	interval time.Duration

	// out is held while a batch goes to w, so batches go out whole and in
	// order; mu is never held across a write to w, so requests that log
	// while a batch is written append to the next one instead of waiting.
	out sync.Mutex

	mu     sync.Mutex
	buf    []byte // the batch being filled
	spare  []byte // the other buffer, when it is not being written
	timer  *time.Timer
	closed bool
	err    error // a failed timed flush, returned by the next Flush or Close
}

// NewLogWriter returns a LogWriter over w that holds up to size bytes for
// at most interval. Call Close when the process stops logging.
func NewLogWriter(w io.Writer, size int, interval time.Duration) *LogWriter {
	lw := &LogWriter{w: w, size: size, interval: interval, buf: make([]byte, 0, size), spare: make([]byte, 0, size)}
	lw.timer = time.AfterFunc(time.Hour, func() {
		if err := lw.flush(); err != nil {
			lw.mu.Lock()
			if lw.err == nil {
				lw.err = err
			}
			lw.mu.Unlock()
		}
	})
	lw.timer.Stop()
	return lw
}

// Write buffers p. When p does not fit, the buffered batch is written out
// first (by this call, while later writes fill the other buffer). A p as
// large as the buffer, and every p after Close, is written at once. The
// error is the output's, from a write this call made.
func (lw *LogWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	direct := lw.closed || len(p) >= lw.size
	var batch []byte
	if direct || len(lw.buf)+len(p) > lw.size {
		batch = lw.takeLocked()
	}
	if !direct {
		if len(lw.buf) == 0 {
			lw.timer.Reset(lw.interval)
		}
		lw.buf = append(lw.buf, p...)
		if batch == nil {
			lw.mu.Unlock()
			return len(p), nil
		}
	}
	lw.out.Lock() // taken before mu is let go: batches leave in the order they were taken
	lw.mu.Unlock()
	if !direct {
		return len(p), lw.send(batch, nil)
	}
	var n int
	err := lw.send(batch, func() (err error) { n, err = lw.w.Write(p); return err })
	return n, err
}

// Flush writes out what is buffered. It returns the output's error, or
// that of an earlier timed flush that failed.
func (lw *LogWriter) Flush() error {
	err := lw.flush()
	lw.mu.Lock()
	if lw.err != nil {
		err, lw.err = lw.err, nil
	}
	lw.mu.Unlock()
	return err
}

// Close flushes and stops buffering: later writes go straight to the
// output.
func (lw *LogWriter) Close() error {
	lw.mu.Lock()
	lw.closed = true
	lw.timer.Stop()
	lw.mu.Unlock()
	return lw.Flush()
}

func (lw *LogWriter) flush() error {
	lw.mu.Lock()
	batch := lw.takeLocked()
	lw.out.Lock()
	lw.mu.Unlock()
	return lw.send(batch, nil)
}

// takeLocked returns the batch to write (nil when empty) and starts a new
// one in the spare buffer (a fresh one if the spare is out being written,
// which only a writer slower than a buffer's worth of logging makes
// happen).
func (lw *LogWriter) takeLocked() []byte {
	if len(lw.buf) == 0 {
		return nil
	}
	batch := lw.buf
	lw.buf, lw.spare = lw.spare, nil
	if lw.buf == nil {
		lw.buf = make([]byte, 0, lw.size)
	}
	return batch
}

// send writes batch (if any) and then, when the batch went out, runs
// after; out must be held, and send lets it go. The batch's buffer then
// becomes the spare, under mu, which is taken only once out is let go:
// Write and flush take out while holding mu, so holding out while waiting
// for mu could deadlock.
func (lw *LogWriter) send(batch []byte, after func() error) error {
	var err error
	if batch != nil {
		_, err = lw.w.Write(batch)
	}
	if err == nil && after != nil {
		err = after()
	}
	lw.out.Unlock()
	if batch != nil {
		lw.mu.Lock()
		lw.spare = batch[:0]
		lw.mu.Unlock()
	}
	return err
}
