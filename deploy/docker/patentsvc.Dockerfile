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
#
# Why Debian and not distroless static (issue 35; decisions.md, "patentsvc:
# PDFs read by a maintained engine"): patentsvc reads PDFs with poppler's
# programs, each run as a child process under
# `/bin/sh -c 'ulimit -v N && exec prog ...'` (the address-space ceiling,
# PDF_MAX_DECODED_MB plus the program's own) and killed at
# PDF_EXTRACT_TIMEOUT (patentsvc/internal/pdf/engine.go). So the image needs
# /bin/sh and poppler-utils, and poppler needs glibc, C++ and some 30
# packages of shared libraries (libpoppler, NSS, cairo, freetype,
# fontconfig, lcms2 and the image codecs libjpeg-turbo, OpenJPEG, libtiff,
# libpng, libwebp): distroless static has none of them. What comes with
# them: a shell, apt and dpkg, and those libraries, which now decode the
# PDF's own data (inside the child's ceiling and deadline, never in the
# service's process), patched by rebuilding on a newer debian:12-slim.
#
# The cost, estimated (no image was built where this was written): the
# packages `apt-get install --no-install-recommends` adds to debian:12-slim,
# as `apt-get -s` resolves them against a dpkg status holding the image's 88
# packages, summed by their Installed-Size (Debian 12.15 lists, November
# 2026). Installed-Size also counts the docs, man pages and translations
# Debian slim leaves out: the same packages' files on a full Debian, less
# those, come to 39 MB instead of 45 MB. debian:12-slim is 75 MB
# (docker-library/repo-info), the stripped binary 50 MB.
#   before, distroless static (2 MiB) + binary + the font (3.5 MB): about
#     55 MB (the "about 40 MB" of earlier docs was with a 35 MB binary);
#   now, debian:12-slim + 36 packages of 45 MB (poppler-utils and its
#     libraries 29 MB, ca-certificates with OpenSSL 9 MB, the font package
#     7 MB; tzdata is already there) + binary: about 170 MB.
# patentsvc-ocr.Dockerfile is this plus tesseract: about 250 MB.

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

# Runtime: Debian 12 slim for the target platform, with poppler's
# command-line programs (poppler-utils 22.12: pdftotext and pdftoppm),
# the CA certificates and time zones the search, LLM, PDF and S3 clients
# need, and the PDF report's CJK fallback font, Droid Sans Fallback
# (fonts-droid-fallback, Apache 2.0: Chinese, Japanese kana and kanji,
# Korean hangul; a single TrueType font, which gopdf embeds, where Noto Sans
# CJK's .ttc collection of CFF fonts cannot be). Debian slim keeps each
# package's copyright file (/usr/share/doc/<package>/copyright) and
# base-files the Apache 2.0 text (/usr/share/common-licenses/Apache-2.0).
# --no-install-recommends leaves out poppler-data (13 MB: the CMaps poppler
# needs for the text of CJK fonts a PDF does not embed) and
# fonts-noto-mono; .ci/run installs poppler-utils the same way. The same
# stage as patentsvc-ocr.Dockerfile's, without tesseract.
FROM debian:12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends poppler-utils ca-certificates tzdata fonts-droid-fallback \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/patentsvc /usr/local/bin/patentsvc
COPY --from=build --chown=65532:65532 /out/data /app/data
ENV PDF_FONT_PATH=/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf
WORKDIR /app
# Numeric and non-root, distroless's nonroot (no entry in /etc/passwd is
# needed), so that runAsNonRoot can verify it.
USER 65532:65532
# PORT's default. Probes are HTTP (GET $ROOT_PATH/livez, $ROOT_PATH/readyz).
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/patentsvc"]
