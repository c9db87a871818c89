package vpicdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// requiredSchema lists the tables and columns the decoder reads. A
// snapshot without one of them fails Open with ErrSchema naming it. The
// lookup tables named by Element.LookupTable are checked after loading,
// for the elements the patterns actually use.
var requiredSchema = []struct {
	table string
	cols  []string
}{
	{"Element", []string{"Id", "Code", "LookupTable", "Decode", "IsPrivate", "weight"}},
	{"Wmi", []string{"Id", "Wmi", "ManufacturerId", "VehicleTypeId", "TruckTypeId", "PublicAvailabilityDate", "CreatedOn", "UpdatedOn"}},
	{"Wmi_VinSchema", []string{"WmiId", "VinSchemaId", "YearFrom", "YearTo"}},
	{"VinSchema", []string{"Id", "TobeQCed"}},
	{"Pattern", []string{"Id", "VinSchemaId", "Keys", "ElementId", "AttributeId", "CreatedOn", "UpdatedOn"}},
	{"Wmi_Make", []string{"WmiId", "MakeId"}},
	{"Make", []string{"Id", "Name"}},
	{"Model", []string{"Id", "Name"}},
	{"Make_Model", []string{"MakeId", "ModelId"}},
	{"Manufacturer", []string{"Id", "Name"}},
	{"VehicleType", []string{"Id", "Name"}},
	{"EngineModel", []string{"Id", "Name"}},
	{"EngineModelPattern", []string{"Id", "EngineModelId", "ElementId", "AttributeId", "CreatedOn", "UpdatedOn"}},
	{"Conversion", []string{"Id", "FromElementId", "ToElementId", "Formula"}},
}

// maxElementID bounds Element.Id (vPIC's run to about 200), so a damaged
// file cannot make the element table huge.
const maxElementID = 4096

// tableSet maps lower-cased table names to their lower-cased columns, and
// keeps each table's name as the file spells it.
type tableSet map[string]tableInfo

type tableInfo struct {
	name string
	cols map[string]bool
}

func (ts tableSet) has(table string, cols ...string) bool {
	t, ok := ts[strings.ToLower(table)]
	if !ok {
		return false
	}
	for _, c := range cols {
		if !t.cols[strings.ToLower(c)] {
			return false
		}
	}
	return true
}

// load checks the schema and reads the snapshot.
func load(ctx context.Context, db *sql.DB) (*snapshot, error) {
	ts, err := readTables(ctx, db)
	if err != nil {
		return nil, err
	}
	if missing := missingSchema(ts); len(missing) > 0 {
		return nil, fmt.Errorf("%w: missing %s", ErrSchema, strings.Join(missing, ", "))
	}
	s := &snapshot{}
	steps := []func(context.Context, *sql.DB, tableSet) error{
		s.loadElements, s.loadNames, s.loadWMIs, s.loadWMISchemas, s.loadWMIMakes,
		s.loadPatterns, s.loadEngines, s.loadConversions, s.loadDate,
	}
	for _, step := range steps {
		if err := step(ctx, db, ts); err != nil {
			return nil, err
		}
	}
	if err := s.checkLookups(); err != nil {
		return nil, err
	}
	s.compact()
	return s, nil
}

