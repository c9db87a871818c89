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
// PDF lays out an A4 report with gopdf, in three parts under the title
// "Patent Analysis Report: <company>" and "Generated <YYYY-MM-DD HH:MM
// UTC>" (decisions.md, "patentsvc: what changed, and what the portfolio
// covers"):
//
//   - Portfolio: the facts of the company's newest portfolio analysis
//     that kept them (patent.ReportSummary.Portfolio, Patents, PortfolioAt; the
//     handler picks it): a table of the patents analysed and of the
//     search's results granted and applications, with the countries where
//     they are active or not; the CPC shares as horizontal bars, largest
//     first, each labelled with its bare code and its share as a
//     percentage (the service ships no table of CPC titles); the search's
//     results per publication year as bars, a year without one a bar of 0;
//     then the patents analysed, at most MaxReportPatents (then "and N
//     more"): id, title (wrapped, at most six lines), publication date,
//     and under the title the link to its PDF, shown short
//     ("patentimages.storage.googleapis.com/…/US11696682.pdf") and opening
//     the whole URL through a link annotation when it is http or https.
//     Each piece is left out when it would be empty, so no chart box is
//     ever empty; a company without portfolio facts (only single-patent
//     analyses, or analyses stored before the facts were kept) gets one
//     line saying so.
//   - Tracking, for a tracked company only (patent.ReportSummary.Tracked): its
//     patent count per scheduled run, alerts marked. An untracked company
//     has no tracking part at all.
//   - Analyses: the summary table (Total Analyses, Analysis Types, Models
//     Used), the chart of analyses per month (every company has analyses,
//     so every report has it: it belongs to the analyses, not to
//     tracking), then one section per analysis with a bold heading (number
//     and type), its model, time and patent, and its text rendered as
//     Markdown.
//
// Pages break as needed, with a "Page N" footer. PDFWithOptions does the
// same with the fonts of a Fonts, which NewFonts builds once (the service
// at start-up, from PDF_FONT_PATH).
//
// # Markdown
//
// The analysis text is the model's answer, which is Markdown. It is parsed
// with goldmark (CommonMark and the GFM table extension; no other
// extension, so "~~", task boxes and bare URLs stay as written) and drawn:
// headings bold, in sizes by level (13 pt for "#" down to 10 pt, the body
// size, for "####" to "######", the last two italic); paragraphs; bullet
// lists ("•", "◦", "▪" by depth) and numbered lists, their own numbers and
// delimiter kept, with hanging indents, nested lists indented further;
// bold, italic and both (Go bold, italic, bold italic); inline code in Go
// Mono on a light grey box, code blocks (fenced or indented) in Go Mono on
// a grey band, their lines and indentation kept; block quotes indented
// with a grey bar; thematic breaks as a rule; links as their text then
// the URL in parentheses, in grey (once only when the text is the URL:
// autolinks); images as "[image: alt] (URL)"; hard line breaks kept, soft
// ones a space (none between two CJK characters). GFM tables are aligned
// columns of text, see table.go: a bold header over a rule, each column as
// wide as its widest cell when the table fits, else the narrow columns
// kept and the rest sharing the width, their cells wrapped and aligned as
// the delimiter row says; a row that does not fit the page starts the
// next one under the header again; a table of more columns than fit at 30
// points each is drawn as "header: value" lines per row. Nesting past half
// the content width indents no further.
//
// The text is drawn literally, as decisions.md rules ("PDF export"), but
// for the Markdown syntax itself (and its backslash escapes): "<", "&",
// ">" and quotes appear as such, never as entities and never dropped. HTML
// is never interpreted: raw HTML, inline or as a block ("<script>…"), is
// shown as written (blocks in Go Mono, grey), and so are entity references
// ("&amp;" stays "&amp;"), unlike a Markdown-to-HTML renderer. gopdf
// writes every string as glyph ids in a hex string, so nothing in the text
// needs escaping for the PDF writer; the spec's "escaped for XML special
// characters" describes the original service's HTML-like renderer, and
// escaping here would print the entities. The CSV keeps the raw text.
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
// analyses it passes; patent.ReportSummary.Total is the full count, and when it is
// more than the analyses passed, the report says it shows only the most
// recent ones. The portfolio part is bounded whatever it is given: at most
// MaxReportPatents patents, patent.MaxPortfolioCPC CPC bars, the latest
// 100 publication years and 40 countries. Rendering takes a few
// milliseconds per page.
//
// Fonts: the Go fonts (golang.org/x/image/font/gofont: regular, bold,
// italic, bold italic, mono) are embedded, each added to a report when it
// first draws with it and subset to the characters used. They cover
// Latin, Greek, Cyrillic and common punctuation and symbols (WGL4), not
// CJK, Arabic, Hebrew, Indic scripts or emoji. With a fallback font
// (NewFonts; the service's PDF_FONT_PATH, and PDF_FONT_BOLD_PATH for bold,
// else the regular draws bold text too), each character the Go font of
// its face lacks is drawn in the fallback font when that has it, so Latin
// text keeps the Go fonts and CJK runs take the fallback (italic and code
// fall back to its regular). Only single TrueType fonts (.ttf, glyf
// outlines) can be embedded by gopdf: NewFonts refuses collections (.ttc)
// and CFF OpenType fonts (most .otf, Noto Sans CJK) with ErrFontFormat. A
// character neither font has is drawn as U+FFFD, the replacement
// character, in the Go font, never as a blank (gopdf's default) and never
// dropped; control characters too. Invisible format characters the fonts
// lack (zero width space and joiner, variation selectors, byte order mark)
// are dropped. Each missing character is logged once per report at DEBUG.
// There is no bidirectional reordering, no shaping and no synthetic bold
// (a fallback font without a bold draws bold text in its regular).
// NewFonts parses the fonts once and every report shares them read-only
// (gopdf's FontContainer): with Droid Sans Fallback (3.5 MB) that takes
// about 9 ms and holds some 6 MB for the life of the process; PDF, without
// a Fonts, parses the Go fonts for each report (about 2 ms, the hyphen's
// cmap below included).
//
// Hyphens: the Go fonts draw the hyphen-minus as a minus sign, as wide as
// "+", which in prose reads as a dash; the report's proportional faces are
// given a cmap in which "-" is their text hyphen (the glyph of U+00AD), so
// "-" is drawn as a hyphen and still copied as "-" (cmap.go). Go Mono, for
// code, keeps its own. The hyphen U+2010 and the non-breaking hyphen
// U+2011, which the Go fonts lack, are drawn (and copied) as "-"; the
// figure dash U+2012 as an en dash. A soft hyphen (U+00AD) is not drawn,
// unless a line breaks there, where it is drawn as "-".
//
// Layout: lines break at spaces, at soft hyphens, and between CJK
// characters (ideographs, kana, hangul), not before closing punctuation
// nor after opening punctuation; never at hyphens. A word wider than its
// line (a URL, a long identifier, a long table cell) starts a line of its
// own and is cut wherever it must be, in any run of text, bold, code or
// table cell alike, so nothing runs past the margins (FuzzMarkdownPDF
// checks it on arbitrary Markdown). Tabs become four spaces, spaces at the
// start of a line are kept, and in plain text (title, summary) LF, CRLF,
// CR, U+2028 and U+2029 break lines. There is no automatic hyphenation.
//
// A heading is never the last line of a page: every heading (the parts',
// the analyses', the portfolio's charts and table, and the Markdown
// headings of an analysis) starts a new page unless it fits with the
// first two lines of what follows it (two lines of a paragraph, list or
// quote, of code, two rows of a table; a heading that follows it with
// that heading's own two lines; a chart whole). A heading that ends its
// analysis keeps its own lines only, and what follows is measured no
// further than a page. A table's header row is kept with its first row,
// and a chart is never split.
package export
