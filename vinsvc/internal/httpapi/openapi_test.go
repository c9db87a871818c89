package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"

	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// The published OpenAPI document is the one validated here, as it is:
// kin-openapi (v0.153.0) reads OpenAPI 3.1 and, for a 3.1 document,
// openapi3filter validates with a JSON Schema 2020-12 validator (type
// arrays, const, if/then). TestOpenAPIValidatorIsStrict proves on synthetic
// bodies that those keywords are really enforced, so that a lax validator
// cannot make the conformance test pass by accident.

// specPath is the service's published OpenAPI document.
const specPath = "../../../docs/openapi/vinsvc.yaml"

// specServer is one of the document's servers. Requests are addressed to it
// so that the document's router matches them; Echo routes on the path alone.
const specServer = "http://localhost:8080"

var registerDecoders sync.Once

// loadSpec loads and validates the document and builds its router.
func loadSpec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	registerDecoders.Do(func() {
		// The API reference's page and assets, and the document itself
		// (YAML text, as any client reads it), are checked as strings
		// against their schemas.
		for _, ct := range []string{"text/html", "text/javascript", "text/css", "image/png", "application/yaml"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
	})
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specPath)
	if err != nil {
		t.Fatalf("loading %s: %v", specPath, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s is OpenAPI %s; the test relies on 3.1 (JSON Schema 2020-12 validation)", specPath, doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", specPath, err)
	}
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatalf("router for %s: %v", specPath, err)
	}
	return doc, router
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	loadSpec(t)
}

// proxySecretPresent is the document's side of the ProxySecret scheme: the
// header must be there. Whether its value is right only the server knows.
func proxySecretPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	if s.Type != "apiKey" || s.In != "header" {
		return fmt.Errorf("security scheme %s: unexpected type %s in %s", in.SecuritySchemeName, s.Type, s.In)
	}
	if in.RequestValidationInput.Request.Header.Get(s.Name) == "" {
		return fmt.Errorf("header %s missing", s.Name)
	}
	return nil
}

// reqCheck is what the document must say of a case's request.
type reqCheck int

const (
	reqValid   reqCheck = iota // the document accepts it
	reqInvalid                 // the document rejects it (the server answers 4xx)
	reqSkip                    // the document cannot tell (e.g. the body size limit)
)

// panicBatchDecoder panics on batches, to get a 500 out of /v1/batch.
type panicBatchDecoder struct{ httpapi.Decoder }

func (panicBatchDecoder) DecodeBatch(context.Context, []string, bool) []vin.Outcome {
	panic("kaboom")
}

type conformanceCase struct {
	name   string
	opts   []option
	setup  func(t *testing.T, en *env) // runs before the request
	req    request
	status int // the status the case exists for
	reqDoc reqCheck
}

