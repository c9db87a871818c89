// Package deploy holds no code: it is the module of the tests that prove
// the container images and Kubernetes manifests beside it.
//
// The tests render every kustomization under k8s/ with krusty (the library
// behind `kubectl apply -k`), decode every resource strictly into its
// k8s.io/api type, and check the rules the services set for their
// deployment: the settings tables in docs/config, the probe paths, the
// ports, the security context, the shutdown budget, the writable paths,
// the Secrets documented in README.md. They also build each service as
// its Dockerfile does (from what .dockerignore lets into the context, with
// the Dockerfile's own environment and go build line), check that the
// binary is static and prints its version, and run it, alone and with
// every overlay's settings, until it answers its probes and exits 0 on
// SIGTERM.
package deploy
