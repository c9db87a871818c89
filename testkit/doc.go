// Package testkit is the root of the workspace's test-kit module. It holds
// no code itself: its packages are what the modules' tests need alike,
// written once (STYLE.md item 32), and nothing a service runs in
// production imports them.
//
//   - archtest: the architecture tests every module runs on itself: import
//     rules, function and interface size, where interfaces are declared,
//     the import graph in docs/architecture.md.
package testkit
