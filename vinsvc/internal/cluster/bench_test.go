package cluster_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/cluster"
	"github.com/gatewayapis/vinsvc/internal/cluster/redistest"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
)

// BenchmarkLimitsTake is the Redis cost a cache hit pays with REDIS_URL:
// one GCRA decision, from 64 goroutines at once as under load.
func BenchmarkLimitsTake(b *testing.B) {
	url := redistest.URL(b)
	prefix := redistest.Prefix(b, url)
	r, err := cluster.Open(context.Background(), url, prefix, time.Second, slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l := r.Limits()
	limit := ratelimit.Limit{N: 1 << 30, Per: time.Minute}
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Take(context.Background(), "MEGA:bench", limit, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
