package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Rows yields analyses one at a time, newest first. The store implements it
// with a database cursor so that memory stays flat however many rows there
// are. When yield returns an error, Rows stops and returns that error
// (wrapped or not); Rows returns its own errors (a failed query, a
// cancelled context) the same way.
type Rows func(yield func(patent.AnalysisRecord) error) error

// flushEvery is how many rows CSV buffers before it flushes them to the
// underlying writer and checks for a write error. The csv.Writer's own
// buffer already bounds memory; the explicit flush makes a dead client stop
// the export within a few rows rather than at the end.
const flushEvery = 256

// CSV writes the header row (company_name, analysis_type, model, analysis,
// timestamp) and one RFC 4180 record per analysis that rows yields, in the
// order yielded, flushing to w as it goes so that memory stays flat.
// Timestamps are RFC 3339 in UTC, to the second; a zero timestamp is an
// empty field. A text cell that starts like a formula gets a leading "'",
// and a carriage return in a field is written as a line feed (see the
// package documentation).
//
// It returns the number of analysis rows handed to w (the header not
// counted). The error is rows' error, or the first error writing to w,
// wrapped; on error the count is the number of rows written before it.
func CSV(w io.Writer, rows Rows) (int, error) {
	cw := csv.NewWriter(w)
	// RFC 4180 ends records with CRLF (the original service, on Python's
	// csv module, does too); readers also accept a bare LF.
	cw.UseCRLF = true
	if err := cw.Write([]string{"company_name", "analysis_type", "model", "analysis", "timestamp"}); err != nil {
		return 0, fmt.Errorf("export csv: %w", err)
	}

	n := 0
	var writeErr error
	record := make([]string, 5) // reused: csv.Writer copies nothing it keeps
	err := rows(func(r patent.AnalysisRecord) error {
		if writeErr != nil {
			// A Rows that ignores the error it was given gets it again.
			return writeErr
		}
		record[0] = cell(r.CompanyName)
		record[1] = cell(r.AnalysisType)
		record[2] = cell(r.Model)
		record[3] = cell(r.Response)
		record[4] = formatTimestamp(r.Timestamp)
		if err := cw.Write(record); err != nil {
			writeErr = err
			return err
		}
		n++
		if n%flushEvery == 0 {
			cw.Flush()
			if err := cw.Error(); err != nil {
				writeErr = err
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = writeErr
	}
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		return n, fmt.Errorf("export csv: %w", err)
	}
	return n, nil
}

// formatTimestamp is t in RFC 3339, UTC, or "" for the zero time (the
// spec's timestamp is "date-time or null").
func formatTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// crToLF turns CRLF and lone CR into LF. With UseCRLF, encoding/csv writes
// a field's LF as CRLF but silently drops a lone CR, and readers turn CRLF
// inside a quoted field back into LF; normalising first keeps every line
// break of the text instead of losing some.
// cell is a text value as the CSV holds it: defused against formula
// injection, then with its carriage returns as line feeds.
func cell(s string) string { return crToLF(defuse(s)) }

// formulaStart lists the first characters a spreadsheet reads as the start
// of a formula (OWASP, "CSV Injection").
const formulaStart = "=+-@\t\r"

// defuse prefixes s with "'" when it starts like a formula, so a
// spreadsheet shows it as text.
func defuse(s string) string {
	if s != "" && strings.IndexByte(formulaStart, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func crToLF(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
