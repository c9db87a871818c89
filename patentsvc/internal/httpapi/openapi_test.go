package httpapi_test

// The conformance test of docs/openapi/patentsvc.yaml: real requests go
// through the real server (newEnv: real store, auth, rate limits and
// analysis pipeline around fakes), and kin-openapi's openapi3filter checks
// each request and each response (status, headers, body) against the
// published document. Every route of the router must be documented and every
// documented operation served; every status the document lists for an
// operation must be produced by some request below.
//
// kin-openapi v0.153.0 reads OpenAPI 3.1 natively: openapi3filter turns on
// its JSON Schema 2020-12 validation for 3.1 documents (type arrays with
// "null", const, anyOf with {type: null}). The document is therefore used as
// published, with one test-only tightening (closeResponseObjects) so that a
// field the code adds without documenting it fails the test.

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/wait"
)

// openAPIFile is the published document.
const openAPIFile = "../../../docs/openapi/patentsvc.yaml"

// spec is the loaded document with a router per deployment shape.
type spec struct {
	doc *openapi3.T
	// routers[root] routes requests of a service whose ROOT_PATH is root
	// ("" or "/patents"), each built on the one server entry of the
	// document that describes that deployment.
	routers map[string]routers.Router
	opts    *openapi3filter.Options

	mu      sync.Mutex
	covered map[string]bool // "GET /jobs/{job_id} 404", "component NotFound"
}

var registerDecoders sync.Once

// loadSpec loads and validates the published document and prepares it for
// checking responses.
func loadSpec(t testing.TB) *spec {
	t.Helper()
	registerDecoders.Do(func() {
		// Exports are checked as text and binary strings against their
		// schemas (the CSV must also parse).
		openapi3filter.RegisterBodyDecoder("text/csv", csvBodyDecoder)
		openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
		// The API reference's page and assets, and the document itself
		// (YAML text, as any client reads it), as strings.
		for _, ct := range []string{"text/html", "text/javascript", "text/css", "image/png", "application/yaml"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
	})
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openAPIFile)
	if err != nil {
		t.Fatalf("load %s: %v", openAPIFile, err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s: openapi = %q, want 3.1.0", openAPIFile, doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI 3.1 document: %v", openAPIFile, err)
	}
	closeResponseObjects(t, doc)

	s := &spec{doc: doc, routers: map[string]routers.Router{}, covered: map[string]bool{}}
	for _, server := range doc.Servers {
		root := strings.TrimSuffix(server.URL, "/")
		if v, ok := server.Variables["root_path"]; ok {
			root = strings.ReplaceAll(server.URL, "{root_path}", v.Default)
		}
		one := *doc // the same document, seen through one of its servers
		one.Servers = openapi3.Servers{server}
		r, err := gorillamux.NewRouter(&one)
		if err != nil {
			t.Fatalf("router for server %q: %v", server.URL, err)
		}
		s.routers[root] = r
	}
	if s.routers[""] == nil || s.routers["/patents"] == nil {
		t.Fatalf("servers = %v, want one for no ROOT_PATH and one for ROOT_PATH=/patents", slices.Collect(maps.Keys(s.routers)))
	}
	s.opts = &openapi3filter.Options{
		IncludeResponseStatus: true, // a status the document does not list fails
		MultiError:            true,
		SkipSettingDefaults:   true,
		AuthenticationFunc:    bearerAuth,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
			openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(func(v string) error {
				if u, err := url.Parse(v); err != nil || u.Scheme == "" || u.Host == "" {
					return fmt.Errorf("%q is not an absolute URI", v)
				}
				return nil
			})),
		},
	}
	return s
}

// closeResponseObjects sets additionalProperties: false on every object
// schema of a response body that lists properties and says nothing about
// others. The published document leaves objects open, as clients must
// tolerate fields added later; the test pins today's set, so a field the
// code sends without the document naming it is drift.
func closeResponseObjects(t testing.TB, doc *openapi3.T) {
	t.Helper()
	no := false
	closeObj := func(_ string, ref *openapi3.SchemaRef) error {
		s := ref.Value
		if s.Type.Is("object") && len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = &no
		}
		return nil
	}
	var refs []*openapi3.ResponseRef
	for _, r := range doc.Components.Responses {
		refs = append(refs, r)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				refs = append(refs, r)
			}
		}
	}
	for _, r := range refs {
		for _, mt := range r.Value.Content {
			if mt.Schema == nil {
				continue
			}
			if err := mt.Schema.WalkSubtree(closeObj); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// bearerAuth is the AuthenticationFunc of the bearerAuth scheme: the
// request must carry "Authorization: Bearer <token>". Whether the token is
// good is the server's business (a 401 the document lists).
func bearerAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName != "bearerAuth" {
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer token")
	}
	return nil
}

func csvBodyDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if _, err := csv.NewReader(bytes.NewReader(data)).ReadAll(); err != nil {
		return nil, fmt.Errorf("body is not CSV: %w", err)
	}
	return string(data), nil
}

// apiCase is one request and what the document must say about it.
type apiCase struct {
	name   string
	r      request
	status int
	// reqErr is empty when the request conforms to the document; otherwise
	// the document must reject it, with an error containing reqErr (the
	// document knows the rule the server enforces).
	reqErr string
}

// Substrings of openapi3filter's request errors.
const (
	errSecurity = "security requirements failed"
	errBody     = "request body has an error"
)

func errParam(name string) string { return fmt.Sprintf("parameter %q", name) }

// check sends c through the server, checks its status, then validates the
// request and the response against the document.
func (s *spec) check(t *testing.T, en *env, c apiCase) *httptest.ResponseRecorder {
	t.Helper()
	return s.checkAt(t, en, en.root, c)
}

// checkAt is check for a service whose ROOT_PATH is root, whatever prefix
// en puts before targets.
func (s *spec) checkAt(t *testing.T, en *env, root string, c apiCase) *httptest.ResponseRecorder {
	t.Helper()
	r := c.r
	if r.method == "" {
		r.method = http.MethodGet
	}
	if r.remote == "" {
		r.remote = en.freshAddr()
	}
	desc := fmt.Sprintf("%s: %s %s", c.name, r.method, en.root+r.target)
	rec := en.do(t, r)
	if rec.Code != c.status {
		t.Errorf("%s: status %d, want %d; body %.300s", desc, rec.Code, c.status, rec.Body)
		return rec
	}

	// The validator's own copy of the request (it reads the body).
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, en.root+r.target, body)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	router := s.routers[root]
	if router == nil {
		t.Fatalf("%s: no server of the document describes ROOT_PATH %q", desc, root)
	}

	route, params, err := router.FindRoute(req)
	if err != nil {
		s.checkUnrouted(t, desc, req, rec, err)
		return rec
	}
	// gorillamux matches the escaped path; the server decodes a path
	// parameter once before validating it, and so does the document's
	// reader.
	for k, v := range params {
		if u, err := url.PathUnescape(v); err == nil {
			params[k] = u
		}
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: s.opts}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	switch {
	case c.reqErr == "" && err != nil:
		t.Errorf("%s: the document rejects the request: %v", desc, err)
	case c.reqErr != "" && err == nil:
		t.Errorf("%s: the document accepts the request, want it rejected (%s); the server answered %d", desc, c.reqErr, rec.Code)
	case c.reqErr != "" && !strings.Contains(err.Error(), c.reqErr):
		t.Errorf("%s: the document rejects the request with %q, want an error about %q", desc, err, c.reqErr)
	}

	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                s.opts,
	})
	if err != nil {
		t.Errorf("%s: response %d does not conform to the document: %v\nheaders: %v\nbody: %.500s", desc, rec.Code, err, rec.Header(), rec.Body)
		return rec
	}
	s.cover(fmt.Sprintf("%s %s %d", route.Method, route.Path, rec.Code))
	return rec
}

// checkUnrouted validates the answer to a request no operation matches:
// an unknown path is the NotFound response, a known path with another
// method the MethodNotAllowed one.
func (s *spec) checkUnrouted(t *testing.T, desc string, req *http.Request, rec *httptest.ResponseRecorder, routeErr error) {
	t.Helper()
	var name string
	switch {
	case errors.Is(routeErr, routers.ErrPathNotFound):
		name = "NotFound"
	case errors.Is(routeErr, routers.ErrMethodNotAllowed):
		name = "MethodNotAllowed"
	default:
		t.Errorf("%s: no route: %v", desc, routeErr)
		return
	}
	resp := s.doc.Components.Responses[name]
	if resp == nil {
		t.Fatalf("components.responses.%s is missing", name)
	}
	if want := map[string]int{"NotFound": 404, "MethodNotAllowed": 405}[name]; rec.Code != want {
		t.Errorf("%s: the document has no %s %s, so the answer must be %d (%s), got %d", desc, req.Method, req.URL.Path, want, name, rec.Code)
		return
	}
	// A route of its own whose only response is the component.
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(rec.Code, resp))
	route := &routers.Route{Spec: s.doc, Path: req.URL.Path, Method: req.Method, Operation: op}
	err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: s.opts},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                s.opts,
	})
	if err != nil {
		t.Errorf("%s: response does not conform to components.responses.%s: %v\nheaders: %v\nbody: %s", desc, name, err, rec.Header(), rec.Body)
		return
	}
	s.cover("component " + name)
}

