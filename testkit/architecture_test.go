package testkit_test

// The architecture tests of the test-kit module, by its own archtest:
// which of its packages may import which (TestImportRules), how large a
// function may grow (TestFunctionSize), and how large an interface may
// grow (TestInterfaceSize; NoDomainInterfaces for wake). archtest itself,
// named as test support, is left out of every check. The module has no
// import graph in docs/architecture.md, so no TestDependencyDiagram.
//
// They read the packages from `go list`, which they run in the module root
// (where `go test` runs this package).

import (
	"testing"

	"github.com/gatewayapis/testkit/archtest"
)

// arch is what the checks know of the module.
var arch = archtest.Config{
	Module: "github.com/gatewayapis/testkit",
	Name:   "testkit",

	// Every package of the module with its role and the packages of the
	// module it may import.
	Rules: []archtest.Rule{
		{Pkg: "wake", Role: archtest.RoleDomain},                                 // waiting for a change under a mutex, with a context; the standard library only
		{Pkg: "syncbuf", Role: archtest.RoleCore, Allow: []string{"wake"}},       // a buffer written concurrently, waited on
		{Pkg: "fakehttp", Role: archtest.RoleAdapter, Allow: []string{"wake"}},   // the recorded-answer fakes' scaffolding over net/http
		{Pkg: "service", Role: archtest.RoleAdapter, Allow: []string{"syncbuf"}}, // a service started in process or as a child process
		{Pkg: "wait", Role: archtest.RoleCore},                                   // the one bounded polling wait, for state nothing tells the tests about
	},

	// The services' limits.
	MaxLines:            80,
	MaxComplexity:       25,
	MaxInterfaceMethods: 12,
}

// TestImportRules checks every package's imports of the module's own
// packages against arch.Rules, and that wake imports the standard library
// only.
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

// TestNoDomainInterfaces fails for an interface type that wake declares.
func TestNoDomainInterfaces(t *testing.T) {
	t.Parallel()
	archtest.NoDomainInterfaces(t, arch)
}

// TestInterfaceSize fails for an interface of a core package with more
// than arch.MaxInterfaceMethods methods.
func TestInterfaceSize(t *testing.T) {
	t.Parallel()
	archtest.InterfaceSize(t, arch)
}
