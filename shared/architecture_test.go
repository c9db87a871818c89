package shared_test

// The architecture tests of the shared module: which of its packages may
// import which (TestImportRules), how large a function may grow
// (TestFunctionSize), and where interfaces are declared and how large they
// may grow (TestNoDomainInterfaces, TestInterfaceSize). The checks are
// testkit/archtest's, the same as the services'; this file holds the
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
	Module: "github.com/gatewayapis/shared",
	Name:   "shared",

	// Every package of the module with its role and the packages of the
	// module it may import, as they are. The module has no domain of its
	// own: the packages that are rules over text and time, and import the
	// standard library only, have the domain role, whose rule is just that
	// (and no interface declared). Test kits (apidocs/apidocstest,
	// observe/otlptest, reqbody/reqbodytest) are not listed: they may
	// import anything.
	Rules: []archtest.Rule{
		{Pkg: "redact", Role: archtest.RoleDomain}, // the redaction rules: errors, links and upstream text fit for logs
		{Pkg: "retry", Role: archtest.RoleDomain},  // the back-off rule of outbound requests: jitter or Retry-After

		{Pkg: "httperr", Role: archtest.RoleHTTP, Allow: []string{"redact", "requestid"}},            // the error type handlers return, the central Echo error handler
		{Pkg: "requestid", Role: archtest.RoleHTTP},                                                  // the X-Request-Id middleware, the request-scoped logger
		{Pkg: "observe", Role: archtest.RoleHTTP, Allow: []string{"httperr", "redact", "requestid"}}, // access log, metrics, panic recovery, tracing, the JSON log handler
		{Pkg: "reqbody", Role: archtest.RoleHTTP, Allow: []string{"httperr"}},                        // request bodies unreadable for the client's fault answered 400
		{Pkg: "route", Role: archtest.RoleHTTP},                                                      // route middleware applied once, at registration
		{Pkg: "graceful", Role: archtest.RoleHTTP},                                                   // serving an http.Server until a context ends, then draining it
		{Pkg: "apidocs", Role: archtest.RoleHTTP},                                                    // the API reference: the OpenAPI document and Swagger UI, embedded
	},

	// The services' limits: no function over 80 lines or a cyclomatic
	// complexity of 25, no interface of an http package over 12 methods.
	MaxLines:            80,
	MaxComplexity:       25,
	MaxInterfaceMethods: 12,
}

// TestImportRules checks every package's imports of the module's own
// packages against arch.Rules, and that redact and retry import the
// standard library only.
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

// TestNoDomainInterfaces fails for an interface type that redact or retry
// declares.
func TestNoDomainInterfaces(t *testing.T) {
	t.Parallel()
	archtest.NoDomainInterfaces(t, arch)
}

// TestInterfaceSize fails for an interface of an http package with more
// than arch.MaxInterfaceMethods methods.
func TestInterfaceSize(t *testing.T) {
	t.Parallel()
	archtest.InterfaceSize(t, arch)
}
