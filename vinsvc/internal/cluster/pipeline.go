package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// autoPipeline sends the EVALSHAs of concurrent callers to Redis together:
// while one batch is on the wire, the calls that arrive wait for the next,
// which goes out as one pipeline (one write, one read) when the first
// returns. Every limited cache hit makes one such call (the GCRA script),
// and under load each round trip's system calls cost more CPU than the
// rest of the hit; batching them is what auto-pipelining clients do. It
// is the rediser go-redis/redis_rate runs its script through: EVALSHA is
// batched, everything else (the EVAL fallback when Redis lost the script,
// SCRIPT LOAD, DEL) goes straight to the client.
type autoPipeline struct {
	*redis.Client
	timeout time.Duration // of one batch, REDIS_TIMEOUT

	mu      sync.Mutex
	pending []*pipelined
	running bool
}

// maxBatch bounds one pipeline; the rest wait for the next.
const maxBatch = 256

// pipelined is one caller's EVALSHA, answered when its batch returns.
type pipelined struct {
	sha  string
	keys []string
	args []any
	cmd  *redis.Cmd
	done chan struct{}
}

// EvalSha queues the call and waits for its batch's answer, or for ctx.
func (p *autoPipeline) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	call := &pipelined{sha: sha, keys: keys, args: args, done: make(chan struct{})}
	p.mu.Lock()
	p.pending = append(p.pending, call)
	start := !p.running
	p.running = true
	p.mu.Unlock()
	if start {
		go p.run(context.WithoutCancel(ctx))
	}
	select {
	case <-call.done:
		return call.cmd
	case <-ctx.Done():
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
}

// run sends batches until no call is waiting.
func (p *autoPipeline) run(base context.Context) {
	for {
		p.mu.Lock()
		batch := p.pending
		if len(batch) > maxBatch {
			batch, p.pending = batch[:maxBatch], batch[maxBatch:]
		} else {
			p.pending = nil
		}
		if len(batch) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.send(base, batch)
	}
}

// send runs one batch as a pipeline and answers its callers; a failed
// pipeline answers each with its command's error.
func (p *autoPipeline) send(base context.Context, batch []*pipelined) {
	ctx, cancel := context.WithTimeout(base, p.timeout)
	defer cancel()
	pipe := p.Client.Pipeline()
	for _, c := range batch {
		c.cmd = pipe.EvalSha(ctx, c.sha, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	for _, c := range batch {
		close(c.done)
	}
}