func readTables(ctx context.Context, db *sql.DB) (tableSet, error) {
	names, err := queryStrings(ctx, db, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	ts := tableSet{}
	for _, n := range names {
		cols, err := queryStrings(ctx, db, "SELECT name FROM pragma_table_info(?)", n)
		if err != nil {
			return nil, err
		}
		info := tableInfo{name: n, cols: map[string]bool{}}
		for _, c := range cols {
			info.cols[strings.ToLower(c)] = true
		}
		ts[strings.ToLower(n)] = info
	}
	return ts, nil
}

func missingSchema(ts tableSet) []string {
	var missing []string
	for _, r := range requiredSchema {
		t, ok := ts[strings.ToLower(r.table)]
		if !ok {
			missing = append(missing, "table "+r.table)
			continue
		}
		for _, c := range r.cols {
			if !t.cols[strings.ToLower(c)] {
				missing = append(missing, "column "+r.table+"."+c)
			}
		}
	}
	return missing
}

func queryStrings(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	var out []string
	err := each(ctx, db, q, args, func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// each runs q and calls fn for every row.
func each(ctx context.Context, db *sql.DB, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// quote quotes an SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func (s *snapshot) loadElements(ctx context.Context, db *sql.DB, _ tableSet) error {
	var els []*element
	err := each(ctx, db, "SELECT Id, Code, LookupTable, Decode, IsPrivate, weight FROM Element", nil, func(rows *sql.Rows) error {
		var id int64
		var code, lookup, decode sql.NullString
		var private, weight sql.NullInt64
		if err := rows.Scan(&id, &code, &lookup, &decode, &private, &weight); err != nil {
			return err
		}
		if id <= 0 || id > maxElementID {
			return fmt.Errorf("%w: element id %d out of range", ErrCorrupt, id)
		}
		els = append(els, &element{
			id:      int16(id),
			code:    strings.TrimSpace(code.String),
			flat:    flatIndex(strings.TrimSpace(code.String)),
			decoded: decode.Valid,
			public:  private.Int64 == 0,
			output:  strings.TrimSpace(decode.String) != "" && private.Int64 == 0,
			weight:  int(weight.Int64),
			lookup:  strings.TrimSpace(lookup.String),
		})
		return nil
	})
	if err != nil {
		return err
	}
	maxID := 0
	for _, e := range els {
		maxID = max(maxID, int(e.id))
	}
	s.elements = make([]*element, maxID+1)
	for _, e := range els {
		s.elements[e.id] = e
	}
	return nil
}

// loadNames reads the name tables: Make, Manufacturer, VehicleType and
// every lookup table an element names that the snapshot has, with the
// names vPIC has since changed replaced by its current ones
// (vocabulary.json).
func (s *snapshot) loadNames(ctx context.Context, db *sql.DB, ts tableSet) error {
	vocab, err := readVocabulary(vocabularyJSON)
	if err != nil {
		return err
	}
	s.tables = map[string]map[int32]string{}
	need := []string{"Make", "Manufacturer", "VehicleType"}
	for _, e := range s.elements {
		if e != nil && e.lookup != "" && ts.has(e.lookup, "Id", "Name") {
			need = append(need, e.lookup)
		}
	}
	for _, table := range need {
		t := strings.ToLower(table)
		if _, ok := s.tables[t]; ok {
			continue
		}
		m, err := readNames(ctx, db, ts[t].name)
		if err != nil {
			return err
		}
		vocab.rename(t, m) // vPIC's current names (vocabulary.json)
		s.tables[t] = m
	}
	s.linkNames()
	return nil
}

// linkNames points the elements and the name maps at s.tables.
func (s *snapshot) linkNames() {
	s.makeNames, s.mfrNames, s.vehTypes = s.tables["make"], s.tables["manufacturer"], s.tables["vehicletype"]
	for _, e := range s.elements {
		if e == nil || e.lookup == "" {
			continue
		}
		e.names, e.hasTable = s.tables[strings.ToLower(e.lookup)]
	}
}

func readNames(ctx context.Context, db *sql.DB, table string) (map[int32]string, error) {
	m := map[int32]string{}
	err := each(ctx, db, "SELECT Id, Name FROM "+quote(table), nil, func(rows *sql.Rows) error {
		var id int64
		var name sql.NullString
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		if name.Valid {
			m[int32(id)] = name.String
		}
		return nil
	})
	return m, err
}

func (s *snapshot) loadWMIs(ctx context.Context, db *sql.DB, _ tableSet) error {
	s.wmis = map[string]*wmiRow{}
	q := "SELECT Id, Wmi, ManufacturerId, VehicleTypeId, TruckTypeId, PublicAvailabilityDate, CreatedOn, UpdatedOn FROM Wmi ORDER BY Id"
	return each(ctx, db, q, nil, func(rows *sql.Rows) error {
		var id int64
		var code string
		var mfr, vt, tt sql.NullInt64
		var public, created, updated sql.NullString
		if err := rows.Scan(&id, &code, &mfr, &vt, &tt, &public, &created, &updated); err != nil {
			return err
		}
		code = strings.ToUpper(strings.TrimSpace(code))
		if _, dup := s.wmis[code]; dup {
			return nil // vPIC takes one row per WMI; keep the first
		}
		w := &wmiRow{id: int32(id), wmi: code, mfrID: int32(mfr.Int64), vehicleTypeID: int32(vt.Int64), truckTypeID: int32(tt.Int64)}
		if us, ok := parseStamp(public.String); ok {
			w.public = time.UnixMicro(us).UTC()
		}
		w.created = s.stamp(created, updated)
		s.wmis[code] = w
		return nil
	})
}

// wmiByID indexes the WMIs by Id.
func (s *snapshot) wmiByID() map[int32]*wmiRow {
	m := make(map[int32]*wmiRow, len(s.wmis))
	for _, w := range s.wmis {
		m[w.id] = w
	}
	return m
}

// loadWMISchemas reads VinSchema and Wmi_VinSchema. vPIC joins the two,
// so a link to a schema that does not exist counts for nothing.
func (s *snapshot) loadWMISchemas(ctx context.Context, db *sql.DB, _ tableSet) error {
	schemas := map[int32]bool{}
	s.qcSchemas = map[int32]bool{}
	err := each(ctx, db, "SELECT Id, TobeQCed FROM VinSchema", nil, func(rows *sql.Rows) error {
		var id int64
		var qc sql.NullInt64
		if err := rows.Scan(&id, &qc); err != nil {
			return err
		}
		schemas[int32(id)] = true
		if qc.Int64 != 0 {
			s.qcSchemas[int32(id)] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	byID := s.wmiByID()
	return each(ctx, db, "SELECT WmiId, VinSchemaId, YearFrom, YearTo FROM Wmi_VinSchema", nil, func(rows *sql.Rows) error {
		var wmiID, schema, from int64
		var to sql.NullInt64
		if err := rows.Scan(&wmiID, &schema, &from, &to); err != nil {
			return err
		}
		w, ok := byID[int32(wmiID)]
		if !ok || !schemas[int32(schema)] {
			return nil
		}
		ws := wmiSchema{schema: int32(schema), from: int(from), to: 2999}
		if to.Valid {
			ws.to = int(to.Int64)
		}
		w.schemas = append(w.schemas, ws)
		return nil
	})
}

// loadWMIMakes reads Wmi_Make and Make_Model (rows whose Make exists).
func (s *snapshot) loadWMIMakes(ctx context.Context, db *sql.DB, _ tableSet) error {
	byID := s.wmiByID()
	err := each(ctx, db, "SELECT WmiId, MakeId FROM Wmi_Make", nil, func(rows *sql.Rows) error {
		var wmiID, makeID int64
		if err := rows.Scan(&wmiID, &makeID); err != nil {
			return err
		}
		if w, ok := byID[int32(wmiID)]; ok {
			if _, ok := s.makeNames[int32(makeID)]; ok {
				w.makes = append(w.makes, int32(makeID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.modelMakes = map[int32][]int32{}
	return each(ctx, db, "SELECT MakeId, ModelId FROM Make_Model", nil, func(rows *sql.Rows) error {
		var makeID, modelID int64
		if err := rows.Scan(&makeID, &modelID); err != nil {
			return err
		}
		if _, ok := s.makeNames[int32(makeID)]; ok {
			s.modelMakes[int32(modelID)] = append(s.modelMakes[int32(modelID)], int32(makeID))
		}
		return nil
	})
}

func (s *snapshot) loadEngines(ctx context.Context, db *sql.DB, _ tableSet) error {
	s.engineModels = map[string][]int32{}
	err := each(ctx, db, "SELECT Id, Name FROM EngineModel ORDER BY Id", nil, func(rows *sql.Rows) error {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		n := strings.ToLower(strings.TrimSpace(name))
		s.engineModels[n] = append(s.engineModels[n], int32(id))
		return nil
	})
	if err != nil {
		return err
	}
	s.engineParts = map[int32][]enginePart{}
	q := "SELECT Id, EngineModelId, ElementId, AttributeId, CreatedOn, UpdatedOn FROM EngineModelPattern ORDER BY Id"
	return each(ctx, db, q, nil, func(rows *sql.Rows) error {
		var id, model, elem int64
		var attr string
		var created, updated sql.NullString
		if err := rows.Scan(&id, &model, &elem, &attr, &created, &updated); err != nil {
			return err
		}
		if s.elementID(elem) < 0 {
			return nil
		}
		s.engineParts[int32(model)] = append(s.engineParts[int32(model)], enginePart{id: int32(id), elem: int16(elem), attr: attr, created: s.stamp(created, updated)})
		return nil
	})
}

func (s *snapshot) loadConversions(ctx context.Context, db *sql.DB, _ tableSet) error {
	return each(ctx, db, "SELECT Id, FromElementId, ToElementId, Formula FROM Conversion ORDER BY Id", nil, func(rows *sql.Rows) error {
		var id, from, to int64
		var formula string
		if err := rows.Scan(&id, &from, &to, &formula); err != nil {
			return err
		}
		if s.elementID(to) < 0 || from <= 0 || from > maxElementID {
			return nil // vPIC joins the target Element
		}
		s.conversions = append(s.conversions, conversion{id: int32(id), from: int16(from), to: int16(to), formula: formula})
		return nil
	})
}

// loadDate finds the newest CreatedOn or UpdatedOn of every table that
// has those columns. The tables loaded row by row (Wmi, Pattern,
// EngineModelPattern) were counted while loading.
func (s *snapshot) loadDate(ctx context.Context, db *sql.DB, ts tableSet) error {
	for name, t := range ts {
		if name == "wmi" || name == "pattern" || name == "enginemodelpattern" {
			continue
		}
		for _, col := range []string{"createdon", "updatedon"} {
			if !t.cols[col] {
				continue
			}
			err := each(ctx, db, "SELECT max("+stampSQL(col)+") FROM "+quote(t.name), nil, func(rows *sql.Rows) error {
				var us sql.NullInt64
				if err := rows.Scan(&us); err != nil {
					return err
				}
				s.newest = max(s.newest, us.Int64)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	s.date = time.UnixMicro(s.newest).UTC()
	return nil
}

// checkLookups fails when an element the patterns use names a lookup
// table the snapshot lacks: its values could not be resolved.
func (s *snapshot) checkLookups() error {
	used := map[int16]bool{}
	for _, p := range s.patterns {
		used[p.elem] = true
	}
	for _, parts := range s.engineParts {
		for _, p := range parts {
			used[p.elem] = true
		}
	}
	var missing []string
	for id := range used {
		if e := s.element(id); e != nil && e.lookup != "" && !e.hasTable {
			missing = append(missing, "table "+e.lookup+" (lookup of "+e.code+")")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%w: missing %s", ErrSchema, strings.Join(missing, ", "))
	}
	return nil
}

// elementID returns v as an element id when the element exists, else -1:
// vPIC joins Element, so only the valid characters (error codes 2-5) see a
// pattern of an unknown element.
func (s *snapshot) elementID(v int64) int16 {
	if v <= 0 || v > maxElementID || s.element(int16(v)) == nil {
		return -1
	}
	return int16(v)
}

// stampSQL reads a timestamp column as Unix microseconds (to the
// millisecond): SQLite's julianday reads every spelling vPIC uses (as UTC)
// and gives NULL for anything else. loadDate uses it so that max() compares
// instants, not spellings.
func stampSQL(col string) string {
	return "(CAST(round((julianday(" + col + ") - 2440587.5) * 86400000.0) AS INTEGER) * 1000)"
}

// stamp is coalesce(UpdatedOn, CreatedOn), 0 when neither reads as a
// timestamp; it also keeps the newest timestamp seen, the snapshot's date.
func (s *snapshot) stamp(created, updated sql.NullString) int64 {
	c, _ := parseStamp(created.String)
	u, ok := parseStamp(updated.String)
	s.newest = max(s.newest, c, u)
	if ok {
		return u
	}
	return c
}

// parseID reads an attribute that is a lookup id: a canonical decimal
// integer, as vPIC compares cast(Id as varchar) = AttributeId.
func parseID(attr string) (int32, bool) {
	n, err := strconv.ParseInt(attr, 10, 32)
	if err != nil || strconv.FormatInt(n, 10) != attr {
		return 0, false
	}
	return int32(n), true
}
