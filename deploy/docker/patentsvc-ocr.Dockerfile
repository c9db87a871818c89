# syntax=docker/dockerfile:1
#
# patentsvc-ocr: the patentsvc image with OCR, for deployments that analyse
# scanned patents without a text layer (PDF_OCR=auto renders each such page
# with poppler's pdftoppm and reads it with tesseract; decisions.md, "The
# analyst's report (issue 12)"). The build context is the repository root:
#
#   docker build -f deploy/docker/patentsvc-ocr.Dockerfile --build-arg VERSION=1.0.0 \
#     -t ghcr.io/gatewayapis/patentsvc-ocr:1.0.0 .
#
# (or `make docker-patentsvc-ocr`). The same binary as patentsvc.Dockerfile's,
# built the same way (deploy/ocr_image_test.go checks that the builder stages
# match), on the same Debian 12 slim runtime with the same packages, plus
# tesseract 5.3 and its English data.
#
# Both need poppler-utils (issue 35; decisions.md, "patentsvc: PDFs read by
# a maintained engine"): the PDF engine is poppler's pdftotext and
# pdftoppm, each a child process under `/bin/sh -c 'ulimit -v N && exec
# prog ...'` (an address-space ceiling) and killed at the deadline
# (patentsvc/internal/pdf/engine.go). tesseract needs glibc, C++ and some
# 60 shared libraries: leptonica and its image codecs, libarchive, libcurl,
# OpenSSL, libxml2, ICU, cairo and pango. It is only given the grey images
# pdftoppm rendered, on its standard input, so the PDF's own image data
# reaches poppler's codecs (bounded as above), never tesseract's. All of
# them, and a shell, apt and dpkg, are patched by rebuilding on a newer
# debian:12-slim.
#
# The cost, estimated as in patentsvc.Dockerfile (the packages
# `apt-get -s install --no-install-recommends` adds to debian:12-slim's 88,
# summed by their Installed-Size, Debian 12.15 lists, November 2026; slim's
# leaving out docs and translations makes the real figure about 9% smaller):
#   before, tesseract without poppler: 65 packages of 111 MB (ICU 36 MB,
#     tesseract's eng and osd data 14 MB), so 75 MB of debian:12-slim +
#     111 MB + the 50 MB binary: about 235 MB (earlier docs said 210 MB:
#     96 MB of packages and a 35 MB binary);
#   now, with poppler-utils: 6 more packages (poppler-utils, libpoppler126,
#     NSS and NSPR, SQLite, lcms2) of 12 MB: 71 packages of 123 MB, about
#     250 MB in all, against about 170 MB for patentsvc.

# Builder: as in patentsvc.Dockerfile.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
WORKDIR /src/patentsvc
COPY shared/go.mod shared/go.sum /src/shared/
COPY testkit/go.mod testkit/go.sum /src/testkit/
COPY patentsvc/go.mod patentsvc/go.sum /src/patentsvc/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY shared/ /src/shared/
COPY patentsvc/ /src/patentsvc/
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/patentsvc ./cmd/patentsvc
RUN mkdir -p /out/data

# Runtime: patentsvc.Dockerfile's, with tesseract-ocr and tesseract-ocr-eng
# (other languages are not used) added to its packages: poppler-utils, the
# CA certificates, the time zones and the PDF report's CJK font.
# --no-install-recommends leaves out 31 MB of what the libraries recommend
# (poppler-data, as there, shared-mime-info, GLib's data, the public
# suffix list, Kerberos locales, SASL modules).
FROM debian:12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends poppler-utils tesseract-ocr tesseract-ocr-eng ca-certificates tzdata fonts-droid-fallback \
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
