package archtest

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// NoDomainInterfaces checks the ports by one rule: a domain package
// declares no interface type (no port, no alias of one, no type defined
// from another package's interface). An interface is declared by the
// package that calls through it, on the consumer's side (STYLE.md items 4
// and 26); the domain holds the types it is written in. A sealed
// interface, one with an unexported method, is not a port: no package
// but its own can implement it, so it is a closed set of the domain's own
// types (a sum type, such as the kinds of a queued unit), and is let be.
// Interfaces in cfg.DomainInterfaceExemptions are let be; an exemption
// that no longer names an interface of a domain package fails the check.
func NoDomainInterfaces(t testing.TB, cfg Config) {
	t.Helper()
	declared, complete := interfacesOf(t, cfg, RoleDomain)
	var findings []finding
	for _, d := range declared {
		if !d.sealed && !slices.Contains(cfg.DomainInterfaceExemptions, d.Decl) {
			findings = append(findings, finding{d.pos, fmt.Sprintf("%s (domain) declares the interface %s: declare it in the package that calls through it (consumer side, STYLE.md items 4 and 26)", d.Pkg, d.Name)})
		}
	}
	report(t, findings)
	if !complete {
		return // a package that did not type-check may hold an exempted type
	}
	for _, e := range cfg.DomainInterfaceExemptions {
		if !slices.ContainsFunc(declared, func(d declaredInterface) bool { return d.Decl == e }) {
			t.Errorf("Config.DomainInterfaceExemptions has %s, which is no longer an interface type of a domain package: remove it from the exemptions", e)
		}
	}
}

// InterfaceSize fails for an interface type that a core or http package
// declares in its non-test code with more than cfg.MaxInterfaceMethods
// methods, counting its full method set (embedded interfaces included,
// from any package): a consumer declares the few methods it calls.
// Interfaces in cfg.LargeInterfaceExemptions are let be; an exemption
// whose type no longer exists, or has no more methods than the limit,
// fails the check.
func InterfaceSize(t testing.TB, cfg Config) {
	t.Helper()
	if cfg.MaxInterfaceMethods <= 0 {
		t.Fatalf("archtest: Config.MaxInterfaceMethods (%d) must be set", cfg.MaxInterfaceMethods)
	}
	declared, complete := interfacesOf(t, cfg, RoleCore, RoleHTTP)
	var findings []finding
	for _, d := range declared {
		if d.methods > cfg.MaxInterfaceMethods && !slices.Contains(cfg.LargeInterfaceExemptions, d.Decl) {
			findings = append(findings, finding{d.pos, fmt.Sprintf("%s has %d methods, want at most %d: split it, each consumer declaring the methods it calls", d.Decl, d.methods, cfg.MaxInterfaceMethods)})
		}
	}
	report(t, findings)
	if !complete {
		return // a package that did not type-check may hold an exempted type
	}
	for _, e := range cfg.LargeInterfaceExemptions {
		i := slices.IndexFunc(declared, func(d declaredInterface) bool { return d.Decl == e })
		switch {
		case i < 0:
			t.Errorf("Config.LargeInterfaceExemptions has %s, which is no longer an interface type of a core or http package: remove it from the exemptions", e)
		case !slices.ContainsFunc(declared, func(d declaredInterface) bool { return d.Decl == e && d.methods > cfg.MaxInterfaceMethods }):
			t.Errorf("Config.LargeInterfaceExemptions has %s, which has %d methods now, within %d: remove it from the exemptions", e, declared[i].methods, cfg.MaxInterfaceMethods)
		}
	}
}

// declaredInterface is a named interface type a package declares, at
// package level or in a function.
type declaredInterface struct {
	Decl
	pos     token.Position
	methods int  // the size of its method set
	sealed  bool // it has an unexported method: only its package implements it
}

// interfacesOf type-checks the module's packages whose rule gives them
// one of roles, from their non-test files of the current build, and
// returns the interface types declared in them outside generated files,
// and whether every one of them type-checked (one that does not fails t).
// Their imports are read from the export data `go list -export` builds.
func interfacesOf(t testing.TB, cfg Config, roles ...Role) (declared []declaredInterface, complete bool) {
	t.Helper()
	var pkgs []Package
	for _, p := range Packages(t, cfg) {
		if r, ok := ruleFor(cfg, p.Name); ok && slices.Contains(roles, r.Role) {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return nil, true
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", exportData(t, pkgs))
	complete = true
	for _, p := range pkgs {
		files, generated := parseForTypes(t, fset, p)
		info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, FakeImportC: true}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Errorf("type-check %s: %v", p.Name, err)
			complete = false
			continue
		}
		for _, obj := range info.Defs {
			tn, ok := obj.(*types.TypeName)
			if !ok {
				continue
			}
			if _, param := tn.Type().(*types.TypeParam); param {
				continue
			}
			iface, ok := tn.Type().Underlying().(*types.Interface)
			pos := fset.Position(tn.Pos())
			if !ok || generated[pos.Filename] {
				continue
			}
			declared = append(declared, declaredInterface{Decl{p.Name, tn.Name()}, pos, iface.NumMethods(), sealed(iface)})
		}
	}
	return declared, complete
}

// exportData runs `go list -export` for pkgs and their dependencies and
// returns the lookup of the gc importer over the export data it names.
func exportData(t testing.TB, pkgs []Package) func(path string) (io.ReadCloser, error) {
	t.Helper()
	args := []string{"-export", "-deps", "-json=ImportPath,Export,Error"}
	for _, p := range pkgs {
		args = append(args, p.ImportPath)
	}
	exports := map[string]string{}
	for _, l := range goList(t, args) {
		// A package of pkgs that does not build fails its own type-check;
		// a dependency that does not build is reported here.
		if l.Error != nil && !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == l.ImportPath }) {
			t.Errorf("go list -export: %s: %s", l.ImportPath, l.Error.Err)
		}
		exports[l.ImportPath] = l.Export
	}
	return func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("go list -export built no export data for %s", path)
		}
		return os.Open(file)
	}
}

// parseForTypes parses p's non-test files of the current build, with
// comments (the "Code generated" line is one, and a //go:build line sets
// a file's Go version for the type-check), and returns them with the set
// of those that are generated.
func parseForTypes(t testing.TB, fset *token.FileSet, p Package) ([]*ast.File, map[string]bool) {
	t.Helper()
	rel := relDir(t, p.Dir)
	var files []*ast.File
	generated := map[string]bool{}
	for _, name := range p.GoFiles {
		file := filepath.Join(rel, name)
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		generated[file] = ast.IsGenerated(f)
	}
	return files, generated
}

// sealed reports whether iface has an unexported method, which no type
// outside its package can implement.
func sealed(iface *types.Interface) bool {
	for i := range iface.NumMethods() {
		if !iface.Method(i).Exported() {
			return true
		}
	}
	return false
}
