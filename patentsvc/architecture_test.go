package patentsvc_test

// The architecture tests of the patent service: which of its packages may
// import which (TestImportRules), how large a function may grow
// (TestFunctionSize), where interfaces are declared and how large they may
// grow (TestNoDomainInterfaces, TestInterfaceSize), the import graph drawn
// in docs/architecture.md (TestDependencyDiagram), and the way queued work
// goes (TestWorkIsReachable, this service's own). The other checks are
// testkit/archtest's, the same for every module; this file holds the
// service's table, limits and exemptions.
//
// They read the packages from `go list`, which they run in the module root
// (where `go test` runs this package).

import (
	"flag"
	"go/ast"
	"go/token"
	"go/types"
	"testing"

	"github.com/gatewayapis/testkit/archtest"
)

var update = flag.Bool("update", false, "rewrite the import graph in docs/architecture.md")

// arch is what the checks know of the service.
var arch = archtest.Config{
	Module: "github.com/gatewayapis/patentsvc",
	Name:   "patentsvc", // the module's directory, and its graph's name in the doc
	Doc:    "../docs/architecture.md",

	// Every package of the service with its role and the packages of the
	// module it may import (its path under internal/, or from the module
	// root: cmd/...). Test-support packages (a last path element ending in
	// "test", such as llm/llmtest) are not listed: they may import
	// anything.
	Rules: []archtest.Rule{
		{Pkg: "patent", Role: archtest.RoleDomain}, // domain: company names, patent ids, users, alerts, sentinel errors

		{Pkg: "auth", Role: archtest.RoleCore, Allow: []string{"patent"}},      // core service: tokens and passwords
		{Pkg: "ratelimit", Role: archtest.RoleCore, Allow: []string{"patent"}}, // core service: per-IP windows and counters
		{Pkg: "analysis", Role: archtest.RoleCore, Allow: []string{"patent"}},  // core service: company name to stored analysis, batches
		{Pkg: "jobs", Role: archtest.RoleCore, Allow: []string{"patent"}},      // core service: asynchronous batches, started fairly from the work queue
		{Pkg: "schedule", Role: archtest.RoleCore, Allow: []string{"patent"}},  // core service: the tracked companies' scheduled runs, alerts
		{Pkg: "tracking", Role: archtest.RoleCore, Allow: []string{"patent"}},  // core service: the tracked companies as admins see them; a first run queued with each
		{Pkg: "reports", Role: archtest.RoleCore, Allow: []string{"patent"}},   // core service: exports' rows, the PDF report's content, analytics

		{Pkg: "pdf", Role: archtest.RoleAdapter, Allow: []string{"patent"}},      // adapter: PDF sections by the engine (poppler, child processes), OCR of scans (tesseract)
		{Pkg: "store", Role: archtest.RoleAdapter, Allow: []string{"patent"}},    // adapter: PostgreSQL or SQLite through GORM
		{Pkg: "serpapi", Role: archtest.RoleAdapter, Allow: []string{"patent"}},  // adapter: SerpApi patent search
		{Pkg: "llm", Role: archtest.RoleAdapter, Allow: []string{"patent"}},      // adapter: the LLM gateway
		{Pkg: "pdfstore", Role: archtest.RoleAdapter, Allow: []string{"patent"}}, // adapter: PDF blobs (directory or S3), downloads
		{Pkg: "webhook", Role: archtest.RoleAdapter, Allow: []string{"patent"}},  // adapter: outbound webhooks (and the admins' view of the deliveries)
		{Pkg: "export", Role: archtest.RoleAdapter, Allow: []string{"patent"}},   // adapter: the download formats, CSV and PDF (gopdf), which the HTTP layer renders
		{Pkg: "queue", Role: archtest.RoleAdapter, Allow: []string{"patent"}},    // adapter: the workers of the work queue (River) every replica drains

		{Pkg: "config", Role: archtest.RoleConfig, Allow: []string{"patent"}}, // config: the environment, parsed and checked

		{Pkg: "httpapi", Role: archtest.RoleHTTP, Allow: []string{"patent", "auth", "export", "ratelimit"}}, // HTTP: routes, handlers, wire format

		// HTTP from the caller's side: the Go client generated from
		// docs/openapi/patentsvc.yaml (make clients) for other teams; it imports no
		// package of the module.
		{Pkg: "client", Role: archtest.RoleHTTP},

		{Pkg: "cmd/patentsvc", Role: archtest.RoleMain, Allow: []string{archtest.AnyPackage}}, // main: run wires everything together
	},

	// fakes exports the tests' fakes of the upstreams to devstack (make
	// demo); no package of the service imports it.
	TestSupport: []string{"fakes"},

	// No function over 80 lines or a cyclomatic complexity of 25 (third-party
	// code aside); no interface of a core or http package over 12 methods.
	MaxLines:            80,
	MaxComplexity:       25,
	MaxInterfaceMethods: 12,
}

// TestImportRules checks every package's imports of the module's own
// packages against arch.Rules, and that the domain package imports the
// standard library only.
func TestImportRules(t *testing.T) {
	t.Parallel()
	archtest.ImportRules(t, arch)
}

// TestFunctionSize fails for any function of the service's own code over
// arch.MaxLines lines or a cyclomatic complexity of arch.MaxComplexity.
func TestFunctionSize(t *testing.T) {
	t.Parallel()
	archtest.FunctionSize(t, arch)
}

// TestNoDomainInterfaces fails for an interface type that patent declares,
// the exemptions aside: interfaces are declared by their consumers.
func TestNoDomainInterfaces(t *testing.T) {
	t.Parallel()
	archtest.NoDomainInterfaces(t, arch)
}

// TestInterfaceSize fails for an interface of a core or http package with
// more than arch.MaxInterfaceMethods methods, the exemptions aside.
func TestInterfaceSize(t *testing.T) {
	t.Parallel()
	archtest.InterfaceSize(t, arch)
}

// TestDependencyDiagram compares the service's import graph with its block
// in docs/architecture.md; with -update it rewrites the block instead.
func TestDependencyDiagram(t *testing.T) {
	t.Parallel()
	archtest.Diagram(t, arch, *update)
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
//     TestImportRules'.
func TestWorkIsReachable(t *testing.T) {
	t.Parallel()
	readOnlyIterators := map[string]bool{"EachAnalysis": true}
	fset := token.NewFileSet()
	for _, p := range archtest.Packages(t, arch) {
		name := p.Name
		if name != "queue" && name != "store" {
			continue
		}
		for _, f := range p.Parse(t, fset) {
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
							t.Errorf("%s: %s takes a function (%s): compose what it stores first, and hand it over as data", fset.Position(prm.Pos()), archtest.FuncName(n), types.ExprString(prm.Type))
						}
					}
					return false
				}
				return true
			})
		}
	}
}
