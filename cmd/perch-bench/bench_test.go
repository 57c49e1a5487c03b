package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The benchmark is not part of the normal test run: set PERCH_BENCH=1.
func needBench(t *testing.T) {
	t.Helper()
	if os.Getenv("PERCH_BENCH") == "" {
		t.Skip("set PERCH_BENCH=1 to test the end-to-end benchmark")
	}
}

func TestHelpers(t *testing.T) {
	needBench(t)
	url, task, n, b, last, err := parseBanner("fake maria daemon (head) listening on http://127.0.0.1:4242/v1 (long-session task " +
		"fc798919-0337-4f16-a4ac-d2c8b703d4cd; 1000 events, 5001234 bytes, last event 6cde7d21-cb85-4648-ac55-2a37dd875246)\n")
	if err != nil || url != "http://127.0.0.1:4242/v1" || task != "fc798919-0337-4f16-a4ac-d2c8b703d4cd" || n != 1000 || b != 5001234 ||
		last != "6cde7d21-cb85-4648-ac55-2a37dd875246" {
		t.Errorf("parseBanner: %q %q %d %d %q %v", url, task, n, b, last, err)
	}
	if ms, k := initTrace("init internal/bytealg @0.008 ms, 0.001 ms clock, 0 bytes, 0 allocs\nother\ninit main @1.2 ms, 2.5 ms clock, 10 bytes, 1 allocs\n"); k != 2 || ms != 2.501 {
		t.Errorf("initTrace: %v %d", ms, k)
	}
	ds := []time.Duration{5, 1, 4, 2, 3}
	if percentile(ds, 50) != 3 || percentile(ds, 99) != 5 || percentile(ds, 0) != 1 {
		t.Errorf("percentile")
	}
	bar := "── message " + strings.Repeat("─", 80) + " web off  ctrl+s ─"
	if w := len([]rune(bar)); !laidOut("x\n"+bar+"\ny", w) || laidOut(bar, w+1) {
		t.Errorf("laidOut")
	}
	for _, c := range []struct{ a, b, want string }{
		{"20.0 ms", "10.0 ms", "2.00×"}, {"1.50 s", "500 ms", "3.00×"}, {"30.0 MB", "20.0 MB", "1.50×"},
		{"2.00 ms / 8.00 ms", "1.00 ms / 4.00 ms", "2.00× / 2.00×"},
		{"+5.00 ms", "+2.00 ms", ""}, {"error", "10.0 ms", ""}, {"10.0 MB", "10.0 ms", ""}, {"", "1.00 ms", ""},
	} {
		if got := ratioOf(c.a, c.b); got != c.want {
			t.Errorf("ratioOf(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
	pairs := pairRows([]row{{scope: "s", name: "a", value: "1"}, {scope: "s", name: "a", value: "2"}, {scope: "s", name: "b"}},
		[]row{{scope: "s", name: "a", value: "3"}, {scope: "s", name: "c"}, {scope: "s", name: "a", value: "4"}})
	if len(pairs) != 4 || pairs[0].base.value != "3" || pairs[1].base.value != "4" || pairs[2].base.name != "" || pairs[3].base.name != "c" {
		t.Errorf("pairRows: %+v", pairs)
	}
	p := filepath.Join(t.TempDir(), "x.jsonl")
	_ = os.WriteFile(p, []byte(`{"type":"assistant","text":"done"}`+"\n"+`{"type":"state","status":"idle"}`+"\n"), 0o644)
	if err := checkExport(p, "done"); err != nil {
		t.Error(err)
	}
	if err := checkExport(p, "other"); err == nil {
		t.Error("checkExport accepted the wrong final reply")
	}
}

// TestSmoke runs the whole benchmark on a small session.
func TestSmoke(t *testing.T) {
	needBench(t)
	cmd := exec.Command("go", "run", ".", "-n", "60", "-runs", "1", "-startup-runs", "1", "-keys", "4", "-idle", "1s",
		"-big-mb", "1", "-line-mb", "0.25", "-big-n", "60", "-suna-frames", "500")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"export --format jsonl wall", "TUI attach → final reply visible", "expand (Enter)", "TUI launch", "search, first message only", "export --backend suna --until-idle wall",
		"watch idle CPU", "pynchy run starts → watch line"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "ERR") {
		t.Errorf("a section failed:\n%s", out)
	}
}
