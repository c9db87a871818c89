// Package export writes the downloads of a company's stored analyses
// (spec, "Export endpoints"): CSV writes the CSV export as it reads the
// rows, PDF renders the PDF report, and CSVFilename and PDFFilename name
// them. The handler finds the analyses (non-cached, newest first), answers
// 404 when there are none, and sets the media type and the
// Content-Disposition; this package does no I/O other than writing to the
// io.Writer it is given, and keeps no state between calls, so everything
// in it is safe for concurrent use.
//
// # CSV
//
// CSV takes its rows as a Rows function, which the store implements over a
// database cursor, and writes each row as soon as it has it: memory stays
// flat whatever the number of rows (a test holds 100,000 rows, about 150 MB
// of CSV, under 50 MB of heap growth; it measures about 2 MB). The output is
// RFC 4180 as encoding/csv writes it: comma-separated, CRLF after each
// record, fields with commas, quotes or line breaks in double quotes with
// quotes doubled, UTF-8 without a byte order mark. Timestamps are RFC 3339
// in UTC, to the second; a zero timestamp is an empty field.
//
// # PDF
//
// PDF lays out an A4 report with gopdf: the title "Patent Analysis Report:
// <company>", "Generated <YYYY-MM-DD HH:MM UTC>", a summary table (Total
// Analyses, Analysis Types, Models Used), then one section per analysis
// with a bold heading (number and type), its model, time and patent, and
// its text, word-wrapped, with page breaks and a "Page N" footer.
//
// The text is drawn literally, as decisions.md rules ("PDF export"): "<",
// "&", ">" and quotes appear as such, never as entities and never dropped.
// gopdf writes every string as glyph ids in a hex string, so nothing in
// the text needs escaping for the PDF writer; the spec's "escaped for XML
// special characters" describes the original service's HTML-like
// renderer, and escaping here would print the entities.
//
// # Caveats
//
// CSV: values are written as stored, with two exceptions. A cell that
// starts with "=", "+", "-", "@", a tab or a carriage return gets a
// leading "'" (OWASP's defence against CSV injection): the analysis text is
// model output that third-party patent text can steer, and a spreadsheet
// would run "=HYPERLINK(...)" as a formula; the quote shows the text as
// text, at the price of one character on a Markdown list ("- item") that
// starts an analysis. And a carriage return in a field is written as a
// line feed (encoding/csv would drop a lone CR, and readers turn CRLF
// inside a field into LF anyway), so the text read back has LF line
// breaks only. The file stays RFC 4180: the quote is part of the value.
// The order is the order Rows yields; CSV does not sort. The row count CSV
// returns on a write error includes rows still in its buffer.
//
// PDF is not streamed: gopdf holds the whole document (about 20 KB of heap
// per page, some four times the text) until it writes it at the end, and
// the compressed PDF is a few KB per page. The caller caps the number of
// analyses it passes; PDFSummary.Total is the full count, and when it is
// more than the analyses passed, the report says it shows only the most
// recent ones. Rendering takes a few milliseconds per page.
//
// Fonts: the Go fonts (golang.org/x/image/font/gofont, regular and bold)
// are embedded, subset to the characters used. They cover Latin, Greek,
// Cyrillic and common punctuation and symbols (WGL4), not CJK, Arabic,
// Hebrew, Indic scripts or emoji. A character they lack is drawn as
// U+FFFD, the replacement character, never as a blank (gopdf's default);
// control characters too. Invisible format characters they lack (zero
// width space and joiner, variation selectors, byte order mark) are
// dropped. Each missing character is logged once per report at DEBUG.
// There is no fallback font, no bidirectional reordering and no shaping.
//
// Layout: lines break at spaces; a word wider than a line (a URL) starts
// a line of its own and is cut wherever it must be, so nothing runs past
// the margins. Tabs become four spaces, spaces at the start of a line are
// kept, and LF, CRLF, CR, U+2028 and U+2029 break lines. There is no
// hyphenation and no Markdown rendering: "**" and "#" are shown as
// written. A heading is kept on the page with its first lines of text.
package export