func (s *spec) cover(key string) {
	s.mu.Lock()
	s.covered[key] = true
	s.mu.Unlock()
}

func (s *spec) run(t *testing.T, en *env, cases []apiCase) {
	t.Helper()
	for _, c := range cases {
		s.check(t, en, c)
	}
}

// documented lists "METHOD /path STATUS" for every response the document
// lists, plus the components every path may answer with.
func (s *spec) documented() []string {
	var out []string
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				out = append(out, fmt.Sprintf("%s %s %s", method, path, status))
			}
		}
	}
	out = append(out, "component NotFound", "component MethodNotAllowed")
	sort.Strings(out)
	return out
}

// echoPath turns Echo's /jobs/:job_id into OpenAPI's /jobs/{job_id}.
func echoPath(p string) string {
	return regexp.MustCompile(`:([a-z_]+)`).ReplaceAllString(p, "{$1}")
}

// TestOpenAPIRoutes: every route the router serves is documented, and every
// documented operation is served.
func TestOpenAPIRoutes(t *testing.T) {
	s := loadSpec(t)
	e, ok := newEnv(t).srv.(*echo.Echo)
	if !ok {
		t.Fatal("the server is not an *echo.Echo")
	}
	served := map[string]bool{}
	for _, r := range e.Routes() {
		served[r.Method+" "+echoPath(r.Path)] = true
	}
	documented := map[string]bool{}
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(served)) {
		if !documented[k] {
			t.Errorf("route %s is not in %s", k, openAPIFile)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		if !served[k] {
			t.Errorf("%s documents %s, which the server does not serve", openAPIFile, k)
		}
	}
	if len(served) == 0 || len(documented) == 0 {
		t.Errorf("%d routes served, %d documented: nothing compared", len(served), len(documented))
	}
}

// TestOpenAPIFacts ties values the document spells out to the code.
func TestOpenAPIFacts(t *testing.T) {
	s := loadSpec(t)
	if s.doc.Info.Version != httpapi.InterfaceVersion {
		t.Errorf("info.version = %q, want %q (httpapi.InterfaceVersion)", s.doc.Info.Version, httpapi.InterfaceVersion)
	}
	var enum []string
	for _, v := range s.doc.Components.Schemas["ModelId"].Value.Enum {
		enum = append(enum, fmt.Sprint(v))
	}
	if !slices.Equal(enum, patent.ModelIDs()) {
		t.Errorf("ModelId enum = %v, want the allow-list %v", enum, patent.ModelIDs())
	}
	name := s.doc.Components.Schemas["CompanyName"].Value
	if name.MinLength != patent.CompanyNameMin || name.MaxLength == nil || *name.MaxLength != patent.CompanyNameMax {
		t.Errorf("CompanyName lengths = %d..%v, want %d..%d", name.MinLength, name.MaxLength, patent.CompanyNameMin, patent.CompanyNameMax)
	}
	// Every operation but the public ones needs the bearer token.
	public := []string{"POST /auth/register", "POST /auth/login", "POST /auth/refresh", "GET /models",
		"GET /health", "GET /livez", "GET /readyz", "GET /metrics",
		"GET /openapi.yaml", "GET /docs", "GET /docs/{asset}"}
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			open := op.Security != nil && len(*op.Security) == 0
			if open != slices.Contains(public, key) {
				t.Errorf("%s: needs no token = %v, want %v", key, open, !open)
			}
		}
	}
}

// TestOpenAPIConformance sends a request for every status of every
// operation through the real server and validates it and its answer.
func TestOpenAPIConformance(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		s := loadSpec(t)
		ran := false
		t.Run("main", func(t *testing.T) { conformanceMain(t, s, dialect); ran = true })
		t.Run("store down", func(t *testing.T) { conformanceStoreDown(t, s, dialect) })
		t.Run("analyzer not configured", func(t *testing.T) { conformanceNoAnalyzer(t, s, dialect) })
		t.Run("root path", func(t *testing.T) { conformanceRootPath(t, s, dialect) })
		t.Run("api reference", func(t *testing.T) { conformanceDocs(t, s, dialect) })
		t.Run("patent changes", func(t *testing.T) { conformanceChanges(t, s, dialect) })

		if !ran { // skipped (no PostgreSQL) or stopped
			return
		}
		var missing []string
		for _, k := range s.documented() {
			if !s.covered[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			t.Errorf("no request produced these documented responses (add a case, or drop them from the document):\n  %s", strings.Join(missing, "\n  "))
		}
	})
}

