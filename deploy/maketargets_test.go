package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mustMake returns the path of make, skipping the test without it.
func mustMake(t *testing.T) string {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make in PATH")
	}
	return mk
}

// envWithout returns the environment without the named variables.
func envWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || name == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// make test on a machine without a C compiler stops first, with a sentence
// that says what is missing, not Go's "-race requires cgo".
func TestMakeTestNeedsACCompiler(t *testing.T) {
	mk := mustMake(t)
	makefile, err := filepath.Abs(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	// test's first prerequisite is the check, so it runs before vet and
	// the tests.
	if !regexp.MustCompile(`(?m)^test: cgo-check\b`).Match(mustRead(t, makefile)) {
		t.Error("Makefile: test does not start with cgo-check")
	}

	// A PATH with go and nothing else: no gcc, no cc, no clang.
	bin := t.TempDir()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nexec "+goBin+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const noCompiler = "make test needs a C compiler (gcc or clang) for the race detector: apt-get install gcc"
	for _, tt := range []struct {
		name string
		env  []string
		want string // on stderr; "" for success
	}{
		{"no compiler in PATH", []string{"PATH=" + bin}, noCompiler},
		{"CC names no program", []string{"CC=/nonexistent/cc"}, noCompiler},
		{"cgo disabled", []string{"CGO_ENABLED=0"}, "make test needs cgo for the race detector, and CGO_ENABLED is 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(mk, "-s", "-f", makefile, "cgo-check")
			cmd.Dir = t.TempDir()
			cmd.Env = append(envWithout("CC", "CGO_ENABLED", "GOFLAGS"), tt.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("make cgo-check with %v succeeded, want it to fail", tt.env)
			}
			if first, _, _ := strings.Cut(stderr.String(), "\n"); !strings.HasPrefix(first, tt.want) {
				t.Errorf("make cgo-check with %v: stderr %q, want it to start %q", tt.env, stderr.String(), tt.want)
			}
		})
	}
}

// make clean removes the build output and no data; make clean-data removes
// the services' local data at their default paths (the settings tables'),
// and keeps the vPIC snapshot.
func TestMakeClean(t *testing.T) {
	mk := mustMake(t)
	vin, pat := settingsTable(t, "vinsvc"), settingsTable(t, "patentsvc")
	// The SQLite file of an empty DATABASE_URL is in its description.
	m := regexp.MustCompile("`([^`]+)` when empty").FindSubmatch(mustRead(t, filepath.Join(repoRoot, "docs", "config", "patentsvc.md")))
	if m == nil {
		t.Fatal("docs/config/patentsvc.md: DATABASE_URL does not name its default SQLite file")
	}
	sqlite := string(m[1])
	build := []string{"bin/vinsvc", "bin/patentsvc", "coverage-vinsvc.out"}
	data := []string{
		vin["CACHE_PATH"].def,
		sqlite, sqlite + "-wal", sqlite + "-shm",
		pat["STORAGE_DIR"].def + "/US8427103B2.pdf",
		"data/demo/vincache.db",
	}
	kept := vin["VPIC_SNAPSHOT_PATH"].def
	for _, p := range []string{vin["CACHE_PATH"].def, pat["STORAGE_DIR"].def, sqlite, kept} {
		if p == "" || filepath.IsAbs(p) || !strings.HasPrefix(p, "data/") {
			t.Fatalf("default path %q: want one under data/", p)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), mustRead(t, filepath.Join(repoRoot, "Makefile")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(append(append([]string{}, build...), data...), kept) {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(f string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		return err == nil
	}
	run := func(target string) {
		t.Helper()
		cmd := exec.Command(mk, "-s", target)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}

	run("clean")
	for _, f := range build {
		if exists(f) {
			t.Errorf("make clean left %s", f)
		}
	}
	for _, f := range append(data, kept) {
		if !exists(f) {
			t.Errorf("make clean removed %s: data is make clean-data's", f)
		}
	}

	run("clean-data")
	for _, f := range data {
		if exists(f) {
			t.Errorf("make clean-data left %s", f)
		}
	}
	if exists(pat["STORAGE_DIR"].def) {
		t.Errorf("make clean-data left the directory %s", pat["STORAGE_DIR"].def)
	}
	if !exists(kept) {
		t.Errorf("make clean-data removed the vPIC snapshot %s", kept)
	}
}
