// Package pdf finds the sections of a patent PDF: the abstract, the
// numbered claims, the summary and the detailed description. The document
// is read by an engine others maintain and fuzz, poppler, through its
// programs run as child processes, each inside a boundary the kernel
// enforces (engine.go): an address-space ceiling and a kill at the
// deadline. pdftotext -tsv gives every word of the text layer with its
// box, page by page, and pdftoppm renders a page without text
// for OCR by tesseract (Extractor). The package itself is pure Go (no
// cgo); what is ours is the line builder, the sections and claims, and
// the OCR driver.
//
// The words are placed on the page and lines rebuilt by baseline. A page
// with a gutter, a vertical strip near the middle that no text crosses,
// is read as two columns, left before right; rows that cross the middle,
// such as titles, end a column run. Gutter line numbers (5, 10, ..., 65)
// and what OCR made of them ("1g", "is", "AO", "§"), column numbers and
// running headers ("US 11,234,567 B2", "U.S. Patent Jan. 4, 2022  Sheet 3
// of 7", "Page 2") are dropped, words broken at line ends are mended, and
// the sections are then found with patterns that tolerate OCR errors.
//
// Extract is safe for concurrent use; it keeps no state between calls.
//
// # Caveats
//
// What it is made for: the PDFs Google Patents serves for US grants (B1,
// B2) and applications (A1), which are mostly scans with an invisible OCR
// text layer, and born-digital PDFs laid out the same way. On other layouts
// (EP, WO, CN, JP) it extracts the text, but finds sections only where the
// English headings and the INID code (57) are present; EP claims in three
// languages are not told apart.
//
// Scanned documents without a text layer give ErrImageOnly from Extract.
// The threshold is an average of 200 letters and digits per page, so a
// document whose text layer covers only a few of its pages can pass with
// little text. An Extractor with an OCR engine (FindTesseract) reads such
// documents instead: each page short of text is rendered by pdftoppm at
// 300 dpi in grey (a larger page at less, to at most 12 million pixels),
// whatever the encoding of its scan (CCITT fax, JBIG2, JPEG, JPEG 2000,
// Flate, in an image, a form or inline), and given to tesseract (English)
// through a pipe, with a timeout per page (PageTimeout); the words it
// reads are placed on the page and go through the same line building and
// section finding as a text layer. A document of more than 50 pages has
// only its first and last 25 OCR'd; at most GOMAXPROCS pages are OCR'd at
// once by one Extractor, whatever the number of documents. When OCR is
// unavailable, fails or reads too little, the error is ErrImageOnly with a
// *patent.NotOCRedError saying why.
//
// The output is only as good as the text layer. OCR misreads characters
// ("GO6F" for "G06F", "Supply" for "supply"), repeats words ("a a") and
// drops the hyphens at line ends. A broken word is mended when its second
// half is a bare suffix ("main" + "ing") or when the document uses the
// whole word elsewhere; otherwise its halves stay apart ("con comitant").
//
// The abstract is looked for on the first two pages, from "(57) ABSTRACT"
// (also "( 57 )", "(5 7)", "a7)", any code of up to three characters in
// brackets, "(87)" or "657)" as OCR reads it, or "ABSTRACT" alone) to "N
// Claims, M Drawing Sheets", the next INID code, the end of its column,
// or, on an application, figure text after its last sentence. Lines of
// OCR specks (". an .", "| _") inside it are passed over, so a paragraph
// does not end at its first line break; after a finished sentence they
// end it. It is followed onto page 2 only after "(Continued)", and only
// when page 2 closes it with "N Claims, M Drawing Sheets".
//
// Claims start at the last claim signal followed by claim 1 ("What is
// claimed is:", "We claim:", "CLAIMS", ...; OCR: "What is claimed i") and
// end at "* * * * *" (OCR: "k k k k k", "eR Re &"), a certificate of
// correction or the end of the document. They are split on "1.", "2.",
// ... only in increasing order ("l." and "§." read as 1 and 5); a
// dependent claim whose number OCR lost ("The device of claim 1," at a
// line start) is taken as the missing number when the next claim is the
// one after it; a claim whose number OCR misread otherwise is merged into
// the claim before it. Table rows that trail a claim's last sentence (a
// table atop the next column) are dropped. A claim is
// independent when its text refers to no other claim ("claim 1", "claims
// 1-3", "any of the preceding claims"); a reference garbled by OCR can make
// a dependent claim look independent.
//
// Summary and Description are found by their upper-case headings
// ("SUMMARY", "DETAILED DESCRIPTION", "DESCRIPTION OF THE PREFERRED
// EMBODIMENTS", a heading may wrap onto two lines). Without a detailed
// description heading, Description is the whole specification: the pages
// after the front page that are not drawing sheets or front-page
// continuations, up to the claims. A front-page-only file has neither.
// Tables, formulas and chemical structures come out as rows of words;
// vertical text is not handled; text outside the page's box is not read
// (poppler clips it).
//
// Every section's text is clean when it leaves Extract (patent.CleanText:
// no NUL characters, each byte that is not UTF-8 as U+FFFD), whether it
// came from a text layer or from OCR (decisions.md, "Both services:
// hostile input answered, never a 5xx").
//
// Limits (Limits; decisions.md, "patentsvc: PDFs read by a maintained
// engine"): files that need a password give ErrMalformed; a document of
// more pages than PDF_MAX_PAGES is refused as soon as the engine reaches
// the first page too many; each engine program may use PDF_MAX_DECODED_MB of memory beyond
// its own (EngineBase), and a program past it makes the document a
// *LimitError; every program is killed when PDF_EXTRACT_TIMEOUT or the
// caller's context ends. What the engine prints is bounded too: 8 MiB of
// words a document, 100000 words a page, 64 KiB a word. The document's
// words are held a page at a time, its lines whole: callers cap the size
// of what they pass in (PDF_MAX_BYTES).
package pdf
