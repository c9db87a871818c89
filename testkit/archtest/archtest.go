// Package archtest holds the workspace's architecture tests, written once:
// which package of a module may import which (ImportRules), how large a
// function may grow (FunctionSize), where interfaces are declared and how
// large they may grow (NoDomainInterfaces, InterfaceSize), and the import
// graph drawn in docs/architecture.md (Diagram).
//
// Each module's architecture_test.go holds only its own data in a Config
// (the module path, its table of rules, its limits, its exemptions) and
// calls the checks, one per test:
//
//	var arch = archtest.Config{Module: "github.com/gatewayapis/vinsvc", ...}
//
//	func TestImportRules(t *testing.T) {
//		t.Parallel()
//		archtest.ImportRules(t, arch)
//	}
//
// A module's own checks (patentsvc's TestWorkIsReachable) read the same
// packages through Packages, Package.Parse and FuncName.
//
// # Caveats
//
//   - The checks read the packages from `go list`, which they run in the
//     current directory: it must be the module's root, where `go test`
//     runs the test package of the module's root directory.
//   - Test support is left out of every check: a package whose last path
//     element ends in "test" (vpic/vpictest, archtest itself) and the
//     packages in Config.TestSupport. So are test files.
//   - FunctionSize reads every non-test file whatever its build
//     constraints. NoDomainInterfaces and InterfaceSize type-check a
//     package, so they read the files of the current build (GOOS, GOARCH
//     and tags, as `go list` reports them), with the export data `go list
//     -export` builds for its imports (cached, as for go vet).
//   - A package a Config field names (a row, TestSupport, ThirdParty, an
//     exemption) must exist: the check that reads the field fails if not.
//   - Generated files (a "Code generated ... DO NOT EDIT." line, such as
//     a client/client.gen.go) are not the module's own code: FunctionSize,
//     NoDomainInterfaces and InterfaceSize leave them out.
//   - An exemption list (Config.FunctionSizeExemptions,
//     Config.DomainInterfaceExemptions, Config.LargeInterfaceExemptions)
//     can only shrink: an exempted function or type that no longer exists,
//     or no longer breaks its rule, fails the check until its entry is
//     removed.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
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
)

// Role is what a package is for. It decides the rule the package follows
// and its node's style in the diagram.
type Role string

// The roles of the packages of a module.
const (
	RoleDomain  Role = "domain"  // types, validation, sentinel errors; the standard library only; declares no interface
	RoleCore    Role = "core"    // a service over the domain; declares interfaces for what it needs
	RoleAdapter Role = "adapter" // one package per external dependency (database, upstream, file format)
	RoleConfig  Role = "config"  // reads the environment
	RoleHTTP    Role = "http"    // routes, handlers, the wire format
	RoleMain    Role = "main"    // wiring: builds everything, may import anything
)

// AnyPackage in Rule.Allow lets a package import every package of the
// module.
const AnyPackage = "*"

// Rule is one row of a module's import table: a package of the module,
// named as Package.Name names it, its role, and the packages of the module
// it may import (same naming), or AnyPackage. Imports from outside the
// module are free, except for a domain package: the standard library
// only.
type Rule struct {
	Pkg   string
	Role  Role
	Allow []string
}

// Decl names a declaration of a package: Pkg is the package, named as
// Package.Name names it, and Name a type's name or a function's as
// FuncName gives it ("Parse", "(*Store).Get").
type Decl struct {
	Pkg  string
	Name string
}

// String names d as messages do: "patent.Progress".
func (d Decl) String() string { return d.Pkg + "." + d.Name }

// Config is what the checks know of a module. Each check reads the fields
// it needs and fails at once when one it needs is missing.
type Config struct {
	// Module is the module path ("github.com/gatewayapis/vinsvc").
	Module string
	// Name is the module's directory and its graph's name in Doc
	// ("vinsvc").
	Name string
	// Rules lists every package of the module with its role and the
	// packages of the module it may import. A package missing here fails
	// ImportRules, so a new package gets classified when it is added; a
	// row for a package that does not exist fails it too.
	Rules []Rule
	// TestSupport names the packages, besides those named …test, that are
	// test support: left out of every check (a module's fakes, exported to
	// devstack for make demo). Each must be a package of the module.
	TestSupport []string
	// ThirdParty names the packages copied into the tree from elsewhere,
	// with patches of ours: their code keeps its authors' shape, so
	// FunctionSize leaves them out. Each must be a package of the module.
	ThirdParty []string
	// MaxLines and MaxComplexity bound each function (FunctionSize): its
	// length in lines, its cyclomatic complexity (gocyclo).
	MaxLines, MaxComplexity int
	// FunctionSizeExemptions are functions over MaxLines or MaxComplexity
	// today, which FunctionSize lets be until they are split.
	FunctionSizeExemptions []Decl
	// MaxInterfaceMethods bounds the method set of an interface type that
	// a core or http package declares (InterfaceSize).
	MaxInterfaceMethods int
	// DomainInterfaceExemptions are interface types that domain packages
	// declare today, which NoDomainInterfaces lets be until they move to
	// the packages that call through them.
	DomainInterfaceExemptions []Decl
	// LargeInterfaceExemptions are interface types of core or http
	// packages with more than MaxInterfaceMethods methods today, which
	// InterfaceSize lets be until they are split.
	LargeInterfaceExemptions []Decl
	// Doc is the Markdown document that holds the module's import graph,
	// relative to the module's root ("../docs/architecture.md"); Diagram
	// needs it.
	Doc string
}

