package patent

// Claim is one numbered claim.
type Claim struct {
	// Number is the claim's number as printed (1, 2, ...).
	Number int
	// Text is the claim's text without its number.
	Text string
	// Independent is true when the claim refers to no other claim.
	Independent bool
}

// Sections holds the parts of a patent document that the PDF extractor finds. Every
// text field has its whitespace normalised (single spaces, trimmed) and is
// empty when the section was not found.
type Sections struct {
	// Pages is the number of pages in the document.
	Pages int
	// Abstract is the abstract from the front page, "(57) ABSTRACT".
	Abstract string
	// Claims are the numbered claims, in order.
	Claims []Claim
	// Summary is the SUMMARY section.
	Summary string
	// Description is the DETAILED DESCRIPTION section or, when the document
	// has no such heading, the whole specification body.
	Description string
}
