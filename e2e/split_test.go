package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUIThroughPerchIsOneProcess: perch opens the UI by replacing itself
// with perch-ui, found next to it: the shell's child, same pid, becomes
// perch-ui, the UI works, and when it quits the shell sees perch-ui's exit
// status as perch's, as if perch had been the UI all along.
func TestUIThroughPerchIsOneProcess(t *testing.T) {
	url := fakeDaemon(t, "6")
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e split task", "Say hello.")
	tm := newTerm(t, fmt.Sprintf(`sh -c '%s --url %s; echo "perch exited with $?"; exec sleep 600'`, perch, url))
	tm.waitText("e2e split task", 15*time.Second)

	sh := tm.paneProcess()
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", sh, sh))
	if err != nil {
		t.Skipf("cannot read the shell's children (no /proc?): %v", err)
	}
	f := strings.Fields(string(children))
	if len(f) != 1 {
		t.Fatalf("the shell has children %q, want one: perch", children)
	}
	pid, _ := strconv.Atoi(f[0])
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatalf("the shell's child: %v", err)
	}
	if want := filepath.Join(filepath.Dir(perch), "perch-ui"); exe != want {
		t.Errorf("the shell's child %d runs %s, want %s (perch replaced by perch-ui)", pid, exe, want)
	}

	tm.keys("q")
	tm.waitText("perch exited with 0", 15*time.Second)
}
