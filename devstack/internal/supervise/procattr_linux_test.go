package supervise_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatewayapis/devstack/internal/supervise"
)

// TestHelperSupervisor is the supervisor process of
// TestChildrenStopWhenSupervisorIsKilled (it runs only when re-executed
// with SUPERVISE_HELPER set): it runs one service that writes its pid to
// a file and sleeps.
func TestHelperSupervisor(t *testing.T) {
	pidFile := os.Getenv("SUPERVISE_HELPER")
	if pidFile == "" {
		t.Skip("the helper process of TestChildrenStopWhenSupervisorIsKilled")
	}
	_ = supervise.Run(context.Background(), io.Discard, []supervise.Service{
		sh("child", `echo $$ > `+pidFile+`.tmp && mv `+pidFile+`.tmp `+pidFile+` && exec sleep 60`),
	}, nil)
}

// TestChildrenStopWhenSupervisorIsKilled kills the supervisor with
// SIGKILL (it cannot stop its children itself then): the kernel must stop
// the child, which would otherwise sleep on, holding its port in a real
// run.
func TestChildrenStopWhenSupervisorIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	sup := exec.Command(os.Args[0], "-test.run=^TestHelperSupervisor$")
	sup.Env = append(os.Environ(), "SUPERVISE_HELPER="+pidFile)
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = sup.Process.Kill()
			t.Fatal("the child never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sup.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// Gone, or a zombie waiting for init to reap it: either way stopped.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the child (pid %d) still runs 5 s after its supervisor was killed", child)
		}
	}
}
