package archtest

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// FunctionSize fails for any function or method of the module's own code
// longer than cfg.MaxLines lines or with a cyclomatic complexity over
// cfg.MaxComplexity, cfg.FunctionSizeExemptions aside. Test files, test
// support, generated files and the packages of cfg.ThirdParty are not the
// module's own code and are left out. There are no other exceptions: the
// files are parsed without comments, so gocyclo's //gocyclo:ignore is not
// honoured either. An exemption whose function no longer exists, or is
// within both limits, fails the check.
func FunctionSize(t testing.TB, cfg Config) {
	t.Helper()
	if cfg.MaxLines <= 0 || cfg.MaxComplexity <= 0 {
		t.Fatalf("archtest: Config.MaxLines (%d) and Config.MaxComplexity (%d) must be set", cfg.MaxLines, cfg.MaxComplexity)
	}
	pkgs, all := listModule(t, cfg)
	checkNamed(t, cfg, "ThirdParty", cfg.ThirdParty, all)
	var findings []finding
	found, exceeds := map[Decl]bool{}, map[Decl]bool{} // the exempted functions seen, and those over a limit
	tooBig := func(d Decl, pos token.Position, msg string) {
		if slices.Contains(cfg.FunctionSizeExemptions, d) {
			exceeds[d] = true
			return
		}
		findings = append(findings, finding{pos, msg})
	}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		if slices.Contains(cfg.ThirdParty, p.Name) {
			continue
		}
		var stats gocyclo.Stats
		for _, f := range parseOwn(t, fset, p) {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				name := Decl{p.Name, FuncName(fd)}
				found[name] = true
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > cfg.MaxLines {
					tooBig(name, start, fmt.Sprintf("%s is %d lines long, want at most %d", name.Name, n, cfg.MaxLines))
				}
			}
			stats = gocyclo.AnalyzeASTFile(f, fset, stats)
		}
		for _, s := range stats {
			if s.Complexity > cfg.MaxComplexity {
				tooBig(Decl{p.Name, s.FuncName}, s.Pos, fmt.Sprintf("%s has cyclomatic complexity %d, want at most %d", s.FuncName, s.Complexity, cfg.MaxComplexity))
			}
		}
	}
	report(t, findings)
	for _, e := range cfg.FunctionSizeExemptions {
		switch {
		case !found[e]:
			t.Errorf("Config.FunctionSizeExemptions has %s, which is no longer a function of the module's own code: remove it from the exemptions", e)
		case !exceeds[e]:
			t.Errorf("Config.FunctionSizeExemptions has %s, which is within %d lines and a complexity of %d now: remove it from the exemptions", e, cfg.MaxLines, cfg.MaxComplexity)
		}
	}
}

// parseOwn parses p's non-test files that are not generated, without
// comments.
func parseOwn(t testing.TB, fset *token.FileSet, p Package) []*ast.File {
	t.Helper()
	var own []string
	for _, file := range p.Files(t) {
		if !isGenerated(t, file) {
			own = append(own, file)
		}
	}
	return parseFiles(t, fset, own)
}

// finding is a rule broken at a place in a file.
type finding struct {
	pos token.Position
	msg string
}

// report fails t with the findings, in file and line order.
func report(t testing.TB, findings []finding) {
	t.Helper()
	slices.SortStableFunc(findings, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.pos.Filename, b.pos.Filename), cmp.Compare(a.pos.Line, b.pos.Line))
	})
	for _, f := range findings {
		t.Errorf("%s:%d: %s", f.pos.Filename, f.pos.Line, f.msg)
	}
}
