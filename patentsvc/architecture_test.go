package patentsvc_test

// The architecture tests of the patent service: which of its packages may
// import which (TestImportRules), how large a function may grow
// (TestFunctionSize), and the import graph drawn in docs/architecture.md
// (TestDependencyDiagram). vinsvc/architecture_test.go has the same tests
// over its own table; keep the two alike.
//
// They read the packages from `go list`, which they run in the module root
// (where `go test` runs this package).

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

var update = flag.Bool("update", false, "rewrite the import graph in docs/architecture.md")

const (
	service = "patentsvc"                        // the module's directory, and its graph's name in the doc
	module  = "github.com/gatewayapis/patentsvc" // the module path
)

// role is what a package is for. It decides the rule the package follows
// and its node's style in the diagram.
type role string

const (
	roleDomain  role = "domain"  // types, validation, sentinel errors; the standard library only
	roleCore    role = "core"    // a service over the domain; declares interfaces for what it needs
	roleAdapter role = "adapter" // one package per external dependency (database, upstream, file format)
	roleConfig  role = "config"  // reads the environment
	roleHTTP    role = "http"    // routes, handlers, the wire format
	roleMain    role = "main"    // wiring: builds everything, may import anything
)

// anyPackage in an allow list lets a package import every package of the
// module.
const anyPackage = "*"

// importRule is one row of importRules.
type importRule struct {
	pkg   string // path under internal/, or from the module root (cmd/...)
	role  role
	allow []string // the module's packages it may import (same naming), or anyPackage
}

// importRules lists every package of the service with its role and the
// packages of the module it may import. A package missing here fails
// TestImportRules, so a new package gets classified when it is added.
// Test-support packages (a last path element ending in "test", such as
// llm/llmtest) are not listed: they may import anything.
var importRules = []importRule{
	{"patent", roleDomain, nil}, // domain: company names, patent ids, users, alerts, sentinel errors

	{"auth", roleCore, []string{"patent"}},      // core service: tokens and passwords
	{"export", roleCore, []string{"patent"}},    // core service: CSV and PDF downloads
	{"ratelimit", roleCore, []string{"patent"}}, // core service: per-IP windows and counters
	{"analysis", roleCore, []string{"patent"}},  // core service: company name to stored analysis, batches
	{"jobs", roleCore, []string{"patent"}},      // core service: asynchronous batches, started fairly from the work queue
	{"schedule", roleCore, []string{"patent"}},  // core service: re-analysis of tracked companies, alerts

	{"pdf", roleAdapter, []string{"patent", "pdf/lpdf"}}, // adapter: PDF sections, OCR of scans (tesseract)
	{"pdf/lpdf", roleAdapter, nil},                       // the PDF library (ledongthuc/pdf), patched to bound what a document costs
	{"store", roleAdapter, []string{"patent"}},           // adapter: PostgreSQL or SQLite through GORM
	{"serpapi", roleAdapter, []string{"patent"}},         // adapter: SerpApi patent search
	{"llm", roleAdapter, []string{"patent"}},             // adapter: the LLM gateway
	{"pdfstore", roleAdapter, []string{"patent"}},        // adapter: PDF blobs (directory or S3), downloads
	{"webhook", roleAdapter, []string{"patent"}},         // adapter: outbound webhooks
	{"queue", roleAdapter, []string{"patent"}},           // adapter: the workers of the work queue (River) every replica drains

	{"config", roleConfig, []string{"patent"}}, // config: the environment, parsed and checked

	{"httpapi", roleHTTP, []string{"patent", "auth", "export", "ratelimit"}}, // HTTP: routes, handlers, wire format

	// HTTP from the caller's side: the Go client generated from
	// docs/openapi/patentsvc.yaml (make clients) for other teams; it imports no
	// package of the module.
	{"client", roleHTTP, nil},

	{"cmd/patentsvc", roleMain, []string{anyPackage}}, // main: run wires everything together
}

// TestImportRules checks every package's imports of the module's own
// packages against importRules, and that the domain package imports the
// standard library only.
func TestImportRules(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, p := range listPackages(t) {
		name, _ := shortName(p.ImportPath)
		listed[name] = true
		r, ok := ruleFor(name)
		if !ok {
			t.Errorf("%s is not in importRules: add a row with its role and the packages it may import", name)
			continue
		}
		for _, msg := range r.check(p.Imports) {
			t.Error(msg)
		}
	}
	for _, r := range importRules {
		if !listed[r.pkg] {
			t.Errorf("importRules has a row for %s, which is not a package of %s: remove or rename the row", r.pkg, module)
		}
	}
}

