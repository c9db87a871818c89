package export

import (
	"strings"
	"time"
)

// CSVFilename is the download name of a company's CSV export: the name
// lowercased, spaces replaced by underscores, then "_export.csv"
// (spec, "Export endpoints"): CSVFilename("Acme Corp") is
// "acme_corp_export.csv".
func CSVFilename(company string) string {
	return fileStem(company) + "_export.csv"
}

// PDFFilename is the download name of a company's PDF export: the name
// lowercased, spaces replaced by underscores, then "-analysis-", the date
// of t in UTC as YYYY-MM-DD and ".pdf": PDFFilename("Acme Corp", t) is
// "acme_corp-analysis-2025-01-31.pdf".
func PDFFilename(company string, t time.Time) string {
	return fileStem(company) + "-analysis-" + t.UTC().Format(time.DateOnly) + ".pdf"
}

// fileStem lowercases company and replaces spaces with underscores, as the
// spec says. A validated CompanyName (letters, digits, space, "&", ".",
// "-") needs nothing else; any other character (a quote, a slash, a line
// break, a non-ASCII letter from an unvalidated caller) also becomes an
// underscore, so that the name is always safe in a Content-Disposition
// header and as a file name.
func fileStem(company string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '&', r == '.', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		default:
			return '_'
		}
	}, company)
}
