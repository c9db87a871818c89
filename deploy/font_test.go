package deploy_test

import (
	"maps"
	"os"
	"path"
	"regexp"
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

var fontLicences = []string{
	"/usr/share/doc/fonts-droid-fallback/copyright",
	"/usr/share/common-licenses/Apache-2.0",
}

// debianImage is Debian 12, as the distroless runtime (static-debian12),
// slim, optionally pinned by digest.
var debianImage = regexp.MustCompile(`^debian:12(\.[0-9]+)?-slim(@sha256:[0-9a-f]{64})?$`)

// TestPDFFontInImage: patentsvc's image carries the PDF report's CJK font,
// installed from Debian by its fonts stage, root's and read-only, with its
// licence, at the path its ENV PDF_FONT_PATH names; no kustomization points
// PDF_FONT_PATH elsewhere or mounts a volume over the font.
func TestPDFFontInImage(t *testing.T) {
	st := stagesOf(t, "patentsvc")
	fonts := st.extra["fonts"]
	if !debianImage.MatchString(fonts.from) {
		t.Errorf("fonts FROM %s, want debian:12-slim (the Debian of the distroless runtime), optionally @sha256:...", fonts.from)
	}
	installed := false
	for _, in := range fonts.instr {
		if in.cmd == "RUN" && strings.Contains(in.args, "apt-get install") && slices.Contains(strings.Fields(in.args), fontPackage) {
			installed = true
		}
	}
	if !installed {
		t.Errorf("fonts stage: no RUN apt-get install %s", fontPackage)
	}

	copied := map[string]string{} // path in the fonts stage -> path in the image
	env := map[string]string{}
	for _, in := range st.runtime.instr {
		switch in.cmd {
		case "ENV":
			maps.Copy(env, envPairs(t, in.args))
		case "COPY":
			flags := map[string]string{}
			var paths []string
			for _, w := range strings.Fields(in.args) {
				if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "--") {
					flags[k] = v
				} else {
					paths = append(paths, w)
				}
			}
			if flags["--from"] != "fonts" {
				continue
			}
			if o, ok := flags["--chown"]; ok && !isRoot(o) {
				t.Errorf("runtime COPY %q: owned by %s; keep it root's (read-only for the service)", in.args, o)
			}
			if len(paths) != 2 || strings.HasSuffix(paths[1], "/") {
				t.Errorf("runtime COPY %q: want one file to one file path", in.args)
				continue
			}
			copied[path.Clean(paths[0])] = path.Clean(paths[1])
		}
	}
	dest, ok := copied[fontFile]
	if !ok {
		t.Fatalf("the runtime stage does not COPY --from=fonts %s", fontFile)
	}
	if env["PDF_FONT_PATH"] != dest {
		t.Errorf("runtime ENV PDF_FONT_PATH=%q, want %s (where the font is)", env["PDF_FONT_PATH"], dest)
	}
	for _, lic := range fontLicences {
		if _, ok := copied[lic]; !ok {
			t.Errorf("the runtime stage does not COPY --from=fonts %s: the font's licence must ship with it", lic)
		}
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
