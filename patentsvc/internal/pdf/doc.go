// Package pdf finds the sections of a patent PDF: the abstract, the
// numbered claims, the summary and the detailed description. It is pure Go
// (no cgo), on top of pdf/lpdf, the copy of github.com/ledongthuc/pdf kept
// in the tree with our patches that bound what a document costs (its
// README.md lists them); only the OCR of scans without a text layer runs
// an external program, tesseract (Extractor).
//
// Extract reads each page's content stream itself (with the library's
// Interpret), placing every shown string on the page, then rebuilds lines
// by baseline. A page with a gutter, a vertical strip near the middle that
// no text crosses, is read as two columns, left before right; rows that
// cross the middle, such as titles, end a column run. Gutter line numbers
// (5, 10, ..., 65) and what OCR made of them ("1g", "is", "AO", "§"),
// column numbers and running headers ("US 11,234,567 B2", "U.S. Patent
// Jan. 4, 2022  Sheet 3 of 7", "Page 2") are dropped, words broken at line
// ends are mended, and the sections are then found with patterns that
// tolerate OCR errors. Tesseract's text layers (its GlyphLessFont, which
// OCRmyPDF writes too) are decoded as UTF-16 here: the library's CMap
// decoding garbles every character past U+00FF in them. The library's own text
// functions are not used: GetPlainText merges words and ignores columns,
// and GetTextByRow ignores the Td, cm and Tz operators with which OCR text
// layers place each word.
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
// documents instead: each page short of text has its largest image (the
// scan) decoded in pure Go (CCITT fax Group 3 and 4, JPEG, deflated or raw
// 1- and 8-bit grey, RGB or CMYK; not JBIG2, JPEG 2000 or indexed
// colour), scaled down by a whole factor to at most 12 million pixels,
// and given to tesseract (English) with a timeout per page (PageTimeout);
// the words it reads are placed on the page and go through the same line
// building and section finding as a text layer. Images over 40 million
// pixels are not decoded; a document of more than 50 pages has only its
// first and last 25 OCR'd; at most GOMAXPROCS pages are OCR'd at once by
// one Extractor, whatever the number of documents; images in form
// XObjects, inline images and
// rotated scans are not read. When OCR is unavailable, fails or reads too
// little, the error is ErrImageOnly with a *patent.NotOCRedError saying
// why.
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
// rotated and vertical text is not handled; widths of composite (CID)
// fonts are estimated, so born-digital files with such fonts may gain or
// lose spaces between words.
//
// Every section's text is clean when it leaves Extract (patent.CleanText:
// no NUL characters, each byte that is not UTF-8 as U+FFFD), whether it
// came from a text layer or from OCR (decisions.md, "Both services:
// hostile input answered, never a 5xx").
//
// Limits: encrypted files that need a password give ErrMalformed; the page
// tree is read to a depth of 32 and up to 5000 pages, and at most 200000
// strings are kept per page. ctx is checked between pages and every few
// thousand content operators, and once it is done every read of the file
// fails, which stops the library wherever it is. The whole document's text
// is held in memory: callers should cap the size of what they pass in.
package pdf