func conformanceCases() []conformanceCase {
	honda := vpictest.VINHondaAccord
	decode := func(q string) string { return "/v1/decode?vin=" + honda + q }
	warm := func(v string) func(t *testing.T, en *env) {
		return func(t *testing.T, en *env) {
			t.Helper()
			if rec := en.do(t, request{target: "/v1/decode?vin=" + v}); rec.Code != http.StatusOK {
				t.Fatalf("warming the cache with %s: status %d", v, rec.Code)
			}
		}
	}
	checkUpstream := func(t *testing.T, en *env) { en.mon.Check(context.Background()) }
	closeCache := func(t *testing.T, en *env) {
		en.mon.Check(context.Background())
		if err := en.cache.Close(); err != nil {
			t.Fatal(err)
		}
	}
	plan := map[string]string{"X-Gateway-Subscription": "pro", "X-Gateway-User": "alice"}
	post := http.MethodPost
	big := `{"vins": ["` + strings.Repeat("A", 70<<10) + `"]}`
	fifty1 := make([]string, 51)
	for i := range fifty1 {
		fifty1[i] = honda
	}

	return []conformanceCase{
		// GET /v1/decode
		{name: "decode-200-miss", req: request{target: decode("")}, status: 200},
		{name: "decode-200-snapshot", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)},
			setup: func(t *testing.T, en *env) { en.up.Script(vpictest.Reply{Status: 503}) }, req: request{target: decode("&raw=true")}, status: 200},
		{name: "decode-200-hit", setup: warm(honda), req: request{target: decode("")}, status: 200},
		{name: "decode-200-raw", req: request{target: decode("&raw=true")}, status: 200},
		{name: "decode-200-raw-0", req: request{target: decode("&raw=0")}, status: 200},
		{name: "decode-200-raw-1-hit", setup: warm(vpictest.VINVWTiguan), req: request{target: "/v1/decode?vin=" + vpictest.VINVWTiguan + "&raw=1"}, status: 200},
		{name: "decode-200-normalised", req: request{target: "/v1/decode?vin=%20%201hgcm82633a004352%09"}, status: 200},
		{name: "decode-200-check-digit", req: request{target: "/v1/decode?vin=" + vpictest.VINBMWCheckDigit}, status: 200},
		{name: "decode-200-nulls", req: request{target: "/v1/decode?vin=" + vpictest.VINFordF150}, status: 200},
		{name: "decode-200-no-data", req: request{target: "/v1/decode?vin=1HGCM826300000001"}, status: 200},
		{name: "decode-200-rate-limited-plan", opts: []option{withLimits("PRO=5/1m")}, req: request{target: decode(""), headers: plan}, status: 200},
		{name: "decode-200-request-id", req: request{target: decode(""), headers: map[string]string{"X-Request-Id": "trace-1.2_3"}}, status: 200},
		{name: "decode-400-missing-vin", req: request{target: "/v1/decode"}, status: 400, reqDoc: reqInvalid},
		{name: "decode-400-empty-vin", req: request{target: "/v1/decode?vin="}, status: 400, reqDoc: reqInvalid},
		{name: "decode-400-invalid-vin", req: request{target: "/v1/decode?vin=1HGCM82633AO04352"}, status: 400, reqDoc: reqInvalid},
		{name: "decode-400-short-vin", req: request{target: "/v1/decode?vin=1HGCM82633A00435"}, status: 400, reqDoc: reqInvalid},
		{name: "decode-400-bad-raw", req: request{target: decode("&raw=yes")}, status: 400, reqDoc: reqInvalid},
		{name: "decode-400-limited", opts: []option{withLimits("default=5/1m")}, req: request{target: "/v1/decode?vin=bad"}, status: 400, reqDoc: reqInvalid},
		{name: "decode-403-missing", req: request{target: decode(""), noAuth: true}, status: 403, reqDoc: reqInvalid},
		{name: "decode-403-wrong", req: request{target: decode(""), noAuth: true, headers: map[string]string{"X-Gateway-Proxy-Secret": "guess"}}, status: 403},
		{name: "decode-429", opts: []option{withLimits("default=1/1m")}, setup: warm(honda), req: request{target: decode("")}, status: 429},
		{name: "decode-500-upstream", setup: func(t *testing.T, en *env) { en.up.Script(vpictest.Reply{Status: 500, Body: "oops"}) }, req: request{target: decode("")}, status: 500},
		{name: "decode-500-upstream-garbage", setup: func(t *testing.T, en *env) {
			en.up.Script(vpictest.Reply{Status: 200, Body: vpictest.XMLAnswer, ContentType: "application/xml"})
		}, req: request{target: decode("")}, status: 500},
		{name: "decode-500-internal", opts: []option{withDecoder(panicDecoder{})}, req: request{target: decode("")}, status: 500},

		// POST /v1/batch
		{name: "batch-200-mixed", setup: warm(vpictest.VINFordF150), req: request{method: post, target: "/v1/batch",
			body: batchOf(honda, vpictest.VINFordF150, "1HGCM82633AO04352", " 1hgcm82633a004352 ", vpictest.VINBMWCheckDigit, "")}, status: 200},
		{name: "batch-200-raw", req: request{method: post, target: "/v1/batch?raw=true", body: batchOf(vpictest.VINVWTiguan, vpictest.VINHyundaiIoniq)}, status: 200},
		{name: "batch-200-upstream-failure", setup: func(t *testing.T, en *env) {
			warm(vpictest.VINFordF150)(t, en)
			en.up.Script(vpictest.Reply{Status: 503, Body: "maintenance"})
		}, req: request{method: post, target: "/v1/batch", body: batchOf(vpictest.VINFordF150, honda)}, status: 200},
		{name: "batch-200-limited", opts: []option{withLimits("PRO=5/1m")}, req: request{method: post, target: "/v1/batch", body: batchOf(honda), headers: plan}, status: 200},
		{name: "batch-400-not-json", req: request{method: post, target: "/v1/batch", body: "nope"}, status: 400, reqDoc: reqInvalid},
		{name: "batch-400-no-vins", req: request{method: post, target: "/v1/batch", body: `{"vin": ["1HGCM82633A004352"]}`}, status: 400, reqDoc: reqInvalid},
		{name: "batch-400-empty", req: request{method: post, target: "/v1/batch", body: `{"vins": []}`}, status: 400, reqDoc: reqInvalid},
		{name: "batch-400-51", req: request{method: post, target: "/v1/batch", body: batchOf(fifty1...)}, status: 400, reqDoc: reqInvalid},
		{name: "batch-400-null-item", req: request{method: post, target: "/v1/batch", body: `{"vins": ["1HGCM82633A004352", null]}`}, status: 400, reqDoc: reqInvalid},
		{name: "batch-400-bad-raw", req: request{method: post, target: "/v1/batch?raw=maybe", body: batchOf(honda)}, status: 400, reqDoc: reqInvalid},
		{name: "batch-403", req: request{method: post, target: "/v1/batch", body: batchOf(honda), noAuth: true}, status: 403, reqDoc: reqInvalid},
		// The body limit is not expressible in OpenAPI (only described).
		{name: "batch-413", req: request{method: post, target: "/v1/batch", body: big}, status: 413, reqDoc: reqSkip},
		// A batch bigger than the whole bucket.
		{name: "batch-429", opts: []option{withLimits("default=2/1m")}, req: request{method: post, target: "/v1/batch", body: batchOf(honda, honda, honda)}, status: 429},
		{name: "batch-500-internal", opts: []option{withDecoder(panicBatchDecoder{})}, req: request{method: post, target: "/v1/batch", body: batchOf(honda)}, status: 500},

		// GET /v1/suggest
		{name: "suggest-200", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=IHGCM82633A004352"}, status: 200},
		{name: "suggest-200-valid", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=" + honda}, status: 200},
		{name: "suggest-200-insertion", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=1HGCM8263A004352"}, status: 200},
		{name: "suggest-400-missing", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest"}, status: 400, reqDoc: reqInvalid},
		{name: "suggest-400-short", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=1HGCM82633A0043"}, status: 400, reqDoc: reqInvalid},
		{name: "suggest-400-punctuation", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=1HGCM82633A-04352"}, status: 400, reqDoc: reqInvalid},
		{name: "suggest-403", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, req: request{target: "/v1/suggest?vin=" + honda, noAuth: true}, status: 403, reqDoc: reqInvalid},
		{name: "suggest-429", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback), withLimits("default=1/1m")}, setup: warm(honda), req: request{target: "/v1/suggest?vin=" + honda}, status: 429},
		{name: "suggest-503-no-snapshot", req: request{target: "/v1/suggest?vin=" + honda}, status: 503},

		// GET /v1/health
		{name: "health-200", setup: checkUpstream, req: request{target: "/v1/health", noAuth: true}, status: 200},
		{name: "health-200-before-first-check", req: request{target: "/v1/health", noAuth: true}, status: 200},
		{name: "health-503-upstream", setup: func(t *testing.T, en *env) {
			en.up.Script(vpictest.Reply{Status: 503})
			en.mon.Check(context.Background())
		}, req: request{target: "/v1/health", noAuth: true}, status: 503},
		{name: "health-503-cache", setup: closeCache, req: request{target: "/v1/health", noAuth: true}, status: 503},
		{name: "health-200-snapshot", opts: []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, setup: func(t *testing.T, en *env) {
			en.up.Script(vpictest.Reply{Status: 503})
			en.mon.Check(context.Background())
		}, req: request{target: "/v1/health", noAuth: true}, status: 200},

		// Operations
		{name: "livez-200", req: request{target: "/livez", noAuth: true}, status: 200},
		{name: "readyz-200", req: request{target: "/readyz", noAuth: true}, status: 200},
		{name: "readyz-503", setup: closeCache, req: request{target: "/readyz", noAuth: true}, status: 503},
		{name: "metrics-200", setup: warm(honda), req: request{target: "/metrics", noAuth: true}, status: 200},

		// The API reference (DOCS_ENABLED): no secret needed.
		{name: "docs-200-document", req: request{target: "/openapi.yaml", noAuth: true}, status: 200},
		{name: "docs-200-page", req: request{target: "/docs", noAuth: true}, status: 200},
		{name: "docs-200-bundle", req: request{target: "/docs/swagger-ui-bundle.js", noAuth: true}, status: 200},
		{name: "docs-200-bundle-gzip", req: request{target: "/docs/swagger-ui-bundle.js", noAuth: true, headers: map[string]string{"Accept-Encoding": "gzip"}}, status: 200},
		{name: "docs-200-style", req: request{target: "/docs/swagger-ui.css", noAuth: true}, status: 200},
		{name: "docs-200-script", req: request{target: "/docs/docs.js", noAuth: true}, status: 200},
		{name: "docs-200-icon", req: request{target: "/docs/favicon-32x32.png", noAuth: true}, status: 200},
		{name: "docs-304-document", req: request{target: "/openapi.yaml", noAuth: true, headers: map[string]string{"If-None-Match": "*"}}, status: 304},
		{name: "docs-304-page", req: request{target: "/docs", noAuth: true, headers: map[string]string{"If-None-Match": "*"}}, status: 304},
		{name: "docs-304-asset", req: request{target: "/docs/docs.js", noAuth: true, headers: map[string]string{"If-None-Match": "*"}}, status: 304},
		{name: "docs-404-asset", req: request{target: "/docs/nope.js", noAuth: true}, status: 404},
		{name: "docs-404-document-disabled", opts: []option{withoutDocs()}, req: request{target: "/openapi.yaml", noAuth: true}, status: 404},
		{name: "docs-404-page-disabled", opts: []option{withoutDocs()}, req: request{target: "/docs", noAuth: true}, status: 404},
		{name: "docs-404-asset-disabled", opts: []option{withoutDocs()}, req: request{target: "/docs/docs.js", noAuth: true}, status: 404},

		// Paths and methods the document does not have.
		{name: "404-root", req: request{target: "/"}, status: 404, reqDoc: reqSkip},
		{name: "404-v1", req: request{target: "/v1/nope"}, status: 404, reqDoc: reqSkip},
		{name: "404-no-prefix", req: request{target: "/decode?vin=" + honda}, status: 404, reqDoc: reqSkip},
		{name: "405-post-decode", req: request{method: post, target: "/v1/decode"}, status: 405, reqDoc: reqSkip},
		{name: "405-get-batch", req: request{target: "/v1/batch"}, status: 405, reqDoc: reqSkip},
		{name: "405-post-health", req: request{method: post, target: "/v1/health"}, status: 405, reqDoc: reqSkip},
		{name: "405-delete-metrics", req: request{method: http.MethodDelete, target: "/metrics"}, status: 405, reqDoc: reqSkip},
	}
}

// Component responses for what no operation lists: unknown paths and
// methods.
const (
	notFoundResponse         = "NotFound"
	methodNotAllowedResponse = "MethodNotAllowed"
)

// TestOpenAPIConformance sends real requests through the real server (real
// cache, real vPIC client, fake vPIC over loopback) and validates each
// request and response against the published document: status, declared
// headers (required ones must be there) and body schema. It also checks
// that every response the document lists is exercised by some case.
func TestOpenAPIConformance(t *testing.T) {
	doc, router := loadSpec(t)
	cases := conformanceCases()
	covered := map[string]bool{}
	ran := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ran++
			covered[checkConformance(t, doc, router, tc)] = true
		})
	}
	if ran < len(cases) || t.Failed() {
		t.Logf("coverage of the document not checked: %d of %d cases ran, failed: %v", ran, len(cases), t.Failed())
		return
	}
	var missing []string
	for _, k := range documentedResponses(doc) {
		if !covered[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s lists responses no conformance case exercises; add cases for:\n  %s", specPath, strings.Join(missing, "\n  "))
	}
}

