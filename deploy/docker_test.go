package deploy_test

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/service"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// testVersion is stamped into the binaries the tests build.
const testVersion = "test-1.2.3"

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
}

// stage is one FROM ... and the instructions under it.
type stage struct {
	from     string
	platform string // FROM --platform=...
	name     string
	instr    []instruction
}

// parseDockerfile reads the instructions of deploy/docker/<service>.Dockerfile.
// It understands what these Dockerfiles use: comments, `\` continuations,
// FROM ... AS name.
func parseDockerfile(t *testing.T, service string) []stage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("docker", service+".Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			var s stage
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if p, ok := strings.CutPrefix(f[0], "--platform="); ok {
					s.platform = p
				} else {
					t.Fatalf("%s.Dockerfile: FROM flag %s not understood by the test", service, f[0])
				}
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("%s.Dockerfile: FROM without an image", service)
			}
			s.from = f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			return
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s.Dockerfile: %s before the first FROM", service, in.cmd)
			}
			return
		}
		stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, in)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	if len(stages) < 2 {
		t.Fatalf("%s.Dockerfile: %d stages, want a builder and a runtime stage", service, len(stages))
	}
	return stages
}

// extraStages are the stages each Dockerfile has besides its builder
// (AS build) and its runtime stage (the last one).
// patentsvc has none: its runtime installs the PDF report's font from
// Debian itself (font_test.go).
var extraStages = map[string][]string{
	"vinsvc": {"snapshot"}, // the vPIC snapshot (tools/vpic-snapshot.sh)
}

// dockerStages is a Dockerfile's stages by role.
type dockerStages struct {
	build, runtime stage
	extra          map[string]stage // by name
}

// stagesOf parses deploy/docker/<service>.Dockerfile and sorts its stages:
// the runtime is the last, the builder is named build, and every other
// stage is one of extraStages[service], each exactly once.
func stagesOf(t *testing.T, service string) dockerStages {
	t.Helper()
	stages := parseDockerfile(t, service)
	ds := dockerStages{runtime: stages[len(stages)-1], extra: map[string]stage{}}
	seen := map[string]bool{}
	for _, s := range stages[:len(stages)-1] {
		if seen[s.name] {
			t.Fatalf("%s.Dockerfile: two stages named %q", service, s.name)
		}
		seen[s.name] = true
		switch {
		case s.name == "build":
			ds.build = s
		case slices.Contains(extraStages[service], s.name):
			ds.extra[s.name] = s
		default:
			t.Fatalf("%s.Dockerfile: stage %q (FROM %s) is not one the test knows: want build, %v and the runtime last", service, s.name, s.from, extraStages[service])
		}
	}
	if !seen["build"] {
		t.Fatalf("%s.Dockerfile: no builder stage (FROM ... AS build) before the runtime stage", service)
	}
	for _, name := range extraStages[service] {
		if !seen[name] {
			t.Fatalf("%s.Dockerfile: no stage %q", service, name)
		}
	}
	return ds
}

// splitWords splits a shell command line into words: white space
// separates, double and single quotes group. Enough for the go build line.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(";&|<>`()", r):
			return nil, fmt.Errorf("shell syntax %q is not supported here", r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// envPairs parses ENV K=V K=V (no quoting needed in these Dockerfiles).
func envPairs(t *testing.T, args string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range strings.Fields(args) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("ENV %q: use the K=V form", args)
		}
		out[k] = v
	}
	return out
}

// dockerBuild is what the builder stage does, as the test replays it.
type dockerBuild struct {
	env      map[string]string
	workdir  string
	copies   [][2]string       // context source, absolute destination
	args     []string          // go build arguments, after "go build"
	out      string            // the -o path in the image
	version  bool              // ARG VERSION is declared before go build, which reads ${VERSION}
	declared map[string]bool   // the ARGs declared before go build
	runEnv   map[string]string // NAME=value words before go build on its RUN line
}

