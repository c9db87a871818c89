package vinsvc_test

// The architecture tests of the VIN service: which of its packages may
// import which (TestImportRules), how large a function may grow
// (TestFunctionSize), where interfaces are declared and how large they may
// grow (TestNoDomainInterfaces, TestInterfaceSize), and the import graph
// drawn in docs/architecture.md (TestDependencyDiagram). The checks are
// testkit/archtest's, the same for every module; this file holds the
// service's table, limits and exemptions.
//
// They read the packages from `go list`, which they run in the module root
// (where `go test` runs this package).

import (
	"flag"
	"testing"

	"github.com/gatewayapis/testkit/archtest"
)

var update = flag.Bool("update", false, "rewrite the import graph in docs/architecture.md")

// arch is what the checks know of the service.
var arch = archtest.Config{
	Module: "github.com/gatewayapis/vinsvc",
	Name:   "vinsvc", // the module's directory, and its graph's name in the doc
	Doc:    "../docs/architecture.md",

	// Every package of the service with its role and the packages of the
	// module it may import (its path under internal/, or from the module
	// root: cmd/...). Test-support packages (a last path element ending in
	// "test", such as vpic/vpictest) are not listed: they may import
	// anything.
	Rules: []archtest.Rule{
		{Pkg: "vin", Role: archtest.RoleDomain}, // domain: VINs, decode results, the flat record, sentinel errors

		{Pkg: "decoding", Role: archtest.RoleCore, Allow: []string{"vin"}}, // core service: its ports (Cache, Upstream, Snapshot), cache, shared upstream calls, the snapshot policy as decorators
		{Pkg: "ratelimit", Role: archtest.RoleCore},                        // core service: token buckets per plan and subscriber

		{Pkg: "cache", Role: archtest.RoleAdapter, Allow: []string{"vin"}},  // adapter: decoded VINs in a bbolt file
		{Pkg: "vpic", Role: archtest.RoleAdapter, Allow: []string{"vin"}},   // adapter: NHTSA's vPIC API
		{Pkg: "vpicdb", Role: archtest.RoleAdapter, Allow: []string{"vin"}}, // adapter: the vPIC snapshot, a SQLite file
		// adapter: Redis, shared by the replicas (limits, pacing, second cache tier, locks)
		{Pkg: "cluster", Role: archtest.RoleAdapter, Allow: []string{"vin", "ratelimit"}},

		{Pkg: "config", Role: archtest.RoleConfig, Allow: []string{"ratelimit", "vin"}}, // config: the environment, parsed and checked

		{Pkg: "httpapi", Role: archtest.RoleHTTP, Allow: []string{"vin", "ratelimit"}}, // HTTP: routes, handlers, wire format

		// HTTP from the caller's side: the Go client generated from
		// docs/openapi/vinsvc.yaml (make clients) for other teams; it imports no
		// package of the module.
		{Pkg: "client", Role: archtest.RoleHTTP},

		{Pkg: "cmd/vinsvc", Role: archtest.RoleMain, Allow: []string{archtest.AnyPackage}}, // main: run wires everything together
	},

	// fakes exports the tests' fakes of the upstreams to devstack (make
	// demo); no package of the service imports it.
	TestSupport: []string{"fakes"},

	// No function over 80 lines or a cyclomatic complexity of 25, no
	// exceptions; no interface of a core or http package over 12 methods.
	MaxLines:            80,
	MaxComplexity:       25,
	MaxInterfaceMethods: 12,

	// vin declares no interface (its ports are decoding's): no exemption
	// from TestNoDomainInterfaces, none from TestInterfaceSize.
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

// TestNoDomainInterfaces fails for an interface type that vin declares:
// interfaces are declared by their consumers.
func TestNoDomainInterfaces(t *testing.T) {
	t.Parallel()
	archtest.NoDomainInterfaces(t, arch)
}

// TestInterfaceSize fails for an interface of a core or http package with
// more than arch.MaxInterfaceMethods methods.
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