// checkConformance runs one case and returns the response of the document
// it exercised ("GET /v1/decode 200", or "components/responses/NotFound").
func checkConformance(t *testing.T, doc *openapi3.T, router routers.Router, tc conformanceCase) string {
	t.Helper()
	en := newEnv(t, tc.opts...)
	if tc.setup != nil {
		tc.setup(t, en)
	}
	tc.req.target = specServer + tc.req.target
	rec := en.do(t, tc.req)
	req := tc.req.httpRequest()
	what := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.RequestURI(), rec.Code)
	if rec.Code != tc.status {
		t.Fatalf("%s, want %d: the case does not exercise what it claims; body %s", what, tc.status, rec.Body)
	}
	ctx := context.Background()

	route, pathParams, err := router.FindRoute(req)
	var key string
	switch {
	case err == nil:
		key = fmt.Sprintf("%s %s %d", route.Method, route.Path, rec.Code)
	case isRouteError(err, routers.ErrPathNotFound) && rec.Code == http.StatusNotFound:
		route, key = componentRoute(t, doc, req, http.StatusNotFound, notFoundResponse)
	case isRouteError(err, routers.ErrMethodNotAllowed) && rec.Code == http.StatusMethodNotAllowed:
		route, key = componentRoute(t, doc, req, http.StatusMethodNotAllowed, methodNotAllowedResponse)
	default:
		t.Fatalf("%s: the document has no operation for it (%v), and the status is not the 404 or 405 that would explain it", what, err)
	}

	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:  proxySecretPresent,
			SkipSettingDefaults: true,
		},
	}
	if tc.reqDoc != reqSkip {
		reqErr := openapi3filter.ValidateRequest(ctx, in)
		switch {
		case tc.reqDoc == reqValid && reqErr != nil:
			t.Errorf("%s: the document rejects a request the server accepts:\n%v", what, reqErr)
		case tc.reqDoc == reqInvalid && reqErr == nil:
			t.Errorf("%s: the document accepts a request the server rejects", what)
		}
	}

	outOpts := &openapi3filter.Options{
		IncludeResponseStatus: true, // an undocumented status fails
		MultiError:            true,
	}
	outOpts.WithCustomSchemaErrorFunc(schemaErrorText)
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Options:                outOpts,
	}
	out.SetBodyBytes(rec.Body.Bytes())
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s does not conform to %s (%s):\n%v\nheaders: %v\nbody: %s", what, specPath, key, err, rec.Header(), truncateBody(rec.Body.String()))
	}
	return key
}