func builderStage(t *testing.T, service string, s stage) dockerBuild {
	t.Helper()
	var d dockerBuild
	d.env = map[string]string{}
	d.declared = map[string]bool{}
	d.runEnv = map[string]string{}
	for _, in := range s.instr {
		switch in.cmd {
		case "ENV":
			for k, v := range envPairs(t, in.args) {
				d.env[k] = v
			}
		case "WORKDIR":
			d.workdir = in.args
		case "ARG":
			if d.args != nil {
				break // declared after go build: not seen by it
			}
			name, _, _ := strings.Cut(in.args, "=")
			d.declared[name] = true
			if name == "VERSION" {
				d.version = true
			}
		case "COPY":
			f := strings.Fields(in.args)
			if slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") }) {
				t.Fatalf("%s.Dockerfile: builder COPY %q: flags not replayed by the test", service, in.args)
			}
			dst := f[len(f)-1]
			if !strings.HasPrefix(dst, "/") || !strings.HasSuffix(dst, "/") {
				t.Fatalf("%s.Dockerfile: COPY destination %q: want an absolute directory ending in /", service, dst)
			}
			for _, src := range f[:len(f)-1] {
				d.copies = append(d.copies, [2]string{src, dst})
			}
		case "RUN":
			words, err := splitWords(in.args)
			if err != nil {
				if strings.Contains(in.args, "go build") {
					t.Fatalf("%s.Dockerfile: RUN %q: %v; keep the build one plain go build command", service, in.args, err)
				}
				continue
			}
			for len(words) > 0 && strings.HasPrefix(words[0], "--mount=") {
				words = words[1:]
			}
			runEnv := map[string]string{}
			for len(words) > 0 {
				k, v, ok := strings.Cut(words[0], "=")
				if !ok || k == "" || strings.ContainsAny(k, "-/.$") {
					break
				}
				runEnv[k] = v
				words = words[1:]
			}
			if len(words) < 2 || words[0] != "go" || words[1] != "build" {
				continue
			}
			d.runEnv = runEnv
			if d.args != nil {
				t.Fatalf("%s.Dockerfile: two go build lines", service)
			}
			d.args = words[2:]
			for i, w := range d.args {
				if w == "-o" && i+1 < len(d.args) {
					d.out = d.args[i+1]
				}
			}
		}
	}
	if d.args == nil || d.out == "" || d.workdir == "" {
		t.Fatalf("%s.Dockerfile: builder needs WORKDIR and one `go build ... -o PATH` line", service)
	}
	return d
}

// goDirective reads the go directive of <service>/go.mod.
func goDirective(t *testing.T, service string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, service, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s/go.mod: no go directive", service)
	}
	return string(m[1])
}

var distroless = regexp.MustCompile(`^gcr\.io/distroless/static-debian12:nonroot@sha256:[0-9a-f]{64}$`)

// patentsvcPackages are the Debian packages patentsvc's runtime installs
// (and the OCR image's, with tesseract): poppler's programs, which the PDF
// engine runs as child processes under /bin/sh with a ulimit (issue 35;
// Debian slim has the shell, dash); the CA certificates and time zones the
// search, LLM, PDF and S3 clients need; the PDF report's CJK font.
var patentsvcPackages = []string{"poppler-utils", "ca-certificates", "tzdata", fontPackage}

// runtimeBases is what each service's runtime stage is built on, and the
// packages it must install there (none: no RUN at all).
var runtimeBases = map[string]struct {
	from     *regexp.Regexp
	want     string
	packages []string
}{
	"vinsvc":    {distroless, "gcr.io/distroless/static-debian12:nonroot pinned by digest", nil},
	"patentsvc": {debianSlim, "debian:12-slim (poppler needs a shell and glibc)", patentsvcPackages},
}

// aptRun is what a stage's RUN lines do with apt-get.
type aptRun struct {
	packages     []string // named by apt-get install
	installs     int      // apt-get install commands
	noRecommends bool     // every one of them has -y and --no-install-recommends
	fresh        bool     // each runs after apt-get update in its RUN
	listsRemoved bool     // each RUN that installs ends by removing /var/lib/apt/lists/*
	other        []string // RUN lines that do not install
}

// aptInstalls reads the stage's RUN lines as `apt-get update && apt-get
// install ... && rm -rf /var/lib/apt/lists/*` chains.
func aptInstalls(s stage) aptRun {
	a := aptRun{noRecommends: true, fresh: true, listsRemoved: true}
	for _, in := range s.instr {
		if in.cmd != "RUN" {
			continue
		}
		updated, installed, removed := false, false, false
		for cmd := range strings.SplitSeq(in.args, "&&") {
			w := strings.Fields(cmd)
			switch {
			case len(w) >= 2 && w[0] == "apt-get" && w[1] == "update":
				updated = true
			case len(w) >= 2 && w[0] == "apt-get" && slices.Contains(w, "install"):
				installed = true
				a.installs++
				a.fresh = a.fresh && updated
				a.noRecommends = a.noRecommends && slices.Contains(w, "-y") && slices.Contains(w, "--no-install-recommends")
				after := w[slices.Index(w, "install")+1:]
				for _, p := range after {
					if !strings.HasPrefix(p, "-") {
						a.packages = append(a.packages, p)
					}
				}
				removed = false // the lists must go after the last install
			case len(w) >= 3 && w[0] == "rm" && w[1] == "-rf" && slices.Contains(w, "/var/lib/apt/lists/*"):
				removed = true
			}
		}
		if !installed {
			a.other = append(a.other, in.args)
			continue
		}
		a.listsRemoved = a.listsRemoved && removed
	}
	if a.installs == 0 {
		a.noRecommends, a.fresh, a.listsRemoved = false, false, false
	}
	return a
}

