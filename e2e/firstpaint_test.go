package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFirstPaintHandsOver: bare perch at a URL draws the task list itself
// and hands the terminal to perch-ui. Keys typed as soon as the list is on
// the screen (perch-ui may not be running yet) are not lost, the system
// found is named once, and after quitting the terminal is as before: the
// normal screen, echo, line editing and signal keys on.
func TestFirstPaintHandsOver(t *testing.T) {
	url := fakeDaemon(t, "6")
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e first paint", "Say hello.")
	run(t, "new", "--url", url, "--cwd", t.TempDir(), "--name", "e2e another task", "Say bye.")
	modes := filepath.Join(t.TempDir(), "stty")
	tm := newTerm(t, fmt.Sprintf(`sh -c 'stty -a > %s.before; %s --url %s; echo "perch exited with $?"; stty -a > %s; exec sleep 600'`, modes, perch, url, modes))
	tm.waitFor("the task list", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "e2e first paint") && strings.Contains(s, "e2e another task")
	})
	tm.keys("/")
	tm.typeText("first paint")
	s := tm.waitText("/first paint", 15*time.Second)
	if strings.Contains(s, "e2e another task") {
		// The filter narrows the list as it is typed.
		s = tm.waitFor("the filtered list", 15*time.Second, func(s string) bool { return !strings.Contains(s, "e2e another task") })
	}
	tm.keys("Escape") // clears the filter
	tm.waitFor("the whole list again", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "e2e another task") && !strings.Contains(s, "/first paint")
	})
	tm.keys("q")
	s = tm.waitText("perch exited with 0", 15*time.Second)
	if n := strings.Count(s, "answers as maria"); n != 1 {
		t.Errorf("the probe's notice is on the screen %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, "e2e another task") {
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
