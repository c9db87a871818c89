#!/usr/bin/env bash
# make bench-snapshot: the Go snapshot decoder (vinsvc/internal/vpicdb)
# against corgi 2.0.1's own decode of the same corpus VINs, on the same
# database file, in one run, and the ratios. Figures are per VIN decode.
#
# corgi caches every SQL answer per decoder, so it is measured twice: cold
# (the first decode of each VIN in a fresh process, which is what a caching
# proxy's misses look like: the cache has already answered repeats) and
# warm (the same VINs again). The Go decoder reads the whole database into
# memory at start (Open, a few seconds, not in these figures) and has no
# cold or warm: every decode costs the same.
set -euo pipefail
db=$(realpath "${1:-data/vpic/vpic.lite.db}")
root=$(cd "$(dirname "$0")/.." && pwd)

go_out=$(cd "$root/vinsvc" && TEST_VPIC_SNAPSHOT="$db" go test -run '^$' -bench '^BenchmarkDecode$' -benchtime 2s -count 1 ./internal/vpicdb/ 2>&1) ||
	{ echo "$go_out"; exit 1; }
echo "$go_out" | grep -E '^Benchmark'
go_line=$(echo "$go_out" | grep -E '^BenchmarkDecode-')

cd "$root/vinsvc/internal/vpicdb/testdata/gen"
if [ ! -d node_modules/better-sqlite3/build ]; then
	npm ci --ignore-scripts --loglevel=error
	npm rebuild better-sqlite3 --build-from-source --loglevel=error
fi
corgi=$(VPIC_DB="$db" node bench.mjs --cold)
echo "$corgi"

GO_LINE="$go_line" CORGI="$corgi" node -e '
const line = process.env.GO_LINE, c = JSON.parse(process.env.CORGI);
const num = (re) => { const m = line.match(re); if (!m) throw new Error("no " + re + " in " + line); return Number(m[1]) / 1e6; };
const go = { p50: num(/([\d.]+) p50-ns/), p99: num(/([\d.]+) p99-ns/), mean: num(/([\d.]+) ns\/op/) };
const r = (a, b) => (a / b).toFixed(1) + "x";
console.log(JSON.stringify({ decoder: "vpicdb (Go)", p50_ms: +go.p50.toFixed(3), p99_ms: +go.p99.toFixed(3), mean_ms: +go.mean.toFixed(3) }));
console.log(`corgi / vpicdb, cold: p50 ${r(c.cold_p50_ms, go.p50)}, p99 ${r(c.cold_p99_ms, go.p99)}, mean ${r(c.cold_mean_ms, go.mean)}`);
console.log(`corgi / vpicdb, warm: p50 ${r(c.p50_ms, go.p50)}, p99 ${r(c.p99_ms, go.p99)}, mean ${r(c.mean_ms, go.mean)}`);
'
