package cache

import (
	"fmt"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

func TestHotBounded(t *testing.T) {
	h := newHot(64)
	for i := range 1000 {
		v := fmt.Sprintf("V%d", i)
		h.put(v, hotEntry{stored: int64(i), res: vin.Result{VIN: v}})
		if e, ok := h.get(v); !ok || e.res.VIN != v {
			t.Fatalf("get(%s) right after put = %+v, %v", v, e, ok)
		}
	}
	total := 0
	for i := range h.shards {
		total += len(h.shards[i].m)
	}
	if total > 64 {
		t.Errorf("hot tier holds %d entries, want at most 64", total)
	}
}

func TestHotDropOnlySameStamp(t *testing.T) {
	h := newHot(64)
	h.put("V", hotEntry{stored: 2})
	h.drop("V", 1) // an older entry was swept: keep the newer one
	if _, ok := h.get("V"); !ok {
		t.Fatal("drop of an older stamp removed the newer entry")
	}
	h.drop("V", 2)
	if _, ok := h.get("V"); ok {
		t.Fatal("drop of the current stamp kept the entry")
	}
}
