# syntax=docker/dockerfile:1
#
# patentsvc image. The build context is the repository root (STYLE.md item 1):
#
#   docker build -f deploy/docker/patentsvc.Dockerfile --build-arg VERSION=1.0.0 \
#     -t ghcr.io/gatewayapis/patentsvc:1.0.0 .
#
# (or `make docker-patentsvc`). deploy/docker_test.go copies what .dockerignore
# lets through, lays it out as the COPY lines below do and runs this file's
# `go build` line on it, so keep the build a single `go build` command.

# Builder: the Go release of patentsvc/go.mod's go directive. GOTOOLCHAIN=local
# makes a mismatch fail here instead of fetching another toolchain.
# It runs on the build machine's platform and cross-compiles for the target
# (docker build --platform, buildx multi-platform): no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
WORKDIR /src/patentsvc
# Module files first, so the download layer is reused while only code changes.
# patentsvc/go.mod replaces github.com/gatewayapis/shared with ../shared and
# github.com/gatewayapis/testkit with ../testkit: the module graph needs both
# go.mod files. testkit is the tests' kit, no package of the binary imports
# it, so its go.mod and go.sum are all the build takes of it.
COPY shared/go.mod shared/go.sum /src/shared/
COPY testkit/go.mod testkit/go.sum /src/testkit/
COPY patentsvc/go.mod patentsvc/go.sum /src/patentsvc/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY shared/ /src/shared/
COPY patentsvc/ /src/patentsvc/
ARG VERSION=dev
# Set by BuildKit from --platform (default: the build machine's).
ARG TARGETOS
ARG TARGETARCH
# The flags of `make build`: static (CGO_ENABLED=0), no local paths, no
# symbol tables, the version for `patentsvc version` and the start-up log.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/patentsvc ./cmd/patentsvc
# An empty data/ owned by the runtime user: without DATABASE_URL the SQLite
# file (data/patentsvc.db) and the PDF store (STORAGE_DIR, data/patents) are
# relative to the working directory, so `docker run` without settings works.
# Kubernetes sets DATABASE_URL (PostgreSQL) and mounts a volume for STORAGE_DIR.
RUN mkdir -p /out/data

# Fonts: the PDF report's CJK fallback font (PDF_FONT_PATH), Droid Sans
# Fallback of Debian 12's fonts-droid-fallback (Apache 2.0; Chinese, Japanese
# kana and kanji, Korean hangul; 3.4 MB). It is a single TrueType font, which
# gopdf embeds; Noto Sans CJK (fonts-noto-cjk) is a collection of CFF fonts
# (.ttc), which it cannot. Its copyright file and the Apache 2.0 text go into
# the image with it. A font is the same on every platform: the stage runs
# natively. The tag follows Debian 12's point releases; the font package has
# not changed since 2016.
FROM --platform=$BUILDPLATFORM debian:12-slim AS fonts
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-droid-fallback \
    && rm -rf /var/lib/apt/lists/*

# Runtime: distroless static: no shell, no libc, CA certificates and tzdata
# (the search, LLM, PDF and S3 clients need them), user nonroot =
# 65532:65532. Pinned by the digest public Dockerfiles pin for this tag (it
# could not be checked against the registry where this was written); refresh
# it with `crane digest gcr.io/distroless/static-debian12:nonroot` and keep
# both Dockerfiles in step.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/patentsvc /usr/local/bin/patentsvc
COPY --from=build --chown=65532:65532 /out/data /app/data
# The CJK font, root's and read-only, at its Debian path (the tests' default).
COPY --from=fonts /usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf /usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf
COPY --from=fonts /usr/share/doc/fonts-droid-fallback/copyright /usr/share/doc/fonts-droid-fallback/copyright
COPY --from=fonts /usr/share/common-licenses/Apache-2.0 /usr/share/common-licenses/Apache-2.0
ENV PDF_FONT_PATH=/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf
WORKDIR /app
USER 65532:65532
# PORT's default. Probes are HTTP (GET $ROOT_PATH/livez, $ROOT_PATH/readyz):
# there is no shell.
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/patentsvc"]
