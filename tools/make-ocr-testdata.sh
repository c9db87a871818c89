#!/bin/sh
# make-ocr-testdata.sh rebuilds the OCR'd patent PDFs in
# patentsvc/internal/pdf/testdata/ocr from the sample set in
# ../shared/testdata/patents: each chosen page is rasterised at 200 dpi
# (pdftoppm), OCR'd back into a PDF page with an invisible text layer
# (tesseract's pdf output, one run over the list of page images, so the
# pages come out as one file). What comes out is what an old patent looks like after a scan-and-OCR pass:
# lines broken mid-sentence, two-column pages, hyphens at line ends, stray
# characters from figure text.
#
# Usage: tools/make-ocr-testdata.sh [SRC_DIR [DEST_DIR]]
# Needs: poppler-utils (pdftoppm) and tesseract-ocr with the
# English data (Debian: apt-get install poppler-utils tesseract-ocr).
#
# The pages are rasterised in black and white (-mono), which tesseract
# embeds as CCITT G4, the encoding of the originals' scans: about 55 KB a
# page where 8-bit grey is about 145 KB, for the same text layer within a
# few words. The pages are not joined with pdfunite: poppler 22's pdfunite
# writes a trailer whose /Size is smaller than its cross-reference table,
# which github.com/ledongthuc/pdf truncates to /Size, losing the catalog.
# The output is repeatable for a given tesseract version (tesseract 5.3.0
# made the committed files).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$root/../shared/testdata/patents}
dest=${2:-$root/patentsvc/internal/pdf/testdata/ocr}
dpi=200

for tool in pdftoppm tesseract; do
	command -v "$tool" >/dev/null || { echo "make-ocr-testdata: $tool not found (apt-get install poppler-utils tesseract-ocr)" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"

# Publication id and the pages kept: the front page (and its continuation
# when the abstract runs onto page 2), a two-column specification page and
# the claims pages of the whole documents. US9277756 and US11190026 are
# too large to copy whole (3.5 and 2.8 MB); their OCR'd front and claims
# pages are not.
while read -r id pages; do
	[ -n "$id" ] || continue
	: >"$tmp/$id.list"
	for p in $pages; do
		pdftoppm -r "$dpi" -mono -f "$p" -l "$p" "$src/$id.pdf" "$tmp/$id-$p"
		ls "$tmp/$id-$p"-*.pbm >>"$tmp/$id.list"
	done
	tesseract "$tmp/$id.list" "$tmp/$id" --dpi "$dpi" -l eng pdf 2>/dev/null
	mv "$tmp/$id.pdf" "$dest/$id.ocr.pdf"
	echo "$dest/$id.ocr.pdf: pages $pages, $(wc -c <"$dest/$id.ocr.pdf") bytes"
done <<'EOF'
US8427103 1 9 13 14
US11394072 1 2 16 17
US9277756 1 30 31
US11190026 1 22 23 24
US20090043621A1 1
US11151203 1
US8432257 1
US11363389 1
US9795977 1
EOF
