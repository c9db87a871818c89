package httpapi

import _ "embed" // openAPIDocument

// The API reference (decisions.md, "Both services: the API reference in a
// browser") serves the published document, docs/openapi/vinsvc.yaml. It
// lives outside the module, where go:embed cannot reach, so this package
// keeps a copy: `go generate ./internal/httpapi` (or `make api-docs` at
// the root) refreshes it, and TestServedDocumentIsPublished fails while
// the copy differs from the published document by a byte.

//go:generate cp ../../../docs/openapi/vinsvc.yaml openapi.yaml

// openAPIDocument is the copy of docs/openapi/vinsvc.yaml that GET
// /openapi.yaml serves and GET /docs shows.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// docsTitle is the reference page's title.
const docsTitle = "vinsvc API reference"
