package httpapi

import _ "embed" // openAPIDocument

// The API reference (decisions.md, "Both services: the API reference in a
// browser") serves the published document, docs/openapi/patentsvc.yaml.
// It lives outside the module, where go:embed cannot reach, so this
// package keeps a copy: `go generate ./internal/httpapi` (or `make
// api-docs` at the root) refreshes it, and TestServedDocumentIsPublished
// fails while the copy differs from the published document by a byte.

//go:generate cp ../../../docs/openapi/patentsvc.yaml openapi.yaml

// openAPIDocument is the copy of docs/openapi/patentsvc.yaml that GET
// ROOT_PATH/openapi.yaml serves and GET ROOT_PATH/docs shows.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// docsTitle is the reference page's title.
const docsTitle = "patentsvc API reference"