// checkAptInstall fails unless the stage installs every package of want
// with apt-get, without recommends, from freshly updated lists that the
// same RUN removes (so that no layer keeps them), and runs nothing else.
func checkAptInstall(t *testing.T, what string, s stage, want []string) aptRun {
	t.Helper()
	a := aptInstalls(s)
	for _, p := range want {
		if !slices.Contains(a.packages, p) {
			t.Errorf("%s: apt-get install lacks %s (installs %v)", what, p, a.packages)
		}
	}
	if a.installs == 0 {
		return a
	}
	if !a.noRecommends {
		t.Errorf("%s: apt-get install without -y --no-install-recommends: recommended packages would come too", what)
	}
	if !a.fresh {
		t.Errorf("%s: apt-get install not preceded by apt-get update in the same RUN: a cached layer's lists would go stale", what)
	}
	if !a.listsRemoved {
		t.Errorf("%s: the RUN that installs does not end with rm -rf /var/lib/apt/lists/*: the lists would stay in the layer", what)
	}
	for _, r := range a.other {
		t.Errorf("%s: RUN %q installs nothing; the runtime stage runs apt-get alone", what, r)
	}
	return a
}

func TestDockerfiles(t *testing.T) {
	for _, service := range services {
		t.Run(service, func(t *testing.T) {
			st := stagesOf(t, service)
			build, final := st.build, st.runtime
			if want := "golang:" + goDirective(t, service); build.from != want && !strings.HasPrefix(build.from, want+"@") && !strings.HasPrefix(build.from, want+"-") {
				t.Errorf("builder FROM %s, want %s (the go directive of %s/go.mod)", build.from, want, service)
			}
			d := builderStage(t, service, build)
			for k, v := range map[string]string{"GOWORK": "off", "CGO_ENABLED": "0", "GOTOOLCHAIN": "local"} {
				if d.env[k] != v {
					t.Errorf("builder ENV %s=%q, want %q", k, d.env[k], v)
				}
			}
			// The builder runs natively and cross-compiles for the target
			// platform that BuildKit passes in.
			if build.platform != "$BUILDPLATFORM" {
				t.Errorf("builder FROM --platform=%q, want $BUILDPLATFORM (cross-compile, no emulation)", build.platform)
			}
			if final.platform != "" {
				t.Errorf("runtime FROM --platform=%q: the runtime stage must follow the target platform", final.platform)
			}
			// The other stages make files that are the same for every
			// target platform: they run natively too.
			for name, s := range st.extra {
				if s.platform != "$BUILDPLATFORM" {
					t.Errorf("stage %s FROM --platform=%q, want $BUILDPLATFORM (its output does not depend on the target)", name, s.platform)
				}
			}
			for k, v := range map[string]string{"GOOS": "$TARGETOS", "GOARCH": "$TARGETARCH"} {
				if d.runEnv[k] != v && d.runEnv[k] != "${"+v[1:]+"}" {
					t.Errorf("go build runs with %s=%q, want %s", k, d.runEnv[k], v)
				}
				if !d.declared[v[1:]] {
					t.Errorf("builder declares no ARG %s before go build: %s would be empty", v[1:], k)
				}
			}
			for k := range d.runEnv {
				if k != "GOOS" && k != "GOARCH" {
					t.Errorf("go build line sets %s, which the test does not replay; use ENV", k)
				}
			}
			if !d.version {
				t.Error("builder declares no ARG VERSION: --build-arg VERSION would not reach go build")
			}
			if d.workdir != "/src/"+service {
				t.Errorf("builder WORKDIR %s, want /src/%s (the module, with shared beside it)", d.workdir, service)
			}
			if len(d.args) < 4 || !slices.Equal(d.args[:3], []string{"-trimpath", "-ldflags", "-s -w -X main.version=${VERSION}"}) {
				t.Errorf("go build %q, want -trimpath -ldflags \"-s -w -X main.version=${VERSION}\" first (the Makefile's flags)", d.args)
			}
			if last := d.args[len(d.args)-1]; last != "./cmd/"+service {
				t.Errorf("go build builds %s, want ./cmd/%s", last, service)
			}

			base := runtimeBases[service]
			if base.from == nil {
				t.Fatalf("no runtime base known for %s", service)
			}
			if !base.from.MatchString(final.from) {
				t.Errorf("runtime FROM %s, want %s", final.from, base.want)
			}
			if base.packages != nil {
				checkAptInstall(t, "runtime stage", final, base.packages)
			}
			var user, expose, entry, binDest string
			for _, in := range final.instr {
				switch in.cmd {
				case "USER":
					user = in.args
				case "EXPOSE":
					expose = in.args
				case "ENTRYPOINT":
					entry = in.args
				case "COPY":
					f := strings.Fields(in.args)
					if slices.Contains(f, "--from=build") && f[len(f)-2] == d.out {
						binDest = f[len(f)-1]
					}
				case "RUN":
					if base.packages == nil {
						t.Errorf("runtime stage RUN %q: distroless has no shell", in.args)
					}
				}
			}
			if binDest == "" {
				t.Errorf("runtime stage does not COPY --from=build %s", d.out)
			} else if want := fmt.Sprintf(`["%s"]`, binDest); entry != want {
				t.Errorf("ENTRYPOINT %s, want %s (the exec form: the service is PID 1 and gets SIGTERM)", entry, want)
			}
			if user != "65532:65532" && user != "65532" {
				t.Errorf("USER %q, want 65532:65532 (nonroot, numeric so runAsNonRoot can verify it)", user)
			}
			if def := settingsTable(t, service)["PORT"].def; expose != def {
				t.Errorf("EXPOSE %q, want PORT's default %s", expose, def)
			}
		})
	}
	// The Makefile builds with the same flags and has the image targets.
	mk := string(mustRead(t, filepath.Join(repoRoot, "Makefile")))
	for _, want := range []string{
		`LDFLAGS  := -s -w -X main.version=$(VERSION)`,
		`CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"`,
		`docker build --platform $(PLATFORM) -f deploy/docker/vinsvc.Dockerfile`,
		`docker build --platform $(PLATFORM) -f deploy/docker/patentsvc.Dockerfile`,
		`kubectl apply -k deploy/k8s/overlays/$(OVERLAY)`,
		`@tools/vpic-snapshot.sh "$(VPIC_SNAPSHOT_PATH)"`,
	} {
		if !strings.Contains(mk, want) {
			t.Errorf("Makefile lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^MODULES\s*:=.*\bdeploy\b`).MatchString(mk) {
		t.Error("Makefile MODULES lacks deploy: make test would skip these tests")
	}
	// Every module of the workspace is in MODULES: make test, vet, lint and
	// tidy loop over that list alone (go test ./... at the root reaches no
	// module).
	modules := strings.Fields(regexp.MustCompile(`(?m)^MODULES\s*:=(.*)$`).FindStringSubmatch(mk)[1])
	work := mustRead(t, filepath.Join(repoRoot, "go.work"))
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:use\s+)?\./(\S+)\s*$`).FindAllSubmatch(work, -1) {
		if !slices.Contains(modules, string(m[1])) {
			t.Errorf("Makefile MODULES (%v) lacks %s, a module of go.work: make test would skip its tests", modules, m[1])
		}
	}
}

// localReplacements returns the directories, relative to the service's
// module, of the modules <service>/go.mod replaces with a directory of the
// repository ("../shared", "../testkit").
func localReplacements(t *testing.T, service string) []string {
	t.Helper()
	raw := mustRead(t, filepath.Join(repoRoot, service, "go.mod"))
	var dirs []string
	for _, m := range regexp.MustCompile(`(?m)^(?:replace)?\s*\S+(?:\s+v\S+)?\s+=>\s+(\.\.?/\S+)\s*$`).FindAllSubmatch(raw, -1) {
		dirs = append(dirs, string(m[1]))
	}
	return dirs
}

// TestDockerfilesCopyModuleFiles: every module a service's go.mod replaces
// with a directory of the repository has its go.mod and go.sum copied
// beside the service's module before `go mod download`, which reads the
// whole module graph: a module the service's tests alone use (testkit) is
// in it too, and without its go.mod neither the download nor the build
// finds the graph. .dockerignore must let both files into the context.
func TestDockerfilesCopyModuleFiles(t *testing.T) {
	pm := contextMatcher(t)
	for _, file := range []string{"vinsvc", "patentsvc", "patentsvc-ocr"} {
		t.Run(file, func(t *testing.T) {
			service := strings.TrimSuffix(file, "-ocr")
			dirs := localReplacements(t, service)
			if !slices.Contains(dirs, "../shared") || !slices.Contains(dirs, "../testkit") {
				t.Fatalf("%s/go.mod replaces %v; the test expects ../shared and ../testkit among them", service, dirs)
			}
			var build stage
			for _, s := range parseDockerfile(t, file) {
				if s.name == "build" {
					build = s
				}
			}
			d := builderStage(t, file, build)
			root := t.TempDir()
			copied := map[string]bool{} // "src dst" of the COPY lines before the download
			download := false
			for _, in := range build.instr {
				if in.cmd == "RUN" && strings.Contains(in.args, "go mod download") {
					download = true
					break
				}
				if in.cmd == "COPY" {
					f := strings.Fields(in.args)
					for _, src := range f[:len(f)-1] {
						copied[path.Clean(src)+" "+f[len(f)-1]] = true
						copyFromContext(t, pm, root, src, f[len(f)-1])
					}
				}
			}
			if !download {
				t.Fatalf("%s.Dockerfile: no `go mod download` in the builder", file)
			}
			// The download step on what the COPY lines before it lay out,
			// with the stage's ENV (GOWORK=off), from the local module
			// cache or the environment's proxy.
			cmd := exec.Command(goTool(t), "mod", "download")
			cmd.Dir = filepath.Join(root, filepath.FromSlash(d.workdir))
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
				k, _, _ := strings.Cut(kv, "=")
				_, set := d.env[k]
				return set || k == "GOFLAGS"
			})
			for k, v := range d.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("go mod download (in %s, on the module files %s.Dockerfile copies first): %v\n%s", d.workdir, file, err, out)
			}
			for _, dir := range append(dirs, "../"+service) {
				mod := path.Clean(path.Join(service, dir))
				for _, name := range []string{"go.mod", "go.sum"} {
					src := mod + "/" + name
					if !copied[src+" /src/"+mod+"/"] {
						t.Errorf("%s.Dockerfile: no COPY %s to /src/%s/ before go mod download (%s/go.mod replaces a module with %s)", file, src, mod, service, dir)
					}
					if excluded, err := pm.MatchesOrParentMatches(src); err != nil || excluded {
						t.Errorf(".dockerignore keeps %s out of the build context (%v)", src, err)
					}
				}
			}
		})
	}
}

// snapshotScript fetches vinsvc's vPIC snapshot: run by `make
// vpic-snapshot`, .ci/run and the image's snapshot stage.
const snapshotScript = "tools/vpic-snapshot.sh"

// snapshotMemory is the least memory a vinsvc container may request: the
// service holds the snapshot's decoding tables in memory (about 80 MiB
// resident once loaded; more while it loads).
var snapshotMemory = resource.MustParse("128Mi")

// nodeImage is the snapshot stage's base: a Node.js release tag, as the
// builder names a Go release, optionally pinned by digest too. (What the
// stage produces is pinned by the script's hashes whatever the image.)
var nodeImage = regexp.MustCompile(`^node:[0-9]+\.[0-9]+\.[0-9]+-[a-z]+(-slim)?(@sha256:[0-9a-f]{64})?$`)

// snapshotPins reads the pinned release and hashes at the top of the script.
func snapshotPins(t *testing.T) (version, tarballSHA, dbSHA string) {
	t.Helper()
	raw := mustRead(t, filepath.Join(repoRoot, filepath.FromSlash(snapshotScript)))
	pin := func(name, pattern string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(` + pattern + `)$`).FindSubmatch(raw)
		if m == nil {
			t.Fatalf("%s: no line %s=%s", snapshotScript, name, pattern)
		}
		return string(m[1])
	}
	return pin("VPIC_CORGI_VERSION", `[0-9]+\.[0-9]+\.[0-9]+`), pin("VPIC_TARBALL_SHA256", `[0-9a-f]{64}`), pin("VPIC_DB_SHA256", `[0-9a-f]{64}`)
}

// isRoot reports whether a COPY --chown value is root (user and group).
func isRoot(owner string) bool {
	u, g, _ := strings.Cut(owner, ":")
	return (u == "0" || u == "root") && (g == "" || g == "0" || g == "root")
}

// within reports whether p is dir or below it (both absolute, clean).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// TestVPICSnapshotInImage: vinsvc's image carries the pinned vPIC snapshot,
// fetched by its snapshot stage with tools/vpic-snapshot.sh, root's and
// read-only, at the path the image's ENV and every kustomization's
// VPIC_SNAPSHOT_PATH name, and off every volume (a volume mounted there
// would hide it, and a writable one would let the service change it).
func TestVPICSnapshotInImage(t *testing.T) {
	st := stagesOf(t, "vinsvc")
	snap := st.extra["snapshot"]
	if !nodeImage.MatchString(snap.from) {
		t.Errorf("snapshot FROM %s, want a Node.js release tag (node:X.Y.Z-<debian>-slim), optionally @sha256:...", snap.from)
	}
	_, _, dbSHA := snapshotPins(t)

	// The stage copies the script in from the context and runs it with
	// the output path.
	pm := contextMatcher(t)
	copied := map[string]string{} // path in the stage -> context path
	var out string
	for _, in := range snap.instr {
		f := strings.Fields(in.args)
		switch in.cmd {
		case "COPY":
			if slices.ContainsFunc(f, func(w string) bool { return strings.HasPrefix(w, "--") }) {
				t.Errorf("snapshot COPY %q: flags not expected", in.args)
				continue
			}
			dst := f[len(f)-1]
			for _, src := range f[:len(f)-1] {
				src = path.Clean(src)
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(src))); err != nil {
					t.Errorf("snapshot COPY %s: %v", src, err)
				}
				if excluded, err := pm.MatchesOrParentMatches(src); err != nil || excluded {
					t.Errorf("snapshot COPY %s: .dockerignore keeps it out of the build context", src)
				}
				target := dst
				if strings.HasSuffix(dst, "/") {
					target = dst + path.Base(src)
				}
				copied[path.Clean(target)] = src
			}
		case "RUN":
			for i, w := range f {
				if copied[w] == snapshotScript && i+1 < len(f) && out == "" {
					out = f[i+1]
				}
			}
		}
	}
	if out == "" {
		t.Fatalf("snapshot stage: no RUN of %s (copied in) with the output path", snapshotScript)
	}
	// The local snapshot never goes into the context: the image fetches
	// and checks its own.
	if excluded, _ := pm.MatchesOrParentMatches("data/vpic/vpic.lite.db"); !excluded {
		t.Error(".dockerignore lets data/vpic/vpic.lite.db into the build context")
	}

	// The runtime stage copies it to one path, root's, with the mode the
	// snapshot stage gave it.
	var dest string
	env := map[string]string{}
	var userPaths []string // what the runtime stage gives the runtime user
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
			if flags["--from"] != "snapshot" {
				if o, ok := flags["--chown"]; ok && !isRoot(o) {
					userPaths = append(userPaths, path.Clean(paths[len(paths)-1]))
				}
				continue
			}
			if len(paths) != 2 || path.Clean(paths[0]) != path.Clean(out) {
				t.Errorf("runtime COPY %q: want the snapshot stage's %s to one path", in.args, out)
				continue
			}
			dest = paths[1]
			if o, ok := flags["--chown"]; ok && !isRoot(o) {
				t.Errorf("runtime COPY %q: the snapshot is owned by %s; keep it root's (read-only for the service)", in.args, o)
			}
			if _, ok := flags["--chmod"]; ok {
				t.Errorf("runtime COPY %q: --chmod also sets the mode of the directories the COPY creates (moby/buildkit#5943), which then cannot be entered; set the file's mode in the snapshot stage", in.args)
			}
		}
	}
	if dest == "" {
		t.Fatal("the runtime stage does not COPY --from=snapshot")
	}
	if !path.IsAbs(dest) || strings.HasSuffix(dest, "/") || path.Clean(dest) != dest {
		t.Fatalf("snapshot copied to %q, want an absolute, clean file path", dest)
	}
	if env["VPIC_SNAPSHOT_PATH"] != dest {
		t.Errorf("runtime ENV VPIC_SNAPSHOT_PATH=%q, want %s (where the snapshot is), so that docker run finds it", env["VPIC_SNAPSHOT_PATH"], dest)
	}
	for _, p := range userPaths {
		if within(dest, p) {
			t.Errorf("snapshot %s is under %s, which the runtime user owns", dest, p)
		}
	}

	// Every kustomization points the service at it and mounts nothing
	// over it, and leaves memory for it.
	table := settingsTable(t, "vinsvc")
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			if w.service != "vinsvc" {
				continue
			}
			c := w.container(t)
			if got := effective(table, containerEnv(t, b, c), "VPIC_SNAPSHOT_PATH"); got != dest {
				t.Errorf("%s: VPIC_SNAPSHOT_PATH %q, want the image's snapshot %s", dir, got, dest)
			}
			if m, ok := mountFor(c, dest); ok {
				t.Errorf("%s: volume %s mounted at %s (read-only %v) hides the image's snapshot %s", dir, m.Name, m.MountPath, m.ReadOnly, dest)
			}
			if req := c.Resources.Requests[corev1.ResourceMemory]; req.Cmp(snapshotMemory) < 0 {
				t.Errorf("%s: memory request %s, want at least %s: the snapshot's tables alone take about 80 MiB", dir, req.String(), snapshotMemory.String())
			}
		}
	}

	// The snapshot the tests use (.ci/run) is the one the image pins.
	if p := os.Getenv("TEST_VPIC_SNAPSHOT"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			t.Fatalf("TEST_VPIC_SNAPSHOT: %v", err)
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != dbSHA {
			t.Errorf("TEST_VPIC_SNAPSHOT %s: sha256 %s, want %s (%s's pin): the tests and the image would use different data", p, got, dbSHA, snapshotScript)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// contextMatcher is the repository's .dockerignore, with Docker's own
// matching rules.
func contextMatcher(t *testing.T) *patternmatcher.PatternMatcher {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// copyFromContext does a builder COPY: src (a file or directory of the
// repository) into dst (a directory under root), skipping what
// .dockerignore keeps out of the build context.
func copyFromContext(t *testing.T, pm *patternmatcher.PatternMatcher, root, src, dst string) int {
	t.Helper()
	src = path.Clean(src)
	base := filepath.Join(repoRoot, filepath.FromSlash(src))
	info, err := os.Stat(base)
	if err != nil {
		t.Fatalf("COPY %s: %v", src, err)
	}
	n := 0
	err = filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		excluded, err := pm.MatchesOrParentMatches(rel)
		if err != nil || excluded {
			return err
		}
		target := filepath.Join(root, filepath.FromSlash(dst), filepath.Base(p))
		if info.IsDir() {
			inner, _ := filepath.Rel(base, p)
			target = filepath.Join(root, filepath.FromSlash(dst), inner)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("COPY %s %s: %v", src, dst, err)
	}
	return n
}

// buildLikeDockerfile replays the builder stage of <service>.Dockerfile:
// the files its COPY lines take from the context (as .dockerignore leaves
// it) are laid out under a temporary root, and its go build line runs there
// with the stage's ENV, VERSION=testVersion and the output redirected. The
// module download step is left to the local module cache.
func buildLikeDockerfile(t *testing.T, service string) string {
	t.Helper()
	d := builderStage(t, service, stagesOf(t, service).build)
	root := t.TempDir()
	pm := contextMatcher(t)
	for _, c := range d.copies {
		if n := copyFromContext(t, pm, root, c[0], c[1]); n == 0 {
			t.Fatalf("COPY %s: .dockerignore leaves nothing of it in the context", c[0])
		}
	}
	bin := filepath.Join(t.TempDir(), service)
	args := []string{"build"}
	for _, a := range d.args {
		switch a {
		case d.out:
			a = bin
		default:
			a = strings.ReplaceAll(a, "${VERSION}", testVersion)
			a = strings.ReplaceAll(a, "$VERSION", testVersion)
		}
		args = append(args, a)
	}
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(d.workdir))
	// The stage's ENV replaces what the test's environment says about the
	// same variables (a CI's CGO_ENABLED=1 among them). The RUN line's
	// GOOS/GOARCH are BuildKit's target platform: here, this machine's.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, set := d.env[k]
		return set || k == "GOFLAGS" || k == "GOOS" || k == "GOARCH"
	})
	for k, v := range d.env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s (in %s, as %s.Dockerfile builds): %v\n%s", strings.Join(args, " "), d.workdir, service, err, out)
	}
	t.Logf("built %s as its Dockerfile does in %v", service, time.Since(start).Round(time.Millisecond))
	return bin
}

// goTool is the go command: `go test` puts its own toolchain's bin
// directory first in PATH.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the services with: %v", err)
	}
	return p
}

// checkStatic fails unless bin is an ELF executable with no interpreter and
// no dynamic section: vinsvc runs on distroless static, which has no libc,
// and patentsvc is the same static build (`make build`'s) on Debian.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			t.Errorf("%s has a PT_INTERP program header: dynamically linked", filepath.Base(bin))
		case elf.PT_DYNAMIC:
			t.Errorf("%s has a PT_DYNAMIC program header: dynamically linked", filepath.Base(bin))
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		t.Errorf("%s has a .dynamic section", filepath.Base(bin))
	}
	if s := f.Section(".interp"); s != nil {
		t.Errorf("%s has an .interp section", filepath.Base(bin))
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s imports %v", filepath.Base(bin), libs)
	}
}

// closedPort returns a TCP port nothing listens on right now, for a
// setting that must point at nothing (an upstream that is down). Nothing
// binds it: a service under test takes a port of the kernel's (PORT=0,
// service.Exec), never one chosen before (issue 27).
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runService starts bin serve-mode with exactly env (nothing inherited)
// and PORT=0 in dir, reads the port it took from its start-up line, waits
// until every path answers 200 on it, then sends SIGTERM and requires exit
// status 0 within grace.
func runService(t *testing.T, bin, dir string, env map[string]string, paths []string, grace time.Duration) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{} // not nil: nothing inherited
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := service.Exec(t, cmd, service.Options{Ready: paths, StartWithin: time.Minute, StopWithin: grace})
	if err := s.Stop(); err != nil {
		t.Fatalf("%s after SIGTERM: %v, want exit status 0\n%s", filepath.Base(bin), err, s.Logs)
	}
}

// TestServiceBinaries builds each service as its Dockerfile does and runs
// the binary: static, stamped with its version, serving with the minimal
// environment and with every overlay's settings.
func TestServiceBinaries(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the images are linux; the ELF checks need a linux build")
	}
	renders := overlays(t)
	for _, service := range services {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			bin := buildLikeDockerfile(t, service)

			t.Run("static", func(t *testing.T) { checkStatic(t, bin) })

			t.Run("version", func(t *testing.T) {
				out, err := exec.Command(bin, "version").Output()
				if err != nil {
					t.Fatalf("%s version: %v", service, err)
				}
				if got := strings.TrimSpace(string(out)); got != testVersion {
					t.Errorf("%s version = %q, want %q", service, got, testVersion)
				}
			})

			t.Run("minimal-env", func(t *testing.T) {
				dir, env := t.TempDir(), map[string]string{}
				switch service {
				case "vinsvc":
					env["CACHE_PATH"] = filepath.Join(t.TempDir(), "cache", "vincache.db")
					env["VPIC_BASE_URL"] = fmt.Sprintf("http://127.0.0.1:%d/api/vehicles", closedPort(t))
				case "patentsvc":
					// DATABASE_URL empty: SQLite in data/ of the working directory.
					env["STORAGE_DIR"] = filepath.Join(t.TempDir(), "patents")
				}
				runService(t, bin, dir, env, []string{"/livez"}, 30*time.Second)
				if service == "patentsvc" {
					if _, err := os.Stat(filepath.Join(dir, "data", "patentsvc.db")); err != nil {
						t.Errorf("SQLite file not in the working directory's data/: %v", err)
					}
				}
			})

			// Each overlay's settings, as the pods get them, must load and
			// serve the probe paths the manifests use. Secret values are
			// stand-ins (optional ones left out); what would leave this
			// machine or needs the pod's volumes is pointed at local stand-ins.
			for _, b := range renders {
				t.Run(strings.TrimPrefix(b.name, "overlays/"), func(t *testing.T) {
					c := workloadOf(t, b, service).container(t)
					env := map[string]string{"HOME": t.TempDir()}
					for name, v := range containerEnv(t, b, c) {
						switch {
						case v.secretRef == nil:
							env[name] = v.value
						case v.secretRef.Optional == nil || !*v.secretRef.Optional:
							env[name] = strings.Repeat("x", 48) // long enough for JWT_SECRET outside development
						}
					}
					switch service {
					case "vinsvc":
						env["CACHE_PATH"] = filepath.Join(t.TempDir(), "vincache.db")
						env["VPIC_BASE_URL"] = fmt.Sprintf("http://127.0.0.1:%d/api/vehicles", closedPort(t))
						// The image's snapshot path does not exist here (the
						// service then starts without it); the local copy,
						// when there is one, stands in for it.
						if p := os.Getenv("TEST_VPIC_SNAPSHOT"); p != "" {
							env["VPIC_SNAPSHOT_PATH"] = p
						}
						// prod requires REDIS_URL: a Redis that is down (nothing
						// listens on the port). The pods must start and turn
						// ready without it; readiness never waits for Redis.
						if _, ok := env["REDIS_URL"]; ok {
							env["REDIS_URL"] = fmt.Sprintf("redis://127.0.0.1:%d/0", closedPort(t))
						}
					case "patentsvc":
						// SQLite, named as such (outside development an empty
						// DATABASE_URL stops start-up): no PostgreSQL needed to
						// load the settings.
						env["DATABASE_URL"] = "sqlite:" + filepath.Join(t.TempDir(), "patentsvc.db")
						env["STORAGE_DIR"] = filepath.Join(t.TempDir(), "patents")
						env["AWS_EC2_METADATA_DISABLED"] = "true" // the S3 client never asks a metadata service here
					}
					var paths []string
					for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
						if p != nil && p.HTTPGet != nil {
							paths = append(paths, p.HTTPGet.Path)
						}
					}
					if len(paths) == 0 {
						t.Fatal("no httpGet probes to try")
					}
					runService(t, bin, t.TempDir(), env, paths, 30*time.Second)
				})
			}
		})
	}
}
