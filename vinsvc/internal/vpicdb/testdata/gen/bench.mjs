// The corgi side of the vpicdb benchmark: decodes every VIN of ../corpus.json
// with @cardog/corgi (one decoder, default decode options), first one
// untimed warm-up pass, then PASSES timed passes, and prints one JSON line:
//   {"decoder":"corgi 2.0.1","vins":493,"passes":3,"p50_ms":..,"p99_ms":..,"mean_ms":..}
// Percentiles are nearest-rank over every timed decode (vins x passes).
//
//   node bench.mjs            (VPIC_DB=/path/to/vpic.lite.db to use another copy)
//   node bench.mjs --cold     (also time the warm-up pass: adds cold_* keys)

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CORGI_VERSION, HERE, checkNativeDriver, databasePath, openCorgi, quietConsole } from "./lib.mjs";

const PASSES = Number(process.env.PASSES ?? 3);
const cold = process.argv.includes("--cold");

checkNativeDriver();
const vins = JSON.parse(readFileSync(join(HERE, "..", "corpus.json"), "utf8")).map((e) => e.vin);
const dbPath = await databasePath();

const restore = quietConsole();
const decoder = await openCorgi(dbPath);

async function pass() {
  const times = [];
  for (const vin of vins) {
    const t0 = performance.now();
    await decoder.decode(vin);
    times.push(performance.now() - t0);
  }
  return times;
}

function stats(times) {
  const s = times.slice().sort((a, b) => a - b);
  const rank = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
  const r3 = (x) => Math.round(x * 1000) / 1000;
  return { p50_ms: r3(rank(50)), p99_ms: r3(rank(99)), mean_ms: r3(s.reduce((a, b) => a + b, 0) / s.length) };
}

const warm = await pass();
const timed = [];
for (let i = 0; i < PASSES; i++) timed.push(...(await pass()));
await decoder.close();
restore();

const out = { decoder: `corgi ${CORGI_VERSION}`, vins: vins.length, passes: PASSES, ...stats(timed) };
if (cold) {
  const c = stats(warm);
  out.cold_p50_ms = c.p50_ms;
  out.cold_p99_ms = c.p99_ms;
  out.cold_mean_ms = c.mean_ms;
}
console.log(JSON.stringify(out));
