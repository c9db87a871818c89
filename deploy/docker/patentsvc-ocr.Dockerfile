# syntax=docker/dockerfile:1
#
# patentsvc-ocr: the patentsvc image with OCR, for deployments that analyse
# scanned patents without a text layer (PDF_OCR=auto reads them with
# tesseract; decisions.md, "The analyst's report (issue 12)"). The build
# context is the repository root:
#
#   docker build -f deploy/docker/patentsvc-ocr.Dockerfile --build-arg VERSION=1.0.0 \
#     -t ghcr.io/gatewayapis/patentsvc-ocr:1.0.0 .
#
# (or `make docker-patentsvc-ocr`). The same binary as patentsvc.Dockerfile's,
# built the same way (deploy/ocr_image_test.go checks that the builder stages
# match), on Debian 12 slim with tesseract instead of distroless static: the
# tesseract program needs glibc, C++ and some 60 shared libraries. The cost,
# from the Debian packages' Installed-Size: about 96 MB on top of
# debian:12-slim's 75 MB, so about 210 MB in all against about 40 MB for
# patentsvc (docs/patentsvc.md, "OCR of scanned PDFs"); and a larger attack
# surface: a shell, apt and dpkg, glibc, and the libraries tesseract
# links (leptonica and its image codecs, libarchive, libcurl, OpenSSL,
# libxml2, ICU, cairo and pango), patched by rebuilding on a newer
# debian:12-slim. patentsvc feeds tesseract only the PGM images it decodes
# itself, so the PDF's own image data never reaches those codecs.

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

# Runtime: Debian 12 slim for the target platform, with tesseract 5.3 and
# its English data (tesseract-ocr-eng; other languages are not used), the
# CA certificates and time zones distroless has, and the PDF report's CJK
# font (fonts-droid-fallback, Apache 2.0, as in patentsvc.Dockerfile).
# --no-install-recommends keeps tesseract's training tools out.
FROM debian:12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng ca-certificates tzdata fonts-droid-fallback \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/patentsvc /usr/local/bin/patentsvc
COPY --from=build --chown=65532:65532 /out/data /app/data
ENV PDF_FONT_PATH=/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf
WORKDIR /app
# The same numeric non-root user as patentsvc's distroless image (no entry
# in /etc/passwd is needed).
USER 65532:65532
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/patentsvc"]
