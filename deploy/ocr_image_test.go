package deploy_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// debianSlim is the runtime base of both patentsvc images (and of no
// other): a Debian 12 slim tag, optionally a point release and a digest.
var debianSlim = regexp.MustCompile(`^debian:12(\.[0-9]+)?-slim(@sha256:[0-9a-f]{64})?$`)

// ocrPackages are what the OCR image installs besides patentsvc's
// packages: tesseract and its English data.
var ocrPackages = []string{"tesseract-ocr", "tesseract-ocr-eng"}

// TestOCRDockerfile checks deploy/docker/patentsvc-ocr.Dockerfile, the
// patentsvc image with tesseract (PDF_OCR): its builder is patentsvc's,
// instruction for instruction, so the two images run the same binary; its
// runtime stage is Debian 12 slim for the target platform with exactly
// patentsvc's packages (poppler-utils, the PDF engine, among them) and
// tesseract with its English data, installed without recommends and apt's
// lists removed, and otherwise patentsvc's runtime instruction for
// instruction: the same binary, user, port, entry point and PDF font; and
// the Makefile builds it.
func TestOCRDockerfile(t *testing.T) {
	const file = "patentsvc-ocr"
	stages := parseDockerfile(t, file)
	if len(stages) != 2 || stages[0].name != "build" {
		t.Fatalf("%s.Dockerfile: want two stages, build and the runtime", file)
	}
	build, final := stages[0], stages[1]
	ref := stagesOf(t, "patentsvc")
	if build.from != ref.build.from || build.platform != ref.build.platform || !slices.Equal(build.instr, ref.build.instr) {
		t.Errorf("%s.Dockerfile: the builder stage differs from patentsvc.Dockerfile's; keep them the same\n got: %s %v\nwant: %s %v", file, build.from, build.instr, ref.build.from, ref.build.instr)
	}
	d := builderStage(t, file, build)

	if !debianSlim.MatchString(final.from) || final.platform != "" {
		t.Errorf("runtime FROM --platform=%q %s, want debian:12-slim for the target platform", final.platform, final.from)
	}
	var user, expose, entry, binDest, install string
	env := map[string]string{}
	for _, in := range final.instr {
		switch in.cmd {
		case "USER":
			user = in.args
		case "EXPOSE":
			expose = in.args
		case "ENTRYPOINT":
			entry = in.args
		case "ENV":
			for k, v := range envPairs(t, in.args) {
				env[k] = v
			}
		case "RUN":
			install += in.args + "\n"
		case "COPY":
			f := strings.Fields(in.args)
			if slices.Contains(f, "--from=build") && f[len(f)-2] == d.out {
				binDest = f[len(f)-1]
			}
		}
	}
	for _, want := range []string{"apt-get install -y --no-install-recommends", " poppler-utils ", " tesseract-ocr ", " tesseract-ocr-eng ", "ca-certificates", "rm -rf /var/lib/apt/lists/*"} {
		if !strings.Contains(install, want) {
			t.Errorf("runtime RUN lacks %q:\n%s", want, install)
		}
	}
	// patentsvc's packages and tesseract's, no more, no fewer.
	want := append(slices.Clone(patentsvcPackages), ocrPackages...)
	got := checkAptInstall(t, "runtime stage", final, want).packages
	for _, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("runtime installs %s, which patentsvc's image does not (want %v)", p, want)
		}
	}
	// Everything but the install is patentsvc's runtime, in the same order.
	if a, b := withoutRUN(final.instr), withoutRUN(ref.runtime.instr); !slices.Equal(a, b) {
		t.Errorf("runtime instructions other than RUN differ from patentsvc.Dockerfile's; keep them the same\n got: %v\nwant: %v", a, b)
	}
	if binDest == "" || entry != fmt.Sprintf(`["%s"]`, binDest) {
		t.Errorf("runtime COPY --from=build %s to %q, ENTRYPOINT %s: want the binary copied and run in the exec form", d.out, binDest, entry)
	}
	if user != "65532:65532" {
		t.Errorf("USER %q, want 65532:65532, as in patentsvc's image", user)
	}
	if def := settingsTable(t, "patentsvc")["PORT"].def; expose != def {
		t.Errorf("EXPOSE %q, want PORT's default %s", expose, def)
	}
	if v, ok := env["PDF_OCR"]; ok && v != "auto" {
		t.Errorf("ENV PDF_OCR=%s: the OCR image exists to read scans", v)
	}
	// The same PDF report font as the default image.
	refEnv := map[string]string{}
	for _, in := range ref.runtime.instr {
		if in.cmd == "ENV" {
			for k, v := range envPairs(t, in.args) {
				refEnv[k] = v
			}
		}
	}
	if env["PDF_FONT_PATH"] != refEnv["PDF_FONT_PATH"] {
		t.Errorf("ENV PDF_FONT_PATH=%q, want patentsvc's image's %q", env["PDF_FONT_PATH"], refEnv["PDF_FONT_PATH"])
	}

	mk := string(mustRead(t, filepath.Join(repoRoot, "Makefile")))
	if want := `docker build --platform $(PLATFORM) -f deploy/docker/patentsvc-ocr.Dockerfile`; !strings.Contains(mk, want) {
		t.Errorf("Makefile lacks %q", want)
	}
}

// withoutRUN is a stage's instructions less its RUN lines.
func withoutRUN(instr []instruction) []instruction {
	return slices.DeleteFunc(slices.Clone(instr), func(in instruction) bool { return in.cmd == "RUN" })
}