func conformanceMain(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect))
	ctx := context.Background()
	admin, adminTok := en.admin(t)
	bob, bobTokens := en.newUser(t, "bob@example.com")
	bobTok := bobTokens.AccessToken
	// The refresh cases use a user of their own: replaying a refresh token
	// revokes every token of its user, and bob's are needed below.
	_, daveTokens := en.newUser(t, "dave@example.com")
	pns := en.world.Company("Acme Corp", 2)
	en.world.Company("Beta Labs", 1)
	// A company whose only patent is a scan without a text layer.
	scanned := "US11762912B2"
	en.world.Serp.SetResults("Scan Corp", 1, []map[string]any{serpapitest.Organic(scanned, "Scanned document",
		time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02"), en.world.PDFs.Add(scanned, analysistest.ScannedPDF))})

	over := `{"email":"` + strings.Repeat("a", 1<<20) + `","password":"x"}`
	overBatch := `{"companies":["` + strings.Repeat("a", 1<<20) + `"]}`

	// Auth.
	s.run(t, en, []apiCase{
		{"register 201", request{method: "POST", target: "/auth/register", body: credentials("carol@example.com", password)}, 201, ""},
		{"register 400 malformed", request{method: "POST", target: "/auth/register", body: `{"email":`}, 400, errBody},
		{"register 400 empty body", request{method: "POST", target: "/auth/register"}, 400, errBody},
		{"register 409", request{method: "POST", target: "/auth/register", body: credentials("Bob@Example.com", password)}, 409, ""},
		{"register 413", request{method: "POST", target: "/auth/register", body: over}, 413, errBody},
		{"register 422 missing", request{method: "POST", target: "/auth/register", body: `{}`}, 422, errBody},
		{"register 422 short password", request{method: "POST", target: "/auth/register", body: credentials("dan@example.com", "short")}, 422, errBody},
		{"register 422 bad email", request{method: "POST", target: "/auth/register", body: credentials("not-an-email", password)}, 422, errBody},
		{"login 200", request{method: "POST", target: "/auth/login", body: credentials(adminEmail, password)}, 200, ""},
		{"login 400", request{method: "POST", target: "/auth/login", body: `{"email"`}, 400, errBody},
		{"login 401", request{method: "POST", target: "/auth/login", body: credentials(adminEmail, "wrong password")}, 401, ""},
		{"login 401 unknown email", request{method: "POST", target: "/auth/login", body: credentials("nobody@example.com", password)}, 401, ""},
		{"login 413", request{method: "POST", target: "/auth/login", body: over}, 413, errBody},
		{"login 422", request{method: "POST", target: "/auth/login", body: `{"email":"ada@example.com"}`}, 422, errBody},
		{"refresh 200", request{method: "POST", target: "/auth/refresh", body: refreshBody(daveTokens.RefreshToken)}, 200, ""},
		{"refresh 401 reused", request{method: "POST", target: "/auth/refresh", body: refreshBody(daveTokens.RefreshToken)}, 401, ""},
		{"refresh 401 access token", request{method: "POST", target: "/auth/refresh", body: refreshBody(adminTok)}, 401, ""},
		{"refresh 400", request{method: "POST", target: "/auth/refresh", body: `{"refresh_token":`}, 400, errBody},
		{"refresh 413", request{method: "POST", target: "/auth/refresh", body: `{"refresh_token":"` + strings.Repeat("a", 1<<20) + `"}`}, 413, ""},
		{"refresh 422", request{method: "POST", target: "/auth/refresh", body: `{"refresh_token":""}`}, 422, errBody},
		{"me 200", request{target: "/auth/me", token: bobTok}, 200, ""},
		{"me 200 with a request id", request{target: "/auth/me", token: bobTok, headers: map[string]string{"X-Request-Id": "trace-1"}}, 200, ""},
		{"me 401 no token", request{target: "/auth/me"}, 401, errSecurity},
		{"me 401 bad token", request{target: "/auth/me", token: "not-a-jwt"}, 401, ""},
		{"models 200", request{target: "/models"}, 200, ""},
		{"models 200 ignores a token", request{target: "/models", token: "junk"}, 200, ""},
	})
	// Rate limits: one client over each window.
	for range 5 {
		en.do(t, request{method: "POST", target: "/auth/register", body: `{}`, remote: "198.51.100.7:1"})
	}
	for range 10 {
		en.do(t, request{method: "POST", target: "/auth/login", body: `{}`, remote: "198.51.100.8:1"})
	}
	s.run(t, en, []apiCase{
		{"register 429", request{method: "POST", target: "/auth/register", body: credentials("erin@example.com", password), remote: "198.51.100.7:1"}, 429, ""},
		{"login 429", request{method: "POST", target: "/auth/login", body: credentials(adminEmail, password), remote: "198.51.100.8:1"}, 429, ""},
	})

	// Analysis.
	s.run(t, en, []apiCase{
		{"analyze 200", request{target: "/analyze/Acme%20Corp?model=anthropic/claude-sonnet-4.5", token: bobTok}, 200, ""},
		{"analyze 200 cached", request{target: "/analyze/Acme%20Corp?model=anthropic/claude-sonnet-4.5", token: bobTok}, 200, ""},
		{"analyze 200 default model", request{target: "/analyze/Beta%20Labs", token: bobTok}, 200, ""},
		{"analyze 200 no patents", request{target: "/analyze/Nobody%20Inc", token: bobTok}, 200, ""},
		{"analyze 200 scanned", request{target: "/analyze/Scan%20Corp", token: bobTok}, 200, ""},
		{"analyze 400 model", request{target: "/analyze/Acme%20Corp?model=openai/gpt-5", token: bobTok}, 400, errParam("model")},
		{"analyze 401", request{target: "/analyze/Acme%20Corp"}, 401, errSecurity},
		{"analyze 422 first character", request{target: "/analyze/-Acme", token: bobTok}, 422, errParam("company_name")},
		{"analyze 422 too short", request{target: "/analyze/A", token: bobTok}, 422, errParam("company_name")},
		{"analyze 422 character", request{target: "/analyze/Acme%2A", token: bobTok}, 422, errParam("company_name")},
		{"analyze 422 too long", request{target: "/analyze/" + strings.Repeat("a", 101), token: bobTok}, 422, errParam("company_name")},
		{"patent 200", request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme%20Corp", token: bobTok}, 200, ""},
		{"patent 400 model", request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme&model=bad/model", token: bobTok}, 400, errParam("model")},
		{"patent 401", request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme"}, 401, errSecurity},
		{"patent 404", request{target: "/analyze/patent/US99999999B2?company_name=Acme", token: bobTok}, 404, ""},
		{"patent 422 id", request{target: "/analyze/patent/us123?company_name=Acme", token: bobTok}, 422, errParam("patent_id")},
		{"patent 422 company missing", request{target: "/analyze/patent/" + pns[0], token: bobTok}, 422, errParam("company_name")},
		{"patent 422 company", request{target: "/analyze/patent/" + pns[0] + "?company_name=-x", token: bobTok}, 422, errParam("company_name")},
		{"patent 422 scanned", request{target: "/analyze/patent/" + scanned + "?company_name=Scan%20Corp", token: bobTok}, 422, ""},
	})
	en.world.LLM.Script(llmtest.Reply{Status: 402})
	s.run(t, en, []apiCase{
		{"patent 502", request{target: "/analyze/patent/" + pns[1] + "?company_name=Acme&model=mistralai/mistral-nemo", token: bobTok}, 502, ""},
	})
	en.world.LLM.Script(llmtest.Reply{Status: 401})
	s.run(t, en, []apiCase{
		{"analyze 200 llm failure", request{target: "/analyze/Acme%20Corp?model=google/gemini-2.5-flash", token: bobTok}, 200, ""},
	})

	twentyOne := `{"companies":["C0"` + strings.Repeat(`,"Cx"`, 20) + `]}`
	s.run(t, en, []apiCase{
		{"batch 200", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":["Acme Corp","Nobody Inc","Beta Labs","acme corp"],"max_workers":2}`}, 200, ""},
		{"batch 200 model", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":["Beta Labs"],"model":"meta-llama/llama-3.3-70b-instruct"}`}, 200, ""},
		{"batch 400 malformed", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":`}, 400, errBody},
		{"batch 400 model", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":["Acme"],"model":"nope/nope"}`}, 400, errBody},
		{"batch 401", request{method: "POST", target: "/analyze/batch", body: `{"companies":["Acme"]}`}, 401, errSecurity},
		{"batch 413", request{method: "POST", target: "/analyze/batch", token: bobTok, body: overBatch}, 413, errBody},
		{"batch 422 empty", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":[]}`}, 422, errBody},
		{"batch 422 too many", request{method: "POST", target: "/analyze/batch", token: bobTok, body: twentyOne}, 422, errBody},
		{"batch 422 name", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":["Acme","-bad"]}`}, 422, errBody},
		{"batch 422 workers", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":["Acme"],"max_workers":6}`}, 422, errBody},
		{"batch 422 type", request{method: "POST", target: "/analyze/batch", token: bobTok, body: `{"companies":"Acme"}`}, 422, errBody},
		{"async 400 malformed", request{method: "POST", target: "/analyze/batch/async", token: bobTok, body: `{`}, 400, errBody},
		{"async 400 model", request{method: "POST", target: "/analyze/batch/async", token: bobTok, body: `{"companies":["Acme"],"model":"x/y"}`}, 400, errBody},
		{"async 401", request{method: "POST", target: "/analyze/batch/async", body: `{"companies":["Acme"]}`}, 401, errSecurity},
		{"async 413", request{method: "POST", target: "/analyze/batch/async", token: bobTok, body: overBatch}, 413, errBody},
		{"async 422", request{method: "POST", target: "/analyze/batch/async", token: bobTok, body: `{"companies":["Acme"],"max_workers":0}`}, 422, errBody},
	})
	rec := s.check(t, en, apiCase{"async 202", request{method: "POST", target: "/analyze/batch/async", token: bobTok,
		body: `{"companies":["Acme Corp","Nobody Inc"],"model":"mistralai/mistral-nemo"}`}, 202, ""})
	var job jobBody
	decode(t, rec, &job)
	waitForJob(t, en, bobTok, job.JobID, "completed")
	for range 2 {
		wantStatus(t, en.do(t, request{method: "POST", target: "/analyze/batch/async", token: bobTok, body: `{"companies":["Nobody Inc"]}`}), 202)
	}
	carolTok := en.login(t, "carol@example.com").AccessToken
	var jobPage struct {
		NextCursor *string `json:"next_cursor"`
	}
	decode(t, en.do(t, request{target: "/jobs?limit=2", token: bobTok}), &jobPage)
	var analysesPage struct {
		NextCursor *string `json:"next_cursor"`
	}
	decode(t, en.do(t, request{target: "/analyze/batch?limit=2", token: bobTok}), &analysesPage)
	if jobPage.NextCursor == nil || analysesPage.NextCursor == nil {
		t.Fatal("want a second page of jobs and of analyses")
	}
	s.run(t, en, []apiCase{
		{"job 200 completed", request{target: "/jobs/" + job.JobID, token: bobTok}, 200, ""},
		{"job 401", request{target: "/jobs/" + job.JobID}, 401, errSecurity},
		{"job 404", request{target: "/jobs/no-such-job", token: bobTok}, 404, ""},
		{"jobs 200", request{target: "/jobs", token: bobTok}, 200, ""},
		{"jobs 200 first page", request{target: "/jobs?limit=2", token: bobTok}, 200, ""},
		{"jobs 200 last page", request{target: "/jobs?limit=2&cursor=" + url.QueryEscape(*jobPage.NextCursor), token: bobTok}, 200, ""},
		{"jobs 200 status", request{target: "/jobs?status=completed", token: bobTok}, 200, ""},
		{"jobs 200 malformed cursor", request{target: "/jobs?cursor=garbage!", token: bobTok}, 200, ""},
		{"jobs 401", request{target: "/jobs"}, 401, errSecurity},
		{"jobs 422 status", request{target: "/jobs?status=done", token: bobTok}, 422, errParam("status")},
		{"jobs 422 limit 0", request{target: "/jobs?limit=0", token: bobTok}, 422, errParam("limit")},
		{"jobs 422 limit 201", request{target: "/jobs?limit=201", token: bobTok}, 422, errParam("limit")},
		{"jobs 422 limit x", request{target: "/jobs?limit=x", token: bobTok}, 422, errParam("limit")},
		// Ownership: another user's job is an unknown id; admins see all.
		{"job 200 admin reads any", request{target: "/jobs/" + job.JobID, token: adminTok}, 200, ""},
		{"job 404 another user's", request{target: "/jobs/" + job.JobID, token: carolTok}, 404, ""},
		{"jobs 200 admin user_id", request{target: fmt.Sprintf("/jobs?user_id=%d", bob.ID), token: adminTok}, 200, ""},
		{"jobs 200 own user_id", request{target: fmt.Sprintf("/jobs?user_id=%d", bob.ID), token: bobTok}, 200, ""},
		{"jobs 403 another user_id", request{target: fmt.Sprintf("/jobs?user_id=%d", admin.ID), token: bobTok}, 403, ""},
		{"jobs 422 user_id 0", request{target: "/jobs?user_id=0", token: adminTok}, 422, errParam("user_id")},
		{"jobs 422 user_id x", request{target: "/jobs?user_id=x", token: bobTok}, 422, errParam("user_id")},
		{"analyses 200", request{target: "/analyze/batch", token: bobTok}, 200, ""},
		{"analyses 200 last page", request{target: "/analyze/batch?limit=2&cursor=" + url.QueryEscape(*analysesPage.NextCursor), token: bobTok}, 200, ""},
		{"analyses 200 filter", request{target: "/analyze/batch?company_name=beta%20LABS", token: bobTok}, 200, ""},
		{"analyses 200 unconstrained filter", request{target: "/analyze/batch?company_name=-", token: bobTok}, 200, ""},
		{"analyses 401", request{target: "/analyze/batch"}, 401, errSecurity},
		{"analyses 422", request{target: "/analyze/batch?limit=0", token: bobTok}, 422, errParam("limit")},
	})

	// Exports, comparisons and analytics.
	seedExports(t, en)
	for i, name := range []string{"Compare One", "Compare Two"} {
		add(t, en, patent.AnalysisRecord{CompanyName: name, AnalysisType: patent.AnalysisPortfolio, Response: "facts", Timestamp: epoch,
			Portfolio: &patent.Portfolio{CPC: []patent.CPCShare{{Code: "H04L", Share: 0.5}, {Code: []string{"G06F", "B60L"}[i], Share: 0.3}},
				ByYear: []patent.YearCount{{Year: 2026, Count: 3}}, Countries: []patent.CountryCount{{Country: "US", Active: 2, Inactive: 1}}, Granted: 2, Applications: 1}})
	}
	compare := func(path string, names ...string) string { return compareTarget(path, names...) }
	s.run(t, en, []apiCase{
		{"csv 200", request{target: "/export/acme%20CORP", token: bobTok}, 200, ""},
		{"csv 404 ampersand", request{target: "/export/AT%26T", token: bobTok}, 404, ""},
		{"csv 401", request{target: "/export/Acme%20Corp"}, 401, errSecurity},
		{"csv 404", request{target: "/export/Nobody", token: bobTok}, 404, ""},
		{"csv 422", request{target: "/export/-bad", token: bobTok}, 422, errParam("company_name")},
		{"pdf 200", request{target: "/export/Acme%20Corp/pdf", token: bobTok}, 200, ""},
		{"pdf 401", request{target: "/export/Acme%20Corp/pdf"}, 401, errSecurity},
		{"pdf 404", request{target: "/export/Nobody/pdf", token: bobTok}, 404, ""},
		{"pdf 422", request{target: "/export/-bad/pdf", token: bobTok}, 422, errParam("company_name")},
		{"trends 200", request{target: "/analytics/trends", token: bobTok}, 200, ""},
		{"trends 200 days", request{target: "/analytics/trends?days=365", token: bobTok}, 200, ""},
		{"trends 401", request{target: "/analytics/trends"}, 401, errSecurity},
		{"trends 422", request{target: "/analytics/trends?days=6", token: bobTok}, 422, errParam("days")},
		{"trends 422 too many", request{target: "/analytics/trends?days=366", token: bobTok}, 422, errParam("days")},
		{"summary 200", request{target: "/analytics/summary", token: bobTok}, 200, ""},
		{"summary 200 one day", request{target: "/analytics/summary?days=1", token: bobTok}, 200, ""},
		{"summary 401", request{target: "/analytics/summary"}, 401, errSecurity},
		{"summary 422", request{target: "/analytics/summary?days=0", token: bobTok}, 422, errParam("days")},
		{"compare 200", request{target: compare("/compare", "Compare One", "compare two"), token: bobTok}, 200, ""},
		{"compare 401", request{target: compare("/compare", "Compare One", "Compare Two")}, 401, errSecurity},
		{"compare 404", request{target: compare("/compare", "Compare One", "Nobody"), token: bobTok}, 404, ""},
		{"compare 422 one", request{target: compare("/compare", "Compare One"), token: bobTok}, 422, errParam("company")},
		{"compare 422 six", request{target: compare("/compare", "A1", "B2", "C3", "D4", "E5", "F6"), token: bobTok}, 422, errParam("company")},
		{"compare 422 twice", request{target: compare("/compare", "Compare One", "COMPARE ONE"), token: bobTok}, 422, ""},
		{"compare pdf 200", request{target: compare("/compare/pdf", "Compare One", "Compare Two"), token: bobTok}, 200, ""},
		{"compare pdf 401", request{target: compare("/compare/pdf", "Compare One", "Compare Two")}, 401, errSecurity},
		{"compare pdf 404", request{target: compare("/compare/pdf", "Nobody", "Compare Two"), token: bobTok}, 404, ""},
		{"compare pdf 422", request{target: compare("/compare/pdf", "Compare One", "-bad"), token: bobTok}, 422, errParam("company")},
	})

	// Admin: tracked companies and alerts.
	s.run(t, en, []apiCase{
		{"tracked 200 empty", request{target: "/admin/tracked", token: adminTok}, 200, ""},
		{"track 201", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"Acme Corp"}`}, 201, ""},
		{"track 201 ampersand", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"AT&T"}`}, 201, ""},
		{"track 400", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name"`}, 400, errBody},
		{"track 401", request{method: "POST", target: "/admin/tracked", body: `{"company_name":"Beta Labs"}`}, 401, errSecurity},
		{"track 403", request{method: "POST", target: "/admin/tracked", token: bobTok, body: `{"company_name":"Beta Labs"}`}, 403, ""},
		{"track 409", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"ACME CORP"}`}, 409, ""},
		{"track 413", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"` + strings.Repeat("a", 1<<20) + `"}`}, 413, errBody},
		{"track 422", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"-bad"}`}, 422, errBody},
		{"track 422 missing", request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{}`}, 422, errBody},
	})
	tracked, err := en.st.Tracking().ListTracked(ctx)
	if err != nil || len(tracked) == 0 {
		t.Fatalf("tracked = %v, %v", tracked, err)
	}
	if err := recordRun(t, en.st, tracked[0].ID, 12, en.clk.Now(), 0, en.clk.Now().Add(time.Hour), nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		en.clk.Advance(time.Second)
		if _, err := en.st.Tracking().CreateAlert(ctx, patent.Alert{CompanyName: "Acme Corp", AlertType: patent.AlertTypePatentCountChange,
			Message: fmt.Sprintf("Patent count for Acme Corp increased by %d.0%% (from 10 to %d)", 10*i, 10+i), OldValue: 10, NewValue: float64(10 + i)}, oneDelivery(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The newest alert lists new patents (one without a PDF link), and its
	// delivery is an alert.new_patents event.
	en.clk.Advance(time.Second)
	newPatents := patent.Alert{CompanyName: "Acme Corp", AlertType: patent.AlertTypeNewPatents,
		Message: "2 new patents for Acme Corp: " + pns[0] + ", US11140496B2", OldValue: 12, NewValue: 2,
		Patents: []patent.Publication{
			{PatentID: pns[0], Title: "Acme Corp invention 1", PublicationDate: "2026-11-24", PDFLink: serpapitest.PDFURL(pns[0])},
			{PatentID: "US11140496B2", Title: "Hearing aid with an own-voice detector", PublicationDate: "2026-11-20"},
		}}
	if _, err := en.st.Tracking().CreateAlert(ctx, newPatents, []patent.Delivery{{ID: "msg_conformance4", Event: "alert.new_patents",
		URL: "https://hooks.example.com/secret-path", URLHost: "https://hooks.example.com", Payload: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	failedID, deliveredID := settleDeliveries(t, en)
	s.run(t, en, []apiCase{
		{"tracked 200", request{target: "/admin/tracked", token: adminTok}, 200, ""},
		{"tracked 401", request{target: "/admin/tracked"}, 401, errSecurity},
		{"tracked 401 bad token", request{target: "/admin/tracked", token: "x.y.z"}, 401, ""},
		{"tracked 403", request{target: "/admin/tracked", token: bobTok}, 403, ""},
		{"history 200", request{target: "/admin/tracked/acme%20corp/history", token: adminTok}, 200, ""},
		{"history 200 empty", request{target: "/admin/tracked/AT%26T/history?days=3650", token: adminTok}, 200, ""},
		{"history 401", request{target: "/admin/tracked/Acme%20Corp/history"}, 401, errSecurity},
		{"history 403", request{target: "/admin/tracked/Acme%20Corp/history", token: bobTok}, 403, ""},
		{"history 404", request{target: "/admin/tracked/Beta%20Labs/history", token: adminTok}, 404, ""},
		{"history 422", request{target: "/admin/tracked/Acme%20Corp/history?days=0", token: adminTok}, 422, errParam("days")},
		{"history 422 name", request{target: "/admin/tracked/-bad/history", token: adminTok}, 422, errParam("company_name")},
		{"untrack 200", request{method: "DELETE", target: "/admin/tracked/acme%20corp", token: adminTok}, 200, ""},
		{"untrack 200 ampersand", request{method: "DELETE", target: "/admin/tracked/AT%26T", token: adminTok}, 200, ""},
		{"untrack 401", request{method: "DELETE", target: "/admin/tracked/Acme"}, 401, errSecurity},
		{"untrack 403", request{method: "DELETE", target: "/admin/tracked/Acme", token: bobTok}, 403, ""},
		{"untrack 404", request{method: "DELETE", target: "/admin/tracked/Acme%20Corp", token: adminTok}, 404, ""},
		{"untrack 422", request{method: "DELETE", target: "/admin/tracked/-bad", token: adminTok}, 422, errParam("company_name")},
		{"alerts 200", request{target: "/admin/alerts", token: adminTok}, 200, ""},
		{"alerts 200 limit", request{target: "/admin/alerts?limit=200", token: adminTok}, 200, ""},
		{"alerts 401", request{target: "/admin/alerts"}, 401, errSecurity},
		{"alerts 403", request{target: "/admin/alerts", token: bobTok}, 403, ""},
		{"alerts 422", request{target: "/admin/alerts?limit=201", token: adminTok}, 422, errParam("limit")},
		// The digest's answers with items are checked in conformanceChanges
		// (scheduled runs that find new and dropped patents).
		{"changes 200", request{target: "/admin/changes", token: adminTok}, 200, ""},
		{"changes 200 since", request{target: "/admin/changes?since=" + url.QueryEscape(en.clk.Now().Add(-time.Hour).Format(time.RFC3339)) + "&limit=200", token: adminTok}, 200, ""},
		{"changes 200 malformed cursor", request{target: "/admin/changes?cursor=garbage!", token: adminTok}, 200, ""},
		{"changes 401", request{target: "/admin/changes"}, 401, errSecurity},
		{"changes 401 bad token", request{target: "/admin/changes", token: "x.y.z"}, 401, ""},
		{"changes 403", request{target: "/admin/changes", token: bobTok}, 403, ""},
		{"changes 422 since", request{target: "/admin/changes?since=yesterday", token: adminTok}, 422, errParam("since")},
		{"changes 422 since without a time", request{target: "/admin/changes?since=2026-11-24", token: adminTok}, 422, errParam("since")},
		{"changes 422 limit", request{target: "/admin/changes?limit=0", token: adminTok}, 422, errParam("limit")},
		{"rate limits 200", request{target: "/admin/rate-limits", token: adminTok}, 200, ""},
		{"deliveries 200", request{target: "/admin/webhooks/deliveries", token: adminTok}, 200, ""},
		{"deliveries 200 page", request{target: "/admin/webhooks/deliveries?status=pending&limit=1&cursor=x", token: adminTok}, 200, ""},
		{"deliveries 401", request{target: "/admin/webhooks/deliveries"}, 401, errSecurity},
		{"deliveries 403", request{target: "/admin/webhooks/deliveries", token: bobTok}, 403, ""},
		{"deliveries 422", request{target: "/admin/webhooks/deliveries?status=lost", token: adminTok}, 422, errParam("status")},
		{"retry 202", request{method: "POST", target: "/admin/webhooks/deliveries/" + failedID + "/retry", token: adminTok}, 202, ""},
		{"retry 409 pending", request{method: "POST", target: "/admin/webhooks/deliveries/" + failedID + "/retry", token: adminTok}, 409, ""},
		{"retry 409 delivered", request{method: "POST", target: "/admin/webhooks/deliveries/" + deliveredID + "/retry", token: adminTok}, 409, ""},
		{"retry 404", request{method: "POST", target: "/admin/webhooks/deliveries/msg_nope/retry", token: adminTok}, 404, ""},
		{"retry 401", request{method: "POST", target: "/admin/webhooks/deliveries/" + failedID + "/retry"}, 401, errSecurity},
		{"retry 403", request{method: "POST", target: "/admin/webhooks/deliveries/" + failedID + "/retry", token: bobTok}, 403, ""},
		{"rate limits 401", request{target: "/admin/rate-limits"}, 401, errSecurity},
		{"rate limits 403", request{target: "/admin/rate-limits", token: bobTok}, 403, ""},
	})

	var alerts []struct {
		AlertType string `json:"alert_type"`
		Patents   []struct {
			PatentID string `json:"patent_id"`
		} `json:"patents"`
	}
	decode(t, en.do(t, request{target: "/admin/alerts", token: adminTok}), &alerts)
	if len(alerts) == 0 || alerts[0].AlertType != patent.AlertTypeNewPatents || len(alerts[0].Patents) != len(newPatents.Patents) {
		t.Errorf("GET /admin/alerts = %+v, want the new_patents alert first, with its %d patents (so that their shape is checked)", alerts, len(newPatents.Patents))
	}

	// Admin: users.
	carol := en.register(t, "carol2@example.com")
	s.run(t, en, []apiCase{
		{"users 200", request{target: "/admin/users", token: adminTok}, 200, ""},
		{"users 401", request{target: "/admin/users"}, 401, errSecurity},
		{"users 403", request{target: "/admin/users", token: bobTok}, 403, ""},
		{"role 400 malformed", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", bob.ID), token: adminTok, body: `{"role":`}, 400, errBody},
		{"role 400 last admin", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", admin.ID), token: adminTok, body: `{"role":"user"}`}, 400, ""},
		{"role 401", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"admin"}`}, 401, errSecurity},
		{"role 403", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", bob.ID), token: bobTok, body: `{"role":"admin"}`}, 403, ""},
		{"role 404", request{method: "PATCH", target: "/admin/users/999999/role", token: adminTok, body: `{"role":"admin"}`}, 404, ""},
		{"role 413", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", bob.ID), token: adminTok, body: `{"role":"` + strings.Repeat("a", 1<<20) + `"}`}, 413, errBody},
		{"role 422 role", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", bob.ID), token: adminTok, body: `{"role":"root"}`}, 422, errBody},
		{"role 422 id", request{method: "PATCH", target: "/admin/users/0/role", token: adminTok, body: `{"role":"admin"}`}, 422, errParam("user_id")},
		{"role 200", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", carol.ID), token: adminTok, body: `{"role":"admin"}`}, 200, ""},
		{"role 200 back", request{method: "PATCH", target: fmt.Sprintf("/admin/users/%d/role", carol.ID), token: adminTok, body: `{"role":"user"}`}, 200, ""},
		{"delete 400 self", request{method: "DELETE", target: fmt.Sprintf("/admin/users/%d", admin.ID), token: adminTok}, 400, ""},
		{"delete 401", request{method: "DELETE", target: fmt.Sprintf("/admin/users/%d", carol.ID)}, 401, errSecurity},
		{"delete 403", request{method: "DELETE", target: fmt.Sprintf("/admin/users/%d", carol.ID), token: bobTok}, 403, ""},
		{"delete 404", request{method: "DELETE", target: "/admin/users/999999", token: adminTok}, 404, ""},
		{"delete 422", request{method: "DELETE", target: "/admin/users/abc", token: adminTok}, 422, errParam("user_id")},
		{"delete 422 too big", request{method: "DELETE", target: "/admin/users/99999999999999999999", token: adminTok}, 422, errParam("user_id")},
		{"delete 200", request{method: "DELETE", target: fmt.Sprintf("/admin/users/%d", carol.ID), token: adminTok}, 200, ""},
	})

	// System, unknown routes and methods.
	s.run(t, en, []apiCase{
		{"health 200", request{target: "/health"}, 200, ""},
		{"livez 200", request{target: "/livez"}, 200, ""},
		{"readyz 200", request{target: "/readyz"}, 200, ""},
		{"metrics 200", request{target: "/metrics"}, 200, ""},
		{"404", request{target: "/nope"}, 404, ""},
		{"404 under a prefix", request{target: "/patents/models"}, 404, ""},
		{"405", request{method: "PUT", target: "/models"}, 405, ""},
		{"405 admin", request{method: "POST", target: "/admin/tracked/Acme"}, 405, ""},
		{"405 login", request{target: "/auth/login"}, 405, ""},
		{"405 options", request{method: "OPTIONS", target: "/models"}, 405, ""},
	})

	conformanceJobLimits(t, s, dialect)
}

// conformanceJobLimits: a user with JOBS_MAX_PER_USER unfinished jobs is
// refused (429 with Retry-After); a job running past JOBS_TIMEOUT fails.
func conformanceJobLimits(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect), withJobs(jobs.Config{MaxPerUser: 1, Timeout: 300 * time.Millisecond}))
	en.admin(t)
	en.world.Company("Acme Corp", 1)
	en.world.Serp.SetLatency(2 * time.Second) // the job outlives JOBS_TIMEOUT
	_, bob := en.newUser(t, "bob@example.com")
	tok := bob.AccessToken
	rec := s.check(t, en, apiCase{"async 202 slow", request{method: "POST", target: "/analyze/batch/async", token: tok,
		body: `{"companies":["Acme Corp"]}`}, 202, ""})
	var job jobBody
	decode(t, rec, &job)
	rec = s.check(t, en, apiCase{"async 429 too many jobs", request{method: "POST", target: "/analyze/batch/async", token: tok,
		body: `{"companies":["Acme Corp"]}`}, 429, ""})
	if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("429 Retry-After = %q, want whole seconds, at least 1", rec.Header().Get("Retry-After"))
	}
	waitForJob(t, en, tok, job.JobID, "failed")
	s.run(t, en, []apiCase{
		{"job 200 failed", request{target: "/jobs/" + job.JobID, token: tok}, 200, ""},
		{"jobs 200 failed", request{target: "/jobs?status=failed", token: tok}, 200, ""},
	})
}

// conformanceChanges: tracked companies' scheduled runs through the real
// scheduler and work queue, the fake search answering other patents at
// the second run, so that the history, the alerts and the changes digest
// (GET /admin/changes) answer with new and dropped patents, whose shapes
// the document must describe.
func conformanceChanges(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect), withScheduler())
	_, adminTok := en.admin(t)
	oticon := en.world.Company("Oticon", 3)
	acme := en.world.Company("Acme Corp", 2)
	for _, name := range []string{"Oticon", "Acme Corp"} {
		wantStatus(t, en.do(t, request{method: "POST", target: "/admin/tracked", token: adminTok, body: `{"company_name":"` + name + `"}`}), 201)
	}
	waitForRuns(t, en, adminTok, 2, en.clk.Now(), func() {}) // the first runs: the baselines

	// At the next runs Oticon keeps its newest patent and publishes two
	// new ones (one without a PDF) in place of the other two; Acme Corp
	// only loses its older patent.
	day := time.Now().UTC().Format(time.DateOnly)
	older := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	newPNs := []string{"US11363389B2", "EP4123456A1"}
	en.world.Serp.SetResults("Oticon", 3, []map[string]any{
		serpapitest.Organic(newPNs[0], "Hearing device comprising a feedback reduction system", day, en.world.PDFs.Add(newPNs[0], analysistest.TextPDFs[3])),
		serpapitest.Organic(newPNs[1], "Own-voice detection in a hearing aid", day, ""),
		serpapitest.Organic(oticon[0], "Oticon invention 1", older, en.world.PDFs.Add(oticon[0], analysistest.TextPDFs[0])),
	})
	en.world.Serp.SetResults("Acme Corp", 1, []map[string]any{
		serpapitest.Organic(acme[0], "Acme Corp invention 1", older, en.world.PDFs.Add(acme[0], analysistest.TextPDFs[0])),
	})
	since := en.clk.Now().Add(time.Hour)
	en.clk.Advance(25 * time.Hour) // past SCHEDULE_INTERVAL_HOURS (a day)
	adminTok = en.login(t, adminEmail).AccessToken
	_, bob := en.newUser(t, "bob@example.com")
	// Ticks queue the due runs; a company whose first run's unit has not
	// ended yet is queued by a later tick.
	waitForRuns(t, en, adminTok, 2, en.clk.Now(), func() { en.sched.QueueDue(context.Background()) })

	sinceQ := "since=" + url.QueryEscape(since.Format(time.RFC3339))
	offsetQ := "since=" + url.QueryEscape(since.In(time.FixedZone("", 3600)).Format(time.RFC3339)) // +01:00, the + as %2B
	rec := s.check(t, en, apiCase{"changes 200 first page", request{target: "/admin/changes?limit=1&" + sinceQ, token: adminTok}, 200, ""})
	var page changesPage
	decode(t, rec, &page)
	items := page.Items
	for page.NextCursor != nil {
		rec = s.check(t, en, apiCase{"changes 200 next page", request{target: "/admin/changes?limit=1&" + sinceQ + "&cursor=" + url.QueryEscape(*page.NextCursor), token: adminTok}, 200, ""})
		page = changesPage{}
		decode(t, rec, &page)
		items = append(items, page.Items...)
		if len(items) > 10 {
			t.Fatalf("GET /admin/changes pages on past 10 items: %+v", items)
		}
	}
	var sawNew, sawDropped bool
	for _, it := range items {
		sawNew = sawNew || len(it.NewPatents) > 0
		sawDropped = sawDropped || (len(it.NewPatents) == 0 && len(it.DroppedPatents) > 0)
	}
	if !sawNew || !sawDropped {
		t.Errorf("GET /admin/changes pages = %+v, want a run with new patents (Oticon) and one that only dropped (Acme Corp), so that their shapes are checked", items)
	}
	rec = s.check(t, en, apiCase{"history 200 new and dropped", request{target: "/admin/tracked/Oticon/history", token: adminTok}, 200, ""})
	var history struct {
		Points []struct {
			NewPatents []string `json:"new_patents"`
		} `json:"points"`
	}
	decode(t, rec, &history)
	if n := len(history.Points); n != 2 || len(history.Points[1].NewPatents) == 0 {
		t.Errorf("Oticon's history = %+v, want the baseline and a run with new patents", history)
	}
	s.run(t, en, []apiCase{
		{"changes 200 default since", request{target: "/admin/changes", token: adminTok}, 200, ""},
		{"changes 200 since with an offset", request{target: "/admin/changes?" + offsetQ, token: adminTok}, 200, ""},
		{"changes 200 since after every run", request{target: "/admin/changes?since=" + url.QueryEscape(en.clk.Now().Add(time.Minute).Format(time.RFC3339)), token: adminTok}, 200, ""},
		{"changes 403", request{target: "/admin/changes", token: bob.AccessToken}, 403, ""},
		{"changes 422 limit 201", request{target: "/admin/changes?limit=201", token: adminTok}, 422, errParam("limit")},
		{"alerts 200 after runs", request{target: "/admin/alerts", token: adminTok}, 200, ""},
		{"deliveries 200 after runs", request{target: "/admin/webhooks/deliveries", token: adminTok}, 200, ""},
	})
}

// changesPage is a page of GET /admin/changes.
type changesPage struct {
	Items []struct {
		CompanyName string `json:"company_name"`
		NewPatents  []struct {
			PatentID string `json:"patent_id"`
		} `json:"new_patents"`
		DroppedPatents []string `json:"dropped_patents"`
	} `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// waitForRuns calls tick and looks at GET /admin/tracked until the n
// tracked companies have each recorded a run at or after since. It polls
// (the shared bounded wait): a tick may find a company's earlier unit not
// ended yet, and only a later tick queues its run.
func waitForRuns(t *testing.T, en *env, tok string, n int, since time.Time, tick func()) {
	t.Helper()
	var list []trackedState
	if !wait.Until(30*time.Second, func() bool {
		tick()
		list = nil
		rec := en.do(t, request{target: "/admin/tracked", token: tok})
		wantStatus(t, rec, http.StatusOK)
		decode(t, rec, &list)
		done := len(list) == n
		for _, c := range list {
			done = done && c.LastAnalysisAt != nil && !c.LastAnalysisAt.Before(since)
		}
		return done
	}) {
		t.Fatalf("tracked companies = %+v, want %d with a run at or after %v", list, n, since)
	}
}

// waitLogged waits until a line of en's log holds every one of subs: the
// line a worker writes once it has recorded what the test waits for.
func waitLogged(t *testing.T, en *env, within time.Duration, subs ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	holds := func(line string) bool {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				return false
			}
		}
		return true
	}
	if _, err := en.logs.WaitFor(ctx, func(text string) bool {
		for line := range strings.Lines(text) {
			if holds(line) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no log line with %q within %v", subs, within)
	}
}

// oneDelivery is one webhook delivery for alert i.
func oneDelivery(i int) []patent.Delivery {
	return []patent.Delivery{{ID: fmt.Sprintf("msg_conformance%d", i), Event: "alert.patent_count_change",
		URL: "https://hooks.example.com/secret-path", URLHost: "https://hooks.example.com", Payload: []byte(`{}`)}}
}

// settleDeliveries fails the first stored delivery (410) and delivers the
// second, leaving the third pending, and returns the first two ids.
func settleDeliveries(t *testing.T, en *env) (failed, delivered string) {
	t.Helper()
	ctx := context.Background()
	ds, _, err := en.st.Deliveries().ListDeliveries(ctx, patent.DeliveryFilter{Status: patent.DeliveryPending}, 100, "")
	if err != nil || len(ds) < 2 {
		t.Fatalf("pending deliveries = %v, %v", ds, err)
	}
	oldest, next := ds[len(ds)-1], ds[len(ds)-2] // the listing is newest first
	now := en.clk.Now()
	if err := en.st.Deliveries().RecordAttempt(ctx, oldest.ID, patent.Attempt{Status: patent.DeliveryFailed, StatusCode: 410, Error: "HTTP 410", At: now}); err != nil {
		t.Fatal(err)
	}
	if err := en.st.Deliveries().RecordAttempt(ctx, next.ID, patent.Attempt{Status: patent.DeliveryDelivered, StatusCode: 200, At: now}); err != nil {
		t.Fatal(err)
	}
	// Their units end, as the queue's would after those attempts.
	for _, u := range storetest.Units(t, en.st, "webhook_delivery") {
		if strings.Contains(u.Args, `"`+oldest.ID+`"`) || strings.Contains(u.Args, `"`+next.ID+`"`) {
			storetest.SetUnitState(t, en.st, u.ID, "completed")
		}
	}
	return oldest.ID, next.ID
}

// waitForJob waits until the job's runner has recorded its end (it logs
// "job finished" then), and returns GET /jobs/{id}, which must answer it
// in status.
func waitForJob(t *testing.T, en *env, tok, id, status string) *httptest.ResponseRecorder {
	t.Helper()
	waitLogged(t, en, 30*time.Second, `"msg":"job finished"`, `"job_id":"`+id+`"`)
	var j jobBody
	rec := en.do(t, request{target: "/jobs/" + id, token: tok})
	wantStatus(t, rec, http.StatusOK)
	decode(t, rec, &j)
	if j.Status != status {
		t.Fatalf("job %s ended %s, want %s: %s", id, j.Status, status, rec.Body)
	}
	return rec
}

// conformanceStoreDown: with the database gone, every operation that needs
// it is a 500 (the token's user cannot be read), health and readiness 503.
func conformanceStoreDown(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect))
	_, tok := en.admin(t)
	refresh := en.login(t, adminEmail).RefreshToken
	en.databaseDown(t)
	var cases []apiCase
	for _, r := range []request{
		{method: "POST", target: "/auth/register", body: credentials("zed@example.com", password)},
		{method: "POST", target: "/auth/login", body: credentials(adminEmail, password)},
		// Fails today with 401: auth.Service.Refresh wraps every error of
		// store.UseRefreshToken in ErrInvalidToken (patentsvc/internal/auth/
		// auth.go, Refresh), so a database failure answers 401 "Could not
		// validate credentials" and is never logged as an error, where login
		// and every authenticated route answer 500 (docs/patentsvc.md,
		// Errors). Only patent.ErrNotFound and store.ErrRefreshReused are
		// rejected tokens.
		{method: "POST", target: "/auth/refresh", body: refreshBody(refresh)},
		{target: "/auth/me"},
		{target: "/analyze/Acme"},
		{target: "/analyze/patent/US11734097B1?company_name=Acme"},
		{target: "/analyze/batch"},
		{method: "POST", target: "/analyze/batch", body: `{"companies":["Acme"]}`},
		{method: "POST", target: "/analyze/batch/async", body: `{"companies":["Acme"]}`},
		{target: "/jobs"},
		{target: "/jobs/x"},
		{target: "/export/Acme"},
		{target: "/export/Acme/pdf"},
		{target: "/compare?company=Acme&company=Beta"},
		{target: "/compare/pdf?company=Acme&company=Beta"},
		{target: "/analytics/trends"},
		{target: "/analytics/summary"},
		{target: "/admin/tracked"},
		{method: "POST", target: "/admin/tracked", body: `{"company_name":"Acme"}`},
		{method: "DELETE", target: "/admin/tracked/Acme"},
		{target: "/admin/tracked/Acme/history"},
		{target: "/admin/alerts"},
		{target: "/admin/changes"},
		{target: "/admin/rate-limits"},
		{target: "/admin/webhooks/deliveries"},
		{method: "POST", target: "/admin/webhooks/deliveries/msg_x/retry"},
		{target: "/admin/users"},
		{method: "PATCH", target: "/admin/users/2/role", body: `{"role":"admin"}`},
		{method: "DELETE", target: "/admin/users/2"},
	} {
		if !strings.HasPrefix(r.target, "/auth/") || r.target == "/auth/me" {
			r.token = tok
		}
		cases = append(cases, apiCase{"500", r, 500, ""})
	}
	cases = append(cases,
		apiCase{"health 503", request{target: "/health"}, 503, ""},
		apiCase{"readyz 503", request{target: "/readyz"}, 503, ""},
		apiCase{"livez 200", request{target: "/livez"}, 200, ""},
		apiCase{"models 200", request{target: "/models"}, 200, ""},
		apiCase{"metrics 200", request{target: "/metrics"}, 200, ""},
	)
	s.run(t, en, cases)
}

// conformanceNoAnalyzer: without the search and LLM keys, the analysis
// operations answer 503 and the rest serves.
func conformanceNoAnalyzer(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect), withAnalyzerMissing("SERPAPI_API_KEY", "LLM_API_KEY"))
	_, tok := en.admin(t)
	s.run(t, en, []apiCase{
		{"analyze 503", request{target: "/analyze/Acme%20Corp", token: tok}, 503, ""},
		{"patent 503", request{target: "/analyze/patent/US11734097B1?company_name=Acme", token: tok}, 503, ""},
		{"batch 503", request{method: "POST", target: "/analyze/batch", token: tok, body: `{"companies":["Acme"]}`}, 503, ""},
		{"async 503", request{method: "POST", target: "/analyze/batch/async", token: tok, body: `{"companies":["Acme"]}`}, 503, ""},
		{"analyses 200", request{target: "/analyze/batch", token: tok}, 200, ""},
		{"jobs 200", request{target: "/jobs", token: tok}, 200, ""},
		{"health 200", request{target: "/health"}, 200, ""},
		{"summary 200 empty", request{target: "/analytics/summary", token: tok}, 200, ""},
		{"trends 200 empty", request{target: "/analytics/trends", token: tok}, 200, ""},
		{"alerts 200 empty", request{target: "/admin/alerts", token: tok}, 200, ""},
	})
}

// conformanceRootPath: with ROOT_PATH=/patents the document's second
// server describes the service.
func conformanceRootPath(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect), withRootPath("/patents"))
	_, tok := en.admin(t)
	s.run(t, en, []apiCase{
		{"models 200", request{target: "/models"}, 200, ""},
		{"health 200", request{target: "/health"}, 200, ""},
		{"livez 200", request{target: "/livez"}, 200, ""},
		{"readyz 200", request{target: "/readyz"}, 200, ""},
		{"metrics 200", request{target: "/metrics"}, 200, ""},
		{"me 200", request{target: "/auth/me", token: tok}, 200, ""},
		{"users 200", request{target: "/admin/users", token: tok}, 200, ""},
		{"me 401", request{target: "/auth/me"}, 401, errSecurity},
		{"404", request{target: "/nope"}, 404, ""},
		{"405", request{method: "DELETE", target: "/models"}, 405, ""},
		{"docs 200 document", request{target: "/openapi.yaml"}, 200, ""},
		{"docs 200 page", request{target: "/docs"}, 200, ""},
		{"docs 200 script", request{target: "/docs/docs.js"}, 200, ""},
	})
	// Without the prefix nothing is served.
	en.root = ""
	s.checkAt(t, en, "/patents", apiCase{"404 without the prefix", request{target: "/models"}, 404, ""})
}

// conformanceDocs: the API reference (DOCS_ENABLED), with no token, and
// its 404s once turned off.
func conformanceDocs(t *testing.T, s *spec, dialect string) {
	en := newEnv(t, onDialect(dialect))
	anyTag := map[string]string{"If-None-Match": "*"}
	s.run(t, en, []apiCase{
		{"docs 200 document", request{target: "/openapi.yaml"}, 200, ""},
		{"docs 200 document ignores a token", request{target: "/openapi.yaml", token: "junk"}, 200, ""},
		{"docs 200 page", request{target: "/docs"}, 200, ""},
		{"docs 200 bundle", request{target: "/docs/swagger-ui-bundle.js"}, 200, ""},
		{"docs 200 bundle gzip", request{target: "/docs/swagger-ui-bundle.js", headers: map[string]string{"Accept-Encoding": "gzip"}}, 200, ""},
		{"docs 200 style", request{target: "/docs/swagger-ui.css"}, 200, ""},
		{"docs 200 script", request{target: "/docs/docs.js"}, 200, ""},
		{"docs 200 icon", request{target: "/docs/favicon-16x16.png"}, 200, ""},
		{"docs 304 document", request{target: "/openapi.yaml", headers: anyTag}, 304, ""},
		{"docs 304 page", request{target: "/docs", headers: anyTag}, 304, ""},
		{"docs 304 asset", request{target: "/docs/swagger-ui.css", headers: anyTag}, 304, ""},
		{"docs 404 asset", request{target: "/docs/nope.js"}, 404, ""},
		{"docs 405", request{method: "POST", target: "/docs"}, 405, ""},
	})
	off := newEnv(t, onDialect(dialect), withoutDocs())
	s.run(t, off, []apiCase{
		{"docs 404 document disabled", request{target: "/openapi.yaml"}, 404, ""},
		{"docs 404 page disabled", request{target: "/docs"}, 404, ""},
		{"docs 404 asset disabled", request{target: "/docs/docs.js"}, 404, ""},
	})
}

// TestOpenAPIRejectsDrift is the test's negative control: answers that
// break the document in the ways code drifts (a field renamed, dropped,
// added, retyped or made null; an undocumented status; a missing header)
// must fail validation. It guards against a validator that silently
// accepts everything (e.g. a kin-openapi release that stops applying JSON
// Schema 2020-12 to 3.1 documents).
func TestOpenAPIRejectsDrift(t *testing.T) {
	s := loadSpec(t)
	route := func(method, path string) (*routers.Route, map[string]string, *http.Request) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer x")
		r, params, err := s.routers[""].FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return r, params, req
	}
	validate := func(method, path string, status int, header http.Header, body string) error {
		r, params, req := route(method, path)
		if header == nil {
			header = http.Header{}
		}
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/json")
		}
		if _, ok := header["X-Request-Id"]; !ok {
			header.Set("X-Request-Id", "req-1")
		}
		return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: r, Options: s.opts},
			Status:                 status, Header: header, Body: io.NopCloser(strings.NewReader(body)), Options: s.opts,
		})
	}
	const user = `{"id":1,"email":"ada@example.com","role":"admin","created_at":"2026-11-25T12:00:00Z"}`
	const analysis = `{"company_name":"Acme","analysis":%s,"patent_count":0,"patents":[],"portfolio":null,"success":%s,"error":null,"model":"openai/gpt-4o-mini","cached":false,"timestamp":"2026-11-25T12:00:00Z"}`
	const portfolio = `{"cpc":[{"code":"H04R","share":%s}],"by_year":[{"year":2024,"count":2}],"countries":[{"country":"US","active":1,"inactive":1}],"granted":1,"applications":1}`
	withPortfolio := func(p string) string {
		return strings.Replace(fmt.Sprintf(analysis, "null", "false"), `"portfolio":null`, `"portfolio":`+p, 1)
	}
	const alert = `[{"id":1,"company_name":"Oticon","alert_type":"new_patents","message":"1 new patent for Oticon: US11363389B2","old_value":4,"new_value":1,"created_at":"2026-11-25T12:00:00Z"%s}]`
	const job = `{"job_id":"0190a0a0-0000-7000-8000-000000000000","status":%q,"total":1,"completed":0,"progress":0,"result":%s,"error":null,"model":"openai/gpt-4o-mini","created_at":"2026-11-25T12:00:00Z","updated_at":"2026-11-25T12:00:00Z"}`
	const record = `{"items":[{"id":1,"company_name":null,"analysis_type":"portfolio","model":null,"response":"x","timestamp":%s,"requested_by":null}],"next_cursor":null}`
	for _, tt := range []struct {
		name           string
		method, path   string
		status         int
		header         http.Header
		body           string
		ok             bool
		wantErrContain string
	}{
		{"user conforms", "GET", "/auth/me", 200, nil, user, true, ""},
		{"field dropped", "GET", "/auth/me", 200, nil, `{"id":1,"email":"ada@example.com","created_at":"2026-11-25T12:00:00Z"}`, false, "role"},
		{"field renamed", "GET", "/auth/me", 200, nil, `{"id":1,"email":"ada@example.com","role":"admin","createdAt":"2026-11-25T12:00:00Z"}`, false, "created"},
		{"field added", "GET", "/auth/me", 200, nil, strings.Replace(user, `}`, `,"password_hash":"x"}`, 1), false, "password_hash"},
		{"enum value", "GET", "/auth/me", 200, nil, strings.Replace(user, `"admin"`, `"root"`, 1), false, "role"},
		{"date-time", "GET", "/auth/me", 200, nil, strings.Replace(user, `2026-11-25T12:00:00Z`, `yesterday`, 1), false, "created_at"},
		{"undocumented status", "GET", "/auth/me", 418, nil, `{"detail":"x"}`, false, "status is not supported"},
		{"no X-Request-Id", "GET", "/auth/me", 200, http.Header{"X-Request-Id": nil}, user, false, "X-Request-Id"},
		{"401 without WWW-Authenticate", "GET", "/auth/me", 401, nil, `{"detail":"Not authenticated"}`, false, "WWW-Authenticate"},
		{"401 conforms", "GET", "/auth/me", 401, http.Header{"Www-Authenticate": {"Bearer"}}, `{"detail":"Not authenticated"}`, true, ""},
		{"error with an extra field", "GET", "/auth/me", 401, http.Header{"Www-Authenticate": {"Bearer"}}, `{"detail":"x","code":"UNAUTHORIZED"}`, false, "code"},
		{"422 without errors", "GET", "/jobs", 422, nil, `{"detail":"limit must be a whole number from 1 to 200"}`, false, "errors"},
		{"nullable string null", "GET", "/analyze/Acme", 200, nil, fmt.Sprintf(analysis, "null", "false"), true, ""},
		{"nullable string string", "GET", "/analyze/Acme", 200, nil, fmt.Sprintf(analysis, `"text"`, "true"), true, ""},
		{"nullable string number", "GET", "/analyze/Acme", 200, nil, fmt.Sprintf(analysis, "5", "true"), false, "analysis"},
		{"boolean null", "GET", "/analyze/Acme", 200, nil, fmt.Sprintf(analysis, "null", "null"), false, "success"},
		{"portfolio conforms", "GET", "/analyze/Acme", 200, nil, withPortfolio(fmt.Sprintf(portfolio, "0.6")), true, ""},
		{"portfolio dropped", "GET", "/analyze/Acme", 200, nil, strings.Replace(fmt.Sprintf(analysis, "null", "false"), `"portfolio":null,`, "", 1), false, "portfolio"},
		{"portfolio share over 1", "GET", "/analyze/Acme", 200, nil, withPortfolio(fmt.Sprintf(portfolio, "60")), false, "share"},
		{"alert conforms", "GET", "/admin/alerts", 200, nil, fmt.Sprintf(alert, `,"patents":[{"patent_id":"US11363389B2","title":"","publication_date":"","pdf_link":""}]`), true, ""},
		{"alert without patents", "GET", "/admin/alerts", 200, nil, fmt.Sprintf(alert, ""), false, "patents"},
		{"alert patent without pdf_link", "GET", "/admin/alerts", 200, nil, fmt.Sprintf(alert, `,"patents":[{"patent_id":"US11363389B2","title":"","publication_date":""}]`), false, "pdf_link"},
		{"changes item without dropped_patents", "GET", "/admin/changes", 200, nil, `{"items":[{"company_name":"Oticon","run_at":"2026-11-25T12:00:00Z","new_patents":[]}],"next_cursor":null}`, false, "dropped_patents"},
		{"nullable result null", "GET", "/jobs/x", 200, nil, fmt.Sprintf(job, "pending", "null"), true, ""},
		{"nullable result object", "GET", "/jobs/x", 200, nil, fmt.Sprintf(job, "pending", "{}"), false, "result"},
		{"job status", "GET", "/jobs/x", 200, nil, fmt.Sprintf(job, "done", "null"), false, "status"},
		{"nullable date-time null", "GET", "/analyze/batch", 200, nil, fmt.Sprintf(record, "null"), true, ""},
		{"nullable date-time garbage", "GET", "/analyze/batch", 200, nil, fmt.Sprintf(record, `"soon"`), false, "timestamp"},
		{"const", "POST", "/auth/login", 200, nil, `{"access_token":"a","refresh_token":"b","token_type":"Bearer","expires_in":1800}`, false, "token_type"},
		{"429 without Retry-After", "POST", "/auth/login", 429, nil, `{"detail":"Rate limit exceeded: 10/minute"}`, false, "Retry-After"},
		{"csv without Content-Disposition", "GET", "/export/Acme", 200, http.Header{"Content-Type": {"text/csv; charset=utf-8"}, "Cache-Control": {"no-store"}},
			"company_name,analysis_type,model,analysis,timestamp\r\n", false, "Content-Disposition"},
		{"csv with another header row", "GET", "/export/Acme", 200, http.Header{"Content-Type": {"text/csv; charset=utf-8"}, "Cache-Control": {"no-store"},
			"Content-Disposition": {"attachment; filename=acme_export.csv"}}, "name,type\r\n", false, "pattern"},
		{"pdf as JSON", "GET", "/export/Acme/pdf", 200, http.Header{"Cache-Control": {"no-store"},
			"Content-Disposition": {"attachment; filename=acme-analysis-2026-11-25.pdf"}}, `{}`, false, "Content-Type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(tt.method, tt.path, tt.status, tt.header, tt.body)
			switch {
			case tt.ok && err != nil:
				t.Errorf("valid answer rejected: %v", err)
			case !tt.ok && err == nil:
				t.Errorf("drifted answer accepted: %d %s", tt.status, tt.body)
			case !tt.ok && !strings.Contains(err.Error(), tt.wantErrContain):
				t.Errorf("error %q does not mention %q", err, tt.wantErrContain)
			}
		})
	}
}
