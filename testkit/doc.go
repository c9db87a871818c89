// Package testkit is the root of the workspace's test-kit module. It holds
// no code itself: its packages are what the modules' tests need alike,
// written once (STYLE.md item 32), and nothing a service runs in
// production imports them (the services' images take only this module's
// go.mod).
//
//   - archtest: the architecture tests every module runs on itself: import
//     rules, function and interface size, where interfaces are declared,
//     the import graph in docs/architecture.md.
//   - syncbuf: a buffer written by several goroutines or a child process
//     while the test reads it (a service's log), and waited on: WaitFor
//     wakes at each write, never polls.
//   - service: a service started for an end-to-end test, in the test's
//     process (Start: its serve function on the test's listener) or as a
//     child process (Exec: the port read from its start-up line); ready
//     when its probe paths answer 200, stopped with a check of how it
//     ended.
//   - fakehttp: the scaffolding of the recorded-answer fakes of the
//     upstreams (vpictest, serpapitest, llmtest): the calls received,
//     counted and waited for, scripted replies, added latency.
//   - wait: the one bounded polling wait, for state nothing announces (a
//     row another process's workers write, a server-side session): looks
//     at once, then after pauses doubling from 1 ms to 16 ms.
//
// Its tests wait on events or on synctest's clock, never on sleeps, as the
// tests that use it must.
package testkit