// Package is a package of the module as the checks see it.
type Package struct {
	// Name is how the checks name it: its path under internal/ ("vpic",
	// "pdf/lpdf"), else its path from the module's root ("cmd/vinsvc").
	Name string
	// ImportPath is its import path, Dir its directory (absolute).
	ImportPath string
	Dir        string
	// GoFiles are the names, in Dir, of its non-test files of the current
	// build (go list's GoFiles and CgoFiles).
	GoFiles []string
	// Imports are the imports of its non-test files.
	Imports []string
}

// listedPackage is what the checks read of `go list -json`; listFields
// names its fields, so go list computes no others.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Export     string // with -export only
	Error      *struct{ Err string }
}

const listFields = "ImportPath,Dir,GoFiles,CgoFiles,Imports,Error"

// Packages runs `go list` in the current directory (the module's root) and
// returns the module's packages that have non-test files, test support
// left out, sorted by import path. A package go list cannot load fails t.
func Packages(t testing.TB, cfg Config) []Package {
	t.Helper()
	pkgs, _ := listModule(t, cfg)
	return pkgs
}

// listModule returns what Packages returns, and the names of every package
// of the module go list found, test support included.
func listModule(t testing.TB, cfg Config) (pkgs []Package, all map[string]bool) {
	t.Helper()
	if cfg.Module == "" {
		t.Fatal("archtest: Config.Module is empty")
	}
	all = map[string]bool{}
	for _, p := range goList(t, []string{"-json=" + listFields, "./..."}) {
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		name, ok := shortName(cfg.Module, p.ImportPath)
		if !ok {
			continue
		}
		all[name] = true
		files := slices.Concat(p.GoFiles, p.CgoFiles)
		if len(files) == 0 || isTestSupport(cfg, name) {
			continue
		}
		pkgs = append(pkgs, Package{Name: name, ImportPath: p.ImportPath, Dir: p.Dir, GoFiles: files, Imports: p.Imports})
	}
	slices.SortFunc(pkgs, func(a, b Package) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return pkgs, all
}

// goList runs `go list -e` with args in the current directory and decodes
// its JSON stream.
func goList(t testing.TB, args []string) []listedPackage {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", append([]string{"list", "-e"}, args...)...)
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
			return pkgs
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// Files lists the non-test .go files of p's directory, whatever their
// build constraints, relative to the current directory (the module's
// root), so that positions in messages are paths from there.
func (p Package) Files(t testing.TB) []string {
	t.Helper()
	rel := relDir(t, p.Dir)
	entries, err := os.ReadDir(p.Dir)
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

// Parse parses the files Files lists, without comments, into fset.
func (p Package) Parse(t testing.TB, fset *token.FileSet) []*ast.File {
	t.Helper()
	return parseFiles(t, fset, p.Files(t))
}

// parseFiles parses Go files without comments into fset.
func parseFiles(t testing.TB, fset *token.FileSet, names []string) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// relDir returns dir relative to the current directory.
func relDir(t testing.TB, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// isGenerated reports whether a Go file says it is generated.
func isGenerated(t testing.TB, file string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return ast.IsGenerated(f)
}

// FuncName names a function the way gocyclo does: F, (T).M or (*T).M.
func FuncName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + fd.Name.Name
}

// shortName is how the checks name a package of the module: its path
// under internal/, else its path from the module's root. ok is false for a
// package outside the module (or the module's root itself).
func shortName(module, importPath string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, "internal/"), true
}

// isTestSupport reports whether a package is test support: fakes and
// helpers for tests, named …test (vpictest, clocktest), or listed in
// cfg.TestSupport.
func isTestSupport(cfg Config, name string) bool {
	return strings.HasSuffix(path.Base(name), "test") || slices.Contains(cfg.TestSupport, name)
}

// isStd reports whether an import path is in the standard library: its
// first element has no dot (third-party modules start with a domain name).
func isStd(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

// ruleFor returns the row of cfg.Rules for a package.
func ruleFor(cfg Config, name string) (Rule, bool) {
	i := slices.IndexFunc(cfg.Rules, func(r Rule) bool { return r.Pkg == name })
	if i < 0 {
		return Rule{}, false
	}
	return cfg.Rules[i], true
}

// checkNamed fails t for each package a Config field names that is not a
// package of the module (in all).
func checkNamed(t testing.TB, cfg Config, field string, names []string, all map[string]bool) {
	t.Helper()
	for _, name := range names {
		if !all[name] {
			t.Errorf("Config.%s names %s, which is not a package of %s: remove it", field, name, cfg.Module)
		}
	}
}
