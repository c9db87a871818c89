package deploy_test

import (
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// The PDF report's CJK fallback font: the Debian package that ships it,
// where it puts it, and the licence files that go into the image with it.
const (
	fontPackage = "fonts-droid-fallback"
	fontFile    = "/usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf"
)

// fontLicences are the font's copyright file, which Debian slim keeps of
// every package it installs (its dpkg excludes /usr/share/doc/* but
// /usr/share/doc/*/copyright), and the Apache 2.0 text it refers to
// (base-files).
var fontLicences = []string{
	"/usr/share/doc/fonts-droid-fallback/copyright",
	"/usr/share/common-licenses/Apache-2.0",
}

// TestPDFFontInImage: patentsvc's image carries the PDF report's CJK font,
// installed from Debian by its runtime stage (root's and read-only, as a
// package's files are), with its licence, at the path its ENV
// PDF_FONT_PATH names; no kustomization points PDF_FONT_PATH elsewhere or
// mounts a volume over the font.
func TestPDFFontInImage(t *testing.T) {
	st := stagesOf(t, "patentsvc")
	if !debianSlim.MatchString(st.runtime.from) {
		t.Errorf("runtime FROM %s, want debian:12-slim (whose dpkg keeps the packages' copyright files)", st.runtime.from)
	}
	// How it installs is TestDockerfiles's.
	if pkgs := aptInstalls(st.runtime).packages; !slices.Contains(pkgs, fontPackage) {
		t.Errorf("runtime stage: apt-get install lacks %s (installs %v)", fontPackage, pkgs)
	}

	env := map[string]string{}
	for _, in := range st.runtime.instr {
		switch in.cmd {
		case "ENV":
			maps.Copy(env, envPairs(t, in.args))
		case "RUN":
			// Nothing removes the licence files the package brought.
			for cmd := range strings.SplitSeq(in.args, "&&") {
				w := strings.Fields(cmd)
				if len(w) == 0 || w[0] != "rm" {
					continue
				}
				for _, arg := range w[1:] {
					if strings.HasPrefix(arg, "-") {
						continue
					}
					for _, lic := range fontLicences {
						for p := lic; p != "/"; p = path.Dir(p) {
							if ok, _ := path.Match(path.Clean(arg), p); ok {
								t.Errorf("runtime RUN %q removes %s: the font's licence must ship with it", in.args, lic)
							}
						}
					}
				}
			}
		case "COPY", "ADD":
			// Nothing is laid over the package's font.
			f := strings.Fields(in.args)
			if dst := path.Clean(f[len(f)-1]); within(fontFile, dst) {
				t.Errorf("runtime %s %q writes over %s, the Debian package's font", in.cmd, in.args, fontFile)
			}
		}
	}
	dest := fontFile
	if env["PDF_FONT_PATH"] != dest {
		t.Errorf("runtime ENV PDF_FONT_PATH=%q, want %s (where %s puts the font)", env["PDF_FONT_PATH"], dest, fontPackage)
	}
	if _, ok := settingsTable(t, "patentsvc")["PDF_FONT_PATH"]; !ok {
		t.Error("docs/config/patentsvc.md has no PDF_FONT_PATH: the image sets a variable the service does not read")
	}

	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			if w.service != "patentsvc" {
				continue
			}
			c := w.container(t)
			if v, ok := containerEnv(t, b, c)["PDF_FONT_PATH"]; ok && strings.TrimSpace(v.value) != dest {
				t.Errorf("%s: PDF_FONT_PATH %q, want the image's font %s or unset", dir, v.value, dest)
			}
			if m, ok := mountFor(c, dest); ok {
				t.Errorf("%s: volume %s mounted at %s hides the image's font %s", dir, m.Name, m.MountPath, dest)
			}
		}
	}

	// The font the tests use (.ci/run installs the package) is the one the
	// image ships: same package, same path.
	if p := os.Getenv("TEST_PDF_FONT_PATH"); p != "" && p != fontFile {
		t.Errorf("TEST_PDF_FONT_PATH %s, want %s (the image's font)", p, fontFile)
	}
}