// check returns a message for each import that breaks the rule: a package
// of the module it does not allow or, for the domain package, anything
// outside the standard library.
func (r importRule) check(imports []string) []string {
	var msgs []string
	for _, imp := range imports {
		name, inModule := shortName(imp)
		switch {
		case inModule && !r.allows(name):
			msgs = append(msgs, fmt.Sprintf("%s (%s) imports %s, which its rule forbids: %s", r.pkg, r.role, name, r.describe()))
		case !inModule && r.role == roleDomain && !isStd(imp):
			msgs = append(msgs, fmt.Sprintf("%s (%s) imports %s, which its rule forbids: the domain package imports the standard library only", r.pkg, r.role, imp))
		}
	}
	return msgs
}

func (r importRule) allows(name string) bool {
	return slices.Contains(r.allow, anyPackage) || slices.Contains(r.allow, name)
}

// describe states the rule for messages.
func (r importRule) describe() string {
	if len(r.allow) == 0 {
		return r.pkg + " may import no package of the module"
	}
	return r.pkg + " may import only " + strings.Join(r.allow, ", ")
}

func ruleFor(name string) (importRule, bool) {
	i := slices.IndexFunc(importRules, func(r importRule) bool { return r.pkg == name })
	if i < 0 {
		return importRule{}, false
	}
	return importRules[i], true
}

// TestFunctionSize fails for any function or method of the service's own
// code (test files and test-support packages left out) longer than 80 lines
// or with a cyclomatic complexity over 25. There are no exceptions: the
// files are parsed without comments, so gocyclo's //gocyclo:ignore is not
// honoured either. Generated files (a "Code generated ... DO NOT EDIT."
// line, such as client/client.gen.go) are not the service's own code and
// are left out.
// thirdParty are the packages copied into the tree from elsewhere, with
// patches of ours (pdf/lpdf/README.md): their code keeps its authors'
// shape, so the size rules are not applied to it.
var thirdParty = map[string]bool{"pdf/lpdf": true}

func TestFunctionSize(t *testing.T) {
	t.Parallel()
	const maxLines, maxComplexity = 80, 25
	type finding struct {
		pos token.Position
		msg string
	}
	var findings []finding
	var stats gocyclo.Stats
	fset := token.NewFileSet()
	for _, p := range listPackages(t) {
		if name, _ := shortName(p.ImportPath); thirdParty[name] {
			continue
		}
		for _, file := range sourceFiles(t, p.Dir) {
			if isGenerated(t, file) {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > maxLines {
					findings = append(findings, finding{start, fmt.Sprintf("%s is %d lines long, want at most %d", funcName(fd), n, maxLines)})
				}
			}
			stats = gocyclo.AnalyzeASTFile(f, fset, stats)
		}
	}
	for _, s := range stats {
		if s.Complexity > maxComplexity {
			findings = append(findings, finding{s.Pos, fmt.Sprintf("%s has cyclomatic complexity %d, want at most %d", s.FuncName, s.Complexity, maxComplexity)})
		}
	}
	slices.SortStableFunc(findings, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.pos.Filename, b.pos.Filename), cmp.Compare(a.pos.Line, b.pos.Line))
	})
	for _, f := range findings {
		t.Errorf("%s:%d: %s", f.pos.Filename, f.pos.Line, f.msg)
	}
}

// TestWorkIsReachable enforces what a test can of the way queued work
// goes (docs/architecture.md, "The way of a scheduled run and a
// delivery"; STYLE.md items 29 and 30):
//   - no struct of package queue has a field of a function type: each
//     kind's worker reaches the core that runs it through a field of an
//     interface type, which "go to implementation" follows;
//   - no method of the store takes a function: a store transaction never
//     calls back into another package, what it stores is handed to it as
//     data (the one exception streams rows to an export and writes
//     nothing). That the store never imports webhook or queue is
//     importRules'.
func TestWorkIsReachable(t *testing.T) {
	t.Parallel()
	readOnlyIterators := map[string]bool{"EachAnalysis": true}
	fset := token.NewFileSet()
	for _, p := range listPackages(t) {
		name, _ := shortName(p.ImportPath)
		if name != "queue" && name != "store" {
			continue
		}
		for _, file := range sourceFiles(t, p.Dir) {
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.TypeSpec:
					st, ok := n.Type.(*ast.StructType)
					if !ok || name != "queue" {
						return true
					}
					for _, fld := range st.Fields.List {
						if _, isFunc := fld.Type.(*ast.FuncType); isFunc {
							t.Errorf("%s: %s has a field of function type (%s): reach the core through an interface", fset.Position(fld.Pos()), n.Name.Name, types.ExprString(fld.Type))
						}
					}
				case *ast.FuncDecl:
					if name != "store" || n.Recv == nil || types.ExprString(n.Recv.List[0].Type) != "*Store" || !n.Name.IsExported() || readOnlyIterators[n.Name.Name] {
						return false
					}
					for _, prm := range n.Type.Params.List {
						if _, isFunc := prm.Type.(*ast.FuncType); isFunc {
							t.Errorf("%s: %s takes a function (%s): compose what it stores first, and hand it over as data", fset.Position(prm.Pos()), funcName(n), types.ExprString(prm.Type))
						}
					}
					return false
				}
				return true
			})
		}
	}
}

