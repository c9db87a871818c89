package supervise_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gatewayapis/devstack/internal/supervise"
	"github.com/gatewayapis/testkit/syncbuf"
)

// TestHelperSupervisor is the supervisor process of
// TestChildrenStopWhenSupervisorIsKilled (it runs only when re-executed
// with SUPERVISE_HELPER set): it runs one service that says its pid and
// sleeps, holding the pipe its supervisor got as fd 3 (inherited through
// the shell and its exec), so that the test sees the child's end.
func TestHelperSupervisor(t *testing.T) {
	if os.Getenv("SUPERVISE_HELPER") == "" {
		t.Skip("the helper process of TestChildrenStopWhenSupervisorIsKilled")
	}
	_ = supervise.Run(context.Background(), os.Stdout, []supervise.Service{
		sh("child", `echo "pid $$"; exec sleep 60`),
	}, nil)
}

// TestChildrenStopWhenSupervisorIsKilled kills the supervisor with
// SIGKILL (it cannot stop its children itself then): the kernel must stop
// the child, which would otherwise sleep on, holding its port in a real
// run. The child's end is seen as the end of the pipe it holds: the
// kernel closes a process's files as it exits.
func TestChildrenStopWhenSupervisorIsKilled(t *testing.T) {
	held, holder, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var out syncbuf.Buffer
	sup := exec.Command(os.Args[0], "-test.run=^TestHelperSupervisor$")
	sup.Env = append(os.Environ(), "SUPERVISE_HELPER=1")
	sup.Stdout = &out
	sup.ExtraFiles = []*os.File{holder} // fd 3 of the supervisor, then of its child
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	holder.Close() // the child's copy is the last
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pidLine := regexp.MustCompile(`child \| pid (\d+)`)
	text, err := out.WaitFor(ctx, pidLine.MatchString)
	if err != nil {
		_ = sup.Process.Kill()
		t.Fatalf("the child never started: %v\n%s", err, text)
	}
	child, _ := strconv.Atoi(pidLine.FindStringSubmatch(text)[1])
	// The child holds the pipe: its end, not only the supervisor's, is what
	// ends the pipe.
	st, err := held.Stat()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pipe:[%d]", st.Sys().(*syscall.Stat_t).Ino)
	if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/3", child)); err != nil || link != want {
		_ = sup.Process.Kill()
		t.Fatalf("the child's fd 3 is %q (%v), want the test's pipe %s", link, err, want)
	}

	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sup.Wait()
	gone := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, held); gone <- err }() // EOF: every holder ended
	select {
	case err := <-gone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the child (pid %d) still runs 5 s after its supervisor was killed", child)
	}
}
