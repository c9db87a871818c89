package archtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ImportRules checks every package's imports of the module's own packages
// against cfg.Rules, and that a domain package imports the standard
// library only. It fails for a package without a row, a row without a
// package, and a name in cfg.TestSupport that is no package of the module.
func ImportRules(t testing.TB, cfg Config) {
	t.Helper()
	pkgs, all := listModule(t, cfg)
	checkNamed(t, cfg, "TestSupport", cfg.TestSupport, all)
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p.Name] = true
		r, ok := ruleFor(cfg, p.Name)
		if !ok {
			t.Errorf("%s is not in the import rules: add a row with its role and the packages it may import", p.Name)
			continue
		}
		for _, msg := range r.check(cfg.Module, p.Imports) {
			t.Error(msg)
		}
	}
	for _, r := range cfg.Rules {
		if !listed[r.Pkg] {
			t.Errorf("the import rules have a row for %s, which is not a package of %s: remove or rename the row", r.Pkg, cfg.Module)
		}
	}
}

// check returns a message for each import that breaks the rule: a package
// of the module it does not allow or, for a domain package, anything
// outside the standard library.
func (r Rule) check(module string, imports []string) []string {
	var msgs []string
	for _, imp := range imports {
		name, inModule := shortName(module, imp)
		switch {
		case inModule && !r.allows(name):
			msgs = append(msgs, fmt.Sprintf("%s (%s) imports %s, which its rule forbids: %s", r.Pkg, r.Role, name, r.describe()))
		case !inModule && r.Role == RoleDomain && !isStd(imp):
			msgs = append(msgs, fmt.Sprintf("%s (%s) imports %s, which its rule forbids: the domain package imports the standard library only", r.Pkg, r.Role, imp))
		}
	}
	return msgs
}

func (r Rule) allows(name string) bool {
	return slices.Contains(r.Allow, AnyPackage) || slices.Contains(r.Allow, name)
}

// describe states the rule for messages.
func (r Rule) describe() string {
	if len(r.Allow) == 0 {
		return r.Pkg + " may import no package of the module"
	}
	return r.Pkg + " may import only " + strings.Join(r.Allow, ", ")
}