// isGenerated reports whether a Go file says it is generated.
func isGenerated(t *testing.T, file string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return ast.IsGenerated(f)
}

// sourceFiles lists the non-test .go files of a package directory, whatever
// their build constraints, relative to the module root.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, filepath.Join(rel, name))
		}
	}
	return files
}

// funcName names a function the way gocyclo does: F, (T).M or (*T).M.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + fd.Name.Name
}

// docPath is the document that holds the import graphs; graphBegin and
// graphEnd enclose this service's graph in it.
const (
	docPath    = "../docs/architecture.md"
	graphBegin = "<!-- BEGIN import graph: " + service + " (generated by TestDependencyDiagram; go test -run TestDependencyDiagram -update) -->"
	graphEnd   = "<!-- END import graph: " + service + " -->"
)

// graphsIntro opens the "Import graphs" section when a test creates it
// (vinsvc/architecture_test.go has the same text).
const graphsIntro = "The graphs below are generated from `go list` by `TestDependencyDiagram` in\n" +
	"each service's `architecture_test.go`; after changing imports, run\n" +
	"`go test -run TestDependencyDiagram -update .` in the service's directory.\n" +
	"An arrow A --> B means package A imports package B directly; a dotted\n" +
	"arrow is an import that `TestImportRules` forbids (still to be removed).\n" +
	"Test-support packages (`…test`) are left out. Node colours are the roles\n" +
	"in the tests' rule tables: domain, core service, adapter, config, HTTP,\n" +
	"main."

