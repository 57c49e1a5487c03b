package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation runs in every perch process before main, for
// every linked package, whether or not the command needs it: a script
// calling perch send in a loop pays it each time. These tests run the
// built binary with GODEBUG=inittrace=1 and fail when that cost regresses
// badly. What the inits allocate is nearly deterministic and bounded
// tightly (about 1.5× today's); their time is bounded generously, since a
// busy 2-core machine measures several times the quiet numbers in
// docs/performance.md, and the least of a few runs is compared because
// load only ever adds time.

// uiLibraries are the packages whose initialisation dominates the UI's
// (chroma registers every lexer and parses every style at init).
var uiLibraries = []string{
	"github.com/alecthomas/chroma/v2",
	"charm.land/glamour/v2",
	"charm.land/bubbletea/v2",
	"charm.land/lipgloss/v2",
	"github.com/yuin/goldmark",
	"github.com/microcosm-cc/bluemonday",
}

// firstPaintLibraries are the UI libraries perch links nevertheless: it
// draws the task list before it hands over (tui/chrome,
// internal/firstpaint), with lipgloss, whose initialisation costs well
// under a millisecond.
var firstPaintLibraries = map[string]bool{"charm.land/lipgloss/v2": true}

// TestPerchLinksNoUILibrary: the perch program reaches the UI only by
// handing over to perch-ui, so it links none of the UI's libraries but
// lipgloss (its first paint), while perch-ui links them all (which also
// proves the check can fail).
func TestPerchLinksNoUILibrary(t *testing.T) {
	links := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		found := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			for _, lib := range uiLibraries {
				if p == lib || strings.HasPrefix(p, lib+"/") {
					found[lib] = true
				}
			}
		}
		return found
	}
	for lib := range links(".") {
		if firstPaintLibraries[lib] {
			continue
		}
		t.Errorf("perch links %s: package cli (or what it imports) must reach the UI only through Env.UI, which only perch-ui sets", lib)
	}
	if ui := links("./cmd/perch-ui"); len(ui) != len(uiLibraries) {
		t.Errorf("perch-ui links %d of the %d UI libraries (%v): is uiLibraries out of date?", len(ui), len(uiLibraries), ui)
	}
}

// TestPerchLinksNoSQLite: modernc's SQLite (its libc above all) costs
// some 2 ms of package initialisation; perch hands the commands that read
// a SQLite store to perch-ui, which links it (handover_test.go).
func TestPerchLinksNoSQLite(t *testing.T) {
	for _, c := range []struct {
		pkg  string
		want bool
	}{{".", false}, {"./cmd/perch-ui", true}} {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		if got := slices.Contains(strings.Fields(string(out)), "modernc.org/sqlite"); got != c.want {
			t.Errorf("%s links modernc.org/sqlite: %v, want %v", c.pkg, got, c.want)
		}
	}
}

func TestPackageInitStaysCheap(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("timing test: not under -race or -short")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, pkg string
		maxMS     float64 // least sum of the runs
		maxBytes  int64
		maxAllocs int64
	}{
		// Today: about 8 ms on a quiet machine, 0.17 MB in 1.1k
		// allocations.
		{"perch", ".", 100, 1 << 20, 5_000},
		// Today: about 40 ms (chroma's lexers and styles 25), 6.1 MB in
		// 76k allocations.
		{"perch-ui", "./cmd/perch-ui", 400, 9 << 20, 110_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(dir, c.name)
			build := exec.Command("go", "build", "-o", bin, c.pkg)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			sums := make([]float64, 0, 5)
			own := map[string]float64{} // perch's own packages: least clock over the runs
			for range 5 {
				cmd := exec.Command(bin, "--version")
				cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s --version: %v\n%s", c.name, err, stderr.String())
				}
				pkgs := parseInitTrace(stderr.String())
				if len(pkgs) < 20 {
					t.Fatalf("inittrace printed %d packages; did the format change?\n%s", len(pkgs), stderr.String())
				}
				var sum initCost
				for p, c := range pkgs {
					sum.ms += c.ms
					sum.bytes += c.bytes
					sum.allocs += c.allocs
					if strings.HasPrefix(p, "github.com/perch-tui/perch") {
						if v, ok := own[p]; !ok || c.ms < v {
							own[p] = c.ms
						}
					}
				}
				sums = append(sums, sum.ms)
				if sum.bytes > c.maxBytes || sum.allocs > c.maxAllocs {
					t.Fatalf("package init allocates %d bytes in %d allocations (bounds %d, %d): see GODEBUG=inittrace=1 %s --version",
						sum.bytes, sum.allocs, c.maxBytes, c.maxAllocs, bin)
				}
			}
			least := slices.Min(sums)
			t.Logf("package init: least %.1f ms, runs %.1f", least, sums)
			if least > c.maxMS {
				t.Errorf("package init took %.1f ms at least (bound %.0f ms): see GODEBUG=inittrace=1 %s --version", least, c.maxMS, bin)
			}
			// perch's own packages compute nothing at init: tables and
			// styles are built when first used.
			for p, ms := range own {
				if ms > 3 {
					t.Errorf("%s spends %.2f ms in package init: make the work lazy", p, ms)
				}
			}
		})
	}
}

type initCost struct {
	ms            float64
	bytes, allocs int64
}

// parseInitTrace reads GODEBUG=inittrace=1 lines
// ("init pkg @0.5 ms, 1.2 ms clock, 10 bytes, 1 allocs") into the cost
// of each package.
func parseInitTrace(s string) map[string]initCost {
	pkgs := map[string]initCost{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) < 11 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		ms, err1 := strconv.ParseFloat(f[4], 64)
		bytes, err2 := strconv.ParseInt(f[7], 10, 64)
		allocs, err3 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		c := pkgs[f[1]]
		pkgs[f[1]] = initCost{c.ms + ms, c.bytes + bytes, c.allocs + allocs}
	}
	return pkgs
}

func TestParseInitTrace(t *testing.T) {
	got := parseInitTrace("init runtime @0.01 ms, 0.42 ms clock, 0 bytes, 0 allocs\nnoise\n" +
		"init github.com/x/y @7.5 ms, 15 ms clock, 2290336 bytes, 25864 allocs\ninit bad @1 ms, x ms clock, 0 bytes, 0 allocs\n")
	if len(got) != 2 || got["runtime"] != (initCost{0.42, 0, 0}) || got["github.com/x/y"] != (initCost{15, 2290336, 25864}) {
		t.Errorf("parseInitTrace: %v", got)
	}
}

// TestEarlyInitialisesBeforeLipgloss: internal/uiexec/early hides TMUX
// from lipgloss's initialisation (which would run `tmux info` and wait for
// it in every perch started on a terminal inside tmux), so Go must
// initialise it first; a new import of either could change that.
func TestEarlyInitialisesBeforeLipgloss(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perch")
	}
	bin := filepath.Join(t.TempDir(), "perch")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("perch --version: %v\n%s", err, stderr.String())
	}
	order := map[string]int{}
	for i, l := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "init" {
			order[f[1]] = i
		}
	}
	early, ok1 := order["github.com/perch-tui/perch/internal/uiexec/early"]
	lip, ok2 := order["charm.land/lipgloss/v2"]
	if !ok1 || !ok2 {
		t.Fatalf("early (%v) or lipgloss (%v) not in the init trace:\n%s", ok1, ok2, stderr.String())
	}
	if early > lip {
		t.Errorf("lipgloss initialised (line %d) before internal/uiexec/early (line %d)", lip, early)
	}
}
