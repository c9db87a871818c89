package devstack_test

// The architecture tests of devstack, the program behind make run, make
// demo and make tour: which of its packages may import which
// (TestImportRules), how large a function may grow (TestFunctionSize), and
// how large an interface may grow (TestInterfaceSize); it has no domain
// package, so no TestNoDomainInterfaces. The checks are the testkit
// module's archtest, the same as the services'; this file holds the
// module's table and limits. The module has no import graph in
// docs/architecture.md, so no TestDependencyDiagram.
//
// They read the packages from `go list`, which they run in the module root
// (where `go test` runs this package).

import (
	"testing"

	"github.com/gatewayapis/testkit/archtest"
)

// arch is what the checks know of the module.
var arch = archtest.Config{
	Module: "github.com/gatewayapis/devstack",
	Name:   "devstack",

	// Every package of the module with its role and the packages of the
	// module it may import, as they are. Imports of the services' modules
	// (demo's of vinsvc/fakes and patentsvc/fakes) are outside the module:
	// the rows do not cover them.
	Rules: []archtest.Rule{
		{Pkg: "tour", Role: archtest.RoleCore},         // core: the README's quick start as a test, each command checked against its promise
		{Pkg: "demo", Role: archtest.RoleAdapter},      // adapter: make demo's upstreams on loopback ports (the services' fakes, the model, a PDF host)
		{Pkg: "supervise", Role: archtest.RoleAdapter}, // adapter: the services as child processes, their output prefixed, stopped together

		{Pkg: "cmd/devstack", Role: archtest.RoleMain, Allow: []string{archtest.AnyPackage}}, // main: run, demo and tour wired together
	},

	// The services' limits: no function over 80 lines or a cyclomatic
	// complexity of 25, no interface of a core package over 12 methods.
	MaxLines:            80,
	MaxComplexity:       25,
	MaxInterfaceMethods: 12,

	// The functions over those limits today, each to split; remove an entry
	// when its function is within them (the test says so).
	FunctionSizeExemptions: []archtest.Decl{
		{Pkg: "tour", Name: "Parse"}, // tour.go: the README's blocks to steps; 88 lines, a complexity of 27
	},
}

// TestImportRules checks every package's imports of the module's own
// packages against arch.Rules.
func TestImportRules(t *testing.T) {
	t.Parallel()
	archtest.ImportRules(t, arch)
}

// TestFunctionSize fails for any function of the module's own code over
// arch.MaxLines lines or a cyclomatic complexity of arch.MaxComplexity.
func TestFunctionSize(t *testing.T) {
	t.Parallel()
	archtest.FunctionSize(t, arch)
}

// TestInterfaceSize fails for an interface of a core package (tour) with
// more than arch.MaxInterfaceMethods methods.
func TestInterfaceSize(t *testing.T) {
	t.Parallel()
	archtest.InterfaceSize(t, arch)
}
