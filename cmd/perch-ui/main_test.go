package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTmuxInfoInitialisesBeforeLipgloss: internal/tmuxearly must be
// initialised before lipgloss (which detects the colour profile in its
// init) and before chroma's lexers (the longest init, which tmux's answer
// overlaps); internal/widthtables before chroma's lexers too (the width
// tables are built beside them). Go initialises packages in import-path
// order among those whose imports are done; a new import of either could
// change that.
func TestTmuxInfoInitialisesBeforeLipgloss(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perch-ui")
	}
	bin := filepath.Join(t.TempDir(), "perch-ui")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	order := map[string]int{}
	sc := bufio.NewScanner(stderr)
	for i := 0; sc.Scan(); i++ {
		// "init github.com/x/y @0.5 ms, 0.01 ms clock, ..."
		f := strings.Fields(sc.Text())
		if len(f) > 1 && f[0] == "init" {
			order[f[1]] = i
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("perch-ui --version: %v", err)
	}
	for _, early := range []struct {
		pkg   string
		later []string
	}{
		{"github.com/perch-tui/perch/cmd/perch-ui/internal/tmuxearly", []string{"charm.land/lipgloss/v2", "github.com/alecthomas/chroma/v2/lexers"}},
		// The width tables are built beside chroma's inits (widthtables).
		{"github.com/perch-tui/perch/cmd/perch-ui/internal/widthtables", []string{"github.com/alecthomas/chroma/v2/lexers"}},
	} {
		at, ok := order[early.pkg]
		if !ok {
			t.Fatalf("%s not in the init trace (%d packages)", early.pkg, len(order))
		}
		for _, later := range early.later {
			if o, ok := order[later]; !ok || o < at {
				t.Errorf("%s initialised at %d (found: %v), before %s at %d", later, o, ok, early.pkg, at)
			}
		}
	}
}