// TestDependencyDiagram compares the service's import graph, drawn in
// Mermaid, with its block in docs/architecture.md; with -update it rewrites
// the block (creating it if missing) instead.
func TestDependencyDiagram(t *testing.T) {
	t.Parallel()
	graph := mermaidGraph(listPackages(t))
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	current, found, err := graphBlock(doc)
	if err != nil {
		t.Fatalf("%s: %v", docPath, err)
	}
	if *update {
		if updated := withGraph(doc, graph); updated != doc {
			if err := os.WriteFile(docPath, []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the %s import graph in %s", service, docPath)
		}
		return
	}
	rerun := "run `go test -run TestDependencyDiagram -update .` in " + service + " and review the diff"
	switch {
	case !found:
		t.Errorf("%s has no import graph for %s: %s", docPath, service, rerun)
	case current != graph:
		t.Errorf("the %s import graph in %s is out of date: %s\n%s", service, docPath, rerun, lineDiff(current, graph))
	}
}

// mermaidGraph draws the packages and their imports of each other as a
// Mermaid flowchart: sorted, so the text is the same on every run; forbidden
// imports dotted; nodes styled by role.
func mermaidGraph(pkgs []listedPackage) string {
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	nodes := map[string]bool{}
	roles := map[role]bool{}
	for _, p := range pkgs {
		name, _ := shortName(p.ImportPath)
		nodes[name] = true
		class := ""
		if r, ok := ruleFor(name); ok {
			class, roles[r.role] = ":::"+string(r.role), true
		}
		fmt.Fprintf(&b, "    %s[\"%s\"]%s\n", nodeID(p.ImportPath), name, class)
	}
	for _, p := range pkgs {
		from, _ := shortName(p.ImportPath)
		r, classified := ruleFor(from)
		for _, imp := range slices.Sorted(slices.Values(p.Imports)) {
			to, ok := shortName(imp)
			if !ok || !nodes[to] {
				continue
			}
			arrow := "-->"
			if classified && !r.allows(to) {
				arrow = "-.->"
			}
			fmt.Fprintf(&b, "    %s %s %s\n", nodeID(p.ImportPath), arrow, nodeID(imp))
		}
	}
	for _, s := range []struct {
		role  role
		style string
	}{
		{roleDomain, "fill:#fff3bf,stroke:#e67700"},
		{roleCore, "fill:#d3f9d8,stroke:#2b8a3e"},
		{roleAdapter, "fill:#d0ebff,stroke:#1864ab"},
		{roleConfig, "fill:#fff0f6,stroke:#a61e4d"},
		{roleHTTP, "fill:#e5dbff,stroke:#5f3dc4"},
		{roleMain, "fill:#ffe3e3,stroke:#c92a2a"},
	} {
		if roles[s.role] {
			fmt.Fprintf(&b, "    classDef %s %s\n", s.role, s.style)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// nodeID is a package's Mermaid node id: its path from the module root with
// "/" as "_" ("internal_llm", "cmd_patentsvc"), so never a Mermaid keyword
// such as "end".
func nodeID(importPath string) string {
	return strings.ReplaceAll(strings.TrimPrefix(importPath, module+"/"), "/", "_")
}

// graphBlock returns what stands between this service's markers in doc,
// and whether they are there.
func graphBlock(doc string) (string, bool, error) {
	start, end, err := graphBounds(doc)
	if err != nil || start < 0 {
		return "", false, err
	}
	return doc[start:end], true, nil
}

// graphBounds locates the text between the markers: -1, -1 when there are
// none, an error when they are broken.
func graphBounds(doc string) (start, end int, err error) {
	i := strings.Index(doc, graphBegin+"\n")
	if i < 0 {
		if strings.Contains(doc, graphEnd) {
			return 0, 0, errors.New("END marker of the " + service + " import graph without its BEGIN marker")
		}
		return -1, -1, nil
	}
	start = i + len(graphBegin) + 1
	j := strings.Index(doc[start:], graphEnd)
	if j < 0 {
		return 0, 0, errors.New("BEGIN marker of the " + service + " import graph without its END marker")
	}
	return start, start + j, nil
}

// withGraph returns doc with graph between this service's markers. Missing
// markers go at the end of the "Import graphs" section, which is added at
// the end of doc if missing.
func withGraph(doc, graph string) string {
	if start, end, err := graphBounds(doc); err == nil && start >= 0 {
		return doc[:start] + graph + doc[end:]
	}
	entry := "### " + service + "\n\n" + graphBegin + "\n" + graph + graphEnd + "\n"
	const heading = "\n## Import graphs\n"
	i := strings.Index(doc, heading)
	if i < 0 {
		return strings.TrimRight(doc, "\n") + "\n" + heading + "\n" + graphsIntro + "\n\n" + entry
	}
	after := i + len(heading)
	if j := strings.Index(doc[after:], "\n## "); j >= 0 {
		at := after + j + 1
		return strings.TrimRight(doc[:at], "\n") + "\n\n" + entry + "\n" + doc[at:]
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + entry
}

// lineDiff lists the lines only in the doc (-) and only in the generated
// graph (+). Every line of a graph is distinct, so sets suffice.
func lineDiff(doc, generated string) string {
	docLines, genLines := strings.Split(doc, "\n"), strings.Split(generated, "\n")
	var b strings.Builder
	for _, l := range docLines {
		if !slices.Contains(genLines, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range genLines {
		if !slices.Contains(docLines, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	if b.Len() == 0 {
		return "(the same lines in another order)"
	}
	return b.String()
}

// listedPackage is what the tests read of `go list -json`; listFields
// names its fields, so go list computes no others.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string // of the non-test files only
	Error      *struct{ Err string }
}

const listFields = "ImportPath,Dir,GoFiles,CgoFiles,Imports,Error"

// listPackages runs `go list` in the module root and returns the module's
// packages that have non-test files, test-support packages left out, sorted
// by import path. A package go list cannot load fails the test.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json="+listFields, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		name, ok := shortName(p.ImportPath)
		if !ok || len(p.GoFiles)+len(p.CgoFiles) == 0 || isTestSupport(name) {
			continue
		}
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b listedPackage) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return pkgs
}

// shortName is how the tests name a package of the module: its path under
// internal/ ("analysis", "llm/llmtest"), else its path from the module root
// ("cmd/patentsvc"). ok is false for a package outside the module (or the
// module root itself).
func shortName(importPath string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, "internal/"), true
}

// isTestSupport reports whether a package is test support: fakes and
// helpers for tests, named …test (vpictest, clocktest), and fakes, which
// exports the tests' fakes of the upstreams to devstack (make demo) and is
// imported by no package of the service.
func isTestSupport(name string) bool {
	return strings.HasSuffix(path.Base(name), "test") || name == "fakes"
}

// isStd reports whether an import path is in the standard library: its
// first element has no dot (third-party modules start with a domain name).
func isStd(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}