// schemaErrorText keeps a schema error to where and why, without the dump
// of the whole schema kin-openapi appends by default.
func schemaErrorText(e *openapi3.SchemaError) string {
	if p := e.JSONPointer(); len(p) > 0 {
		return fmt.Sprintf("at /%s: %s", strings.Join(p, "/"), e.Reason)
	}
	return e.Reason
}

func isRouteError(err, want error) bool {
	var re *routers.RouteError
	return errors.As(err, &re) && re.Reason == want.Error()
}

// componentRoute is a route whose only response is the document's
// components/responses/name, for answers no operation lists.
func componentRoute(t *testing.T, doc *openapi3.T, req *http.Request, status int, name string) (*routers.Route, string) {
	t.Helper()
	ref := doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("%s has no components/responses/%s for the %d answer", specPath, name, status)
	}
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, ref))
	return &routers.Route{Spec: doc, Path: req.URL.Path, Method: req.Method, Operation: op}, "components/responses/" + name
}

// documentedResponses lists every response of the document a case must
// exercise: each status of each operation, and the component responses for
// unknown paths and methods.
func documentedResponses(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code := range op.Responses.Map() {
				out = append(out, fmt.Sprintf("%s %s %s", method, path, code))
			}
		}
	}
	out = append(out, "components/responses/"+notFoundResponse, "components/responses/"+methodNotAllowedResponse)
	sort.Strings(out)
	return out
}

