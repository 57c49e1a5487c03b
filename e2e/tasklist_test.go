package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// TestTaskListAtURL: bare perch at a URL shows the task list. Keys typed
// as soon as the list is on the screen are not lost, the system found is
// named once, and after quitting the terminal is as before: the normal
// screen, echo, line editing and signal keys on.
func TestTaskListAtURL(t *testing.T) {
	t.Parallel()
	url := fakeDaemon(t, "6")
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e first task", "Say hello.")
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e another task", "Say bye.")
	taskList(t, url, "maria", "e2e first task", "e2e another task", "first")
}

// TestTaskListAtURLSuna: the same with Suna, whose threads perch asks for
// after its probe.
func TestTaskListAtURLSuna(t *testing.T) {
	t.Parallel()
	s, base := fakeSuna(t, fakesuna.Options{FrameDelay: time.Millisecond})
	for _, prompt := range []string{"Paint the fence first.", "Then the shed."} {
		if _, _, err := s.Start("", prompt); err != nil {
			t.Fatal(err)
		}
	}
	taskList(t, base, "suna", "Paint the fence first.", "Then the shed.", "fence")
}

// taskList launches bare perch at url, filters its list down to keep
// (dropping drop) by typing filter as soon as both are on the screen, and
// quits.
func taskList(t *testing.T, url, system, keep, drop, filter string) {
	t.Helper()
	modes := filepath.Join(t.TempDir(), "stty")
	tm := newTerm(t, fmt.Sprintf(`sh -c 'stty -a > %s.before; %s --url %s; echo "perch exited with $?"; stty -a > %s; echo "modes saved"; exec sleep 600'`,
		modes, perch, url, modes))
	tm.waitFor("the task list", 15*time.Second, func(s string) bool {
		return strings.Contains(s, keep) && strings.Contains(s, drop)
	})
	tm.keys("/")
	tm.typeText(filter)
	tm.waitFor("the filtered list", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "/"+filter) && strings.Contains(s, keep) && !strings.Contains(s, drop)
	})
	tm.keys("Escape") // clears the filter
	tm.waitFor("the whole list again", 15*time.Second, func(s string) bool {
		return strings.Contains(s, drop) && !strings.Contains(s, "/"+filter)
	})
	tm.keys("q")
	tm.waitText("perch exited with 0", 15*time.Second)
	s := tm.waitText("modes saved", 15*time.Second) // the file is written
	if n := strings.Count(s, "answers as "+system); n != 1 {
		t.Errorf("the probe's notice is on the screen %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, drop) {
		t.Errorf("the task list stayed on the normal screen:\n%s", s)
	}
	before, err := os.ReadFile(modes + ".before")
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(modes)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("the terminal's modes changed:\nbefore perch: %s\nafter: %s", before, after)
	}
}
