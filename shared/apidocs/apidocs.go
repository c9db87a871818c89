// Package apidocs serves a service's API reference: its OpenAPI document
// and an interactive page on it (Swagger UI), every asset embedded in the
// binary (decisions.md, "Both services: the API reference in a browser").
//
// Each service gives New its own document and page title and registers
// the three handlers in its routes.go, side by side under one base (the
// root for vinsvc, ROOT_PATH for patentsvc):
//
//	GET <base>/openapi.yaml  Reference.Document: the document, byte for byte
//	GET <base>/docs          Reference.Page: the page
//	GET <base>/docs/:asset   Reference.Asset: the page's scripts, styles and icons
//
// The page refers to everything by relative address (docs/…, openapi.yaml),
// so it works under any base and behind a proxy that adds a path prefix.
//
// # Caveats
//
//   - The page loads nothing from another origin and runs no inline script:
//     every response carries CSP, which allows scripts, styles, images,
//     fonts and connections from the page's own origin only (images also
//     as data: URLs, which Swagger UI's stylesheet uses for its icons).
//   - "Try it" calls go to the service that served the page: the page's
//     script replaces the document's servers, in the browser, with the
//     base it computes from its own address. The document served at
//     openapi.yaml is never rewritten.
//   - Nothing here checks credentials: the page and the document are
//     public wherever the routes are reachable. The calls made from the
//     page carry the credentials the reader types into Swagger UI's
//     Authorize dialog, which are kept in the page only.
//   - Responses carry an ETag and Cache-Control: no-cache; a request whose
//     If-None-Match names the ETag gets 304. Scripts and styles are sent
//     gzip-compressed to a client that accepts it (compressed once, on the
//     first such request).
package apidocs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// SwaggerUIVersion is the release of the npm package swagger-ui-dist whose
// files are embedded (swagger-ui/README.md; tools/swagger-ui.sh fetches
// them).
const SwaggerUIVersion = "5.35.0"

// CSP is the Content-Security-Policy of every response: nothing but the
// page's own origin, no inline script or style, no framing, no form
// submission, no <base> element.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

// DocumentType is the media type of the OpenAPI document (RFC 9512).
const DocumentType = "application/yaml"

// files are the page's assets: the page's own (page.html, docs.js,
// docs.css) and Swagger UI's (swagger-ui/, with the licences that go with
// them).
//
//go:embed page.html docs.js docs.css
//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css
//go:embed swagger-ui/favicon-16x16.png swagger-ui/favicon-32x32.png
//go:embed swagger-ui/LICENSE swagger-ui/NOTICE swagger-ui/swagger-ui-bundle.js.LICENSE.txt
var files embed.FS

// assets maps the names served under docs/ to their embedded file and
// media type.
var assets = map[string]struct{ file, contentType string }{
	"docs.js":              {"docs.js", "text/javascript; charset=utf-8"},
	"docs.css":             {"docs.css", "text/css; charset=utf-8"},
	"swagger-ui-bundle.js": {"swagger-ui/swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
	"swagger-ui.css":       {"swagger-ui/swagger-ui.css", "text/css; charset=utf-8"},
	"favicon-16x16.png":    {"swagger-ui/favicon-16x16.png", "image/png"},
	"favicon-32x32.png":    {"swagger-ui/favicon-32x32.png", "image/png"},
}

// Reference is one service's API reference. Its handlers are safe for
// concurrent use.
type Reference struct {
	document *resource
	page     *resource
	assets   map[string]*resource
}

// New returns the reference of the OpenAPI document document (YAML, served
// as it is), whose page is titled title.
func New(title string, document []byte) *Reference {
	var page bytes.Buffer
	// The template is the package's own, embedded: an error is a bug the
	// package's tests catch.
	tmpl := template.Must(template.ParseFS(files, "page.html"))
	if err := tmpl.Execute(&page, struct{ Title string }{title}); err != nil {
		panic("apidocs: page.html: " + err.Error())
	}
	r := &Reference{
		document: &resource{body: bytes.Clone(document), contentType: DocumentType},
		page:     &resource{body: page.Bytes(), contentType: "text/html; charset=utf-8"},
		assets:   make(map[string]*resource, len(assets)),
	}
	for name, a := range assets {
		r.assets[name] = &resource{file: a.file, contentType: a.contentType, compress: !strings.HasPrefix(a.contentType, "image/")}
	}
	return r
}

// Document serves the OpenAPI document.
func (r *Reference) Document(c echo.Context) error { return r.document.serve(c) }

// Page serves the reference page.
func (r *Reference) Page(c echo.Context) error { return r.page.serve(c) }

// Asset serves the page's asset named by the route parameter "asset"
// (registered as <base>/docs/:asset). An unknown name is Echo's 404, which
// the service's error handler renders.
func (r *Reference) Asset(c echo.Context) error {
	a, ok := r.assets[c.Param("asset")]
	if !ok {
		return echo.ErrNotFound
	}
	return a.serve(c)
}

// resource is one response body with its headers. An embedded file's
// body, the ETag and the compressed body are made on first use: a server
// built and never asked for its reference (most tests) spends nothing on
// them.
type resource struct {
	file        string // the embedded file of an asset; empty when body is given
	contentType string
	compress    bool

	once sync.Once
	body []byte
	etag string
	gz   []byte // nil unless compress
}

func (res *resource) prepare() {
	if res.file != "" {
		body, err := files.ReadFile(res.file)
		if err != nil {
			// The names are the package's own: TestResponses serves each.
			panic("apidocs: " + err.Error())
		}
		res.body = body
	}
	sum := sha256.Sum256(res.body)
	res.etag = `"` + hex.EncodeToString(sum[:16]) + `"`
	if !res.compress {
		return
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level: no error
	zw.Write(res.body)                                     // into a bytes.Buffer: no error
	zw.Close()
	if b.Len() < len(res.body) {
		res.gz = b.Bytes()
	}
}

func (res *resource) serve(c echo.Context) error {
	res.once.Do(res.prepare)
	body, etag, gzipped := res.body, res.etag, false
	if res.gz != nil && acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		// Another representation, so another entity tag (RFC 9110 8.8.3).
		body, etag, gzipped = res.gz, strings.TrimSuffix(res.etag, `"`)+`-gzip"`, true
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set(echo.HeaderXContentTypeOptions, "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", etag)
	if res.gz != nil {
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	if etagMatch(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	if gzipped {
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	return c.Blob(http.StatusOK, res.contentType, body)
}

// etagMatch reports whether an If-None-Match value names etag (weak or
// strong, as RFC 9110 13.1.2 compares for GET) or is "*".
func etagMatch(header, etag string) bool {
	for v := range strings.SplitSeq(header, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == "*" || v == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding value accepts gzip: named
// without q=0.
func acceptsGzip(header string) bool {
	for v := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(v, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