func truncateBody(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// TestOpenAPIRoutes checks that the server's routes and the document's
// operations are the same set.
func TestOpenAPIRoutes(t *testing.T) {
	doc, _ := loadSpec(t)
	en := newEnv(t)

	served := map[string]bool{}
	for _, r := range en.e.Routes() {
		if !slices.Contains(httpMethods, r.Method) {
			// Echo-internal entries, such as RouteNotFound handlers, use
			// pseudo-methods; they are not API operations.
			t.Logf("ignoring Echo-internal route %s %s", r.Method, r.Path)
			continue
		}
		served[r.Method+" "+openAPIPath(r.Path)] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	if len(served) == 0 {
		t.Fatal("the server lists no routes")
	}
	for _, k := range sortedKeys(served) {
		if !documented[k] {
			t.Errorf("the server serves %s, which %s does not document", k, specPath)
		}
	}
	for _, k := range sortedKeys(documented) {
		if !served[k] {
			t.Errorf("%s documents %s, which the server does not serve", specPath, k)
		}
	}
}

var httpMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// openAPIPath turns Echo's /a/:id into OpenAPI's /a/{id}.
func openAPIPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIValidatorIsStrict feeds the validator responses that break the
// document in ways the service could drift, and wants each rejected. It
// guards the conformance test against a validator that silently ignores
// OpenAPI 3.1 keywords (type arrays with "null", const, if/then,
// additionalProperties) or falls back to laxer checks.
func TestOpenAPIValidatorIsStrict(t *testing.T) {
	_, router := loadSpec(t)
	good := `{"vin":"1HGCM82633A004352","make":"HONDA","model":"Accord","model_year":"2003","trim":"EX-V6","series":null,` +
		`"body_class":"Coupe","drive_type":null,"engine_displacement_cc":2998.832712,"engine_displacement_l":2.998832712,` +
		`"engine_cylinders":6,"fuel_type_primary":"Gasoline","transmission_style":"Automatic","transmission_speeds":"5",` +
		`"plant_city":"MARYSVILLE","plant_state":"OHIO","plant_country":"UNITED STATES (USA)",` +
		`"manufacturer_name":"AMERICAN HONDA MOTOR CO., INC.","vehicle_type":"PASSENGER CAR","error_code":"0","error_text":null,"cached":false,"source":"vpic"}`
	goodHeaders := http.Header{
		"Content-Type": {"application/json"}, "X-Cache": {"MISS"}, "X-Data-Source": {"NHTSA vPIC"}, "X-Request-Id": {"abc"},
	}
	with := func(h http.Header, k, v string) http.Header {
		h = h.Clone()
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
		return h
	}
	errBody := func(code string, status int) string {
		return `{"error":"` + code + `","message":"m","status":` + strconv.Itoa(status) + `}`
	}
	for _, tt := range []struct {
		name    string
		target  string
		status  int
		header  http.Header
		body    string
		wantErr bool
	}{
		{"good result", "/v1/decode", 200, goodHeaders, good, false},
		{"null where the spec allows it", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"make":"HONDA"`, `"make":null`, 1), false},
		{"raw object", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"source":"vpic"}`, `"source":"vpic","raw":{"Make":"HONDA "}}`, 1), false},
		{"source unknown", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"source":"vpic"`, `"source":"cache"`, 1), true},
		{"wrong type in a type array", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"make":"HONDA"`, `"make":42`, 1), true},
		{"integer field fractional", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"engine_cylinders":6`, `"engine_cylinders":6.5`, 1), true},
		{"null where the spec forbids it", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"cached":false`, `"cached":null`, 1), true},
		{"field missing", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"trim":"EX-V6",`, ``, 1), true},
		{"field renamed", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"model_year"`, `"modelYear"`, 1), true},
		{"error_text with code 0 (if/then)", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"error_text":null`, `"error_text":"x"`, 1), true},
		{"raw value not a string", "/v1/decode", 200, goodHeaders, strings.Replace(good, `"source":"vpic"}`, `"source":"vpic","raw":{"Make":1}}`, 1), true},
		{"X-Cache missing", "/v1/decode", 200, with(goodHeaders, "X-Cache", ""), good, true},
		{"X-Cache not an enum value", "/v1/decode", 200, with(goodHeaders, "X-Cache", "MAYBE"), good, true},
		{"X-Data-Source not the const", "/v1/decode", 200, with(goodHeaders, "X-Data-Source", "elsewhere"), good, true},
		{"X-Request-Id missing", "/v1/decode", 200, with(goodHeaders, "X-Request-Id", ""), good, true},
		{"undocumented status", "/v1/decode", 418, goodHeaders, errBody("BAD_REQUEST", 418), true},
		{"error code of another status", "/v1/decode", 400, goodHeaders, errBody("FORBIDDEN", 400), true},
		{"status field differs from HTTP status", "/v1/decode", 400, goodHeaders, errBody("BAD_REQUEST", 422), true},
		{"429 without Retry-After", "/v1/decode", 429, with(with(goodHeaders, "X-RateLimit-Limit", "1"), "X-RateLimit-Remaining", "0"), errBody("RATE_LIMITED", 429), true},
		{"429 with everything", "/v1/decode", 429, with(with(with(goodHeaders, "X-RateLimit-Limit", "1"), "X-RateLimit-Remaining", "0"), "Retry-After", "3"), errBody("RATE_LIMITED", 429), false},
		{"batch entry neither result nor error", "/v1/batch", 200, goodHeaders, `{"results":[{"vin":"X"}],"count":1,"cached_count":0,"error_count":1}`, true},
		{"batch entry an error", "/v1/batch", 200, goodHeaders, `{"results":[{"vin":"X","error":"INVALID_VIN","message":"m"}],"count":1,"cached_count":0,"error_count":1}`, false},
		{"health 200 degraded", "/v1/health", 200, with(goodHeaders, "Cache-Control", "no-store"), `{"status":"degraded","version":"1.0.0"}`, true},
		{"health 200 with the upstream unreachable", "/v1/health", 200, with(goodHeaders, "Cache-Control", "no-store"), `{"status":"ok","version":"1.0.0","upstream":{"upstream_catalog":"unreachable"}}`, true},
		{"health last_check not a date-time", "/v1/health", 200, with(goodHeaders, "Cache-Control", "no-store"), `{"status":"ok","version":"1.0.0","upstream":{"upstream_catalog":"reachable","last_check":"yesterday"}}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if tt.target == "/v1/batch" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, specServer+tt.target, nil)
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatal(err)
			}
			in := &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
				Status:                 tt.status,
				Header:                 tt.header,
				Options:                &openapi3filter.Options{IncludeResponseStatus: true},
			}
			in.SetBodyBytes([]byte(tt.body))
			err = openapi3filter.ValidateResponse(context.Background(), in)
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Errorf("ValidateResponse(%s %d %s) = %v, want an error: %v", tt.target, tt.status, tt.body, err, tt.wantErr)
			}
		})
	}
}
