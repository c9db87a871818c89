package vpicdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Pattern table is read in chunks of rowids, each chunk's rows packed
// by SQLite into one text value. Row by row, the pure-Go driver spends most
// of the scan handing values over (about 3 s for the 800k rows, 75 s
// under the race detector); packed, the scan takes about half as long (a
// minute under the race detector). Text fields carry their length in
// bytes, so no content can be mistaken for a separator.
const patternChunk = 1 << 16

var patternRecord = "coalesce(Id, '') || ',' || coalesce(VinSchemaId, '') || ',' || coalesce(ElementId, '') || ',' || " +
	sized("Keys") + " || " + sized("AttributeId") + " || " + sized("CreatedOn") + " || " + sized("UpdatedOn")

// sized renders a text column as "<bytes>:<text>".
func sized(col string) string {
	return "length(CAST(coalesce(" + col + ", '') AS BLOB)) || ':' || coalesce(" + col + ", '')"
}

// loadPatterns reads the Pattern rows, interning keys and attributes, and
// groups them by schema.
func (s *snapshot) loadPatterns(ctx context.Context, db *sql.DB, _ tableSet) error {
	var lo, hi sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT min(rowid), max(rowid) FROM Pattern").Scan(&lo, &hi); err != nil {
		return err
	}
	p := &patternLoader{s: s, keyIdx: map[string]int32{}, attrIdx: map[string]int32{}}
	q := "SELECT coalesce(group_concat(" + patternRecord + ", ''), '') FROM Pattern WHERE rowid BETWEEN ? AND ?"
	for from := lo.Int64; lo.Valid && from <= hi.Int64; from += patternChunk {
		var packed string
		if err := db.QueryRowContext(ctx, q, from, from+patternChunk-1).Scan(&packed); err != nil {
			return err
		}
		if err := p.add(packed); err != nil {
			return fmt.Errorf("%w: Pattern rowids %d-%d: %v", ErrCorrupt, from, from+patternChunk-1, err)
		}
	}
	s.masks = p.masks
	s.indexPatterns(p.schemaOf)
	return nil
}

// patternLoader collects Pattern rows.
type patternLoader struct {
	s               *snapshot
	keyIdx, attrIdx map[string]int32
	masks           []uint64
	schemaOf        []int32
}

// add parses one chunk of packed rows.
func (p *patternLoader) add(packed string) error {
	r := &recordReader{s: packed}
	for r.pos < len(r.s) && r.err == nil {
		id, schema, elem := r.int(), r.int(), r.int()
		keys, attr, created, updated := strings.ToUpper(r.text()), r.text(), r.text(), r.text()
		if r.err != nil {
			break
		}
		stamp := p.s.stamp(sql.NullString{String: created}, sql.NullString{String: updated})
		p.s.patterns = append(p.s.patterns, pattern{created: stamp, id: int32(id), key: p.key(keys), attr: p.attr(attr), elem: p.s.elementID(elem)})
		p.schemaOf = append(p.schemaOf, int32(schema))
	}
	return r.err
}

// key interns and compiles a key; the copy lets the chunk be freed.
func (p *patternLoader) key(text string) int32 {
	if i, ok := p.keyIdx[text]; ok {
		return i
	}
	text = strings.Clone(text)
	var k key
	k, p.masks = compileKey(text, p.masks)
	i := int32(len(p.s.keys))
	p.s.keys = append(p.s.keys, k)
	p.keyIdx[text] = i
	return i
}

func (p *patternLoader) attr(text string) int32 {
	if i, ok := p.attrIdx[text]; ok {
		return i
	}
	text = strings.Clone(text)
	i := int32(len(p.s.attrs))
	p.s.attrs = append(p.s.attrs, text)
	p.attrIdx[text] = i
	return i
}

// recordReader reads packed rows: integers ended by ',', texts as
// "<bytes>:<text>". The first error sticks.
type recordReader struct {
	s   string
	pos int
	err error
}

var errRecord = errors.New("malformed packed row")

func (r *recordReader) int() int64 {
	if r.err != nil {
		return 0
	}
	end := strings.IndexByte(r.s[r.pos:], ',')
	if end < 0 {
		r.err = errRecord
		return 0
	}
	n, err := strconv.ParseInt(r.s[r.pos:r.pos+end], 10, 64)
	if err != nil {
		r.err = fmt.Errorf("%w: %v", errRecord, err)
	}
	r.pos += end + 1
	return n
}

func (r *recordReader) text() string {
	if r.err != nil {
		return ""
	}
	colon := strings.IndexByte(r.s[r.pos:], ':')
	if colon < 0 {
		r.err = errRecord
		return ""
	}
	n, err := strconv.Atoi(r.s[r.pos : r.pos+colon])
	start := r.pos + colon + 1
	if err != nil || n < 0 || start+n > len(r.s) {
		r.err = errRecord
		return ""
	}
	r.pos = start + n
	return r.s[start:r.pos]
}

// parseStamp reads vPIC's timestamps, "2015-03-04 10:33:34.057000",
// "2015-03-10 15:25:30", "2015-03-10" or "2026-03-12T04:06:32.436Z", as
// UTC (they carry no zone) Unix microseconds. It reads the digits itself:
// time.Parse would be a fifth of Open for the 1.6M values.
func parseStamp(v string) (int64, bool) {
	v = strings.TrimSuffix(v, "Z")
	if len(v) == len(time.DateOnly) {
		v += " 00:00:00"
	}
	if len(v) < 19 || v[4] != '-' || v[7] != '-' || (v[10] != ' ' && v[10] != 'T') || v[13] != ':' || v[16] != ':' {
		return 0, false
	}
	frac := ""
	if len(v) > 19 {
		if v[19] != '.' || len(v) == 20 || len(v) > 29 {
			return 0, false
		}
		frac = v[20:]
	}
	f := []int{digits(v[0:4]), digits(v[5:7]), digits(v[8:10]), digits(v[11:13]), digits(v[14:16]), digits(v[17:19]),
		digits((frac + "000000000")[:9])}
	if slices.Min(f) < 0 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 {
		return 0, false
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6], time.UTC).UnixMicro(), true
}

// digits reads a decimal number, -1 when s holds anything else.
func digits(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}
