package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The perch program hands every command that opens the UI to perch-ui by
// exec. These tests build perch and stand a shell script in for perch-ui,
// which says how it was started.

// fakeUI prints its pid, arguments and what perch marked, then exits 7.
const fakeUI = `#!/bin/sh
echo "pid=$$ args=$* handed=$PERCH_UI_HANDED_OVER"
exit 7
`

// trappingUI says it is ready, then ends with 42 on SIGTERM.
const trappingUI = `#!/bin/sh
trap 'exit 42' TERM
echo ready
while :; do sleep 0.05; done
`

func TestHandOverToPerchUI(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("exec and shell scripts: unix only")
	}
	dir := t.TempDir()
	install, alone, onPath, bin := filepath.Join(dir, "install"), filepath.Join(dir, "alone"), filepath.Join(dir, "path"), filepath.Join(dir, "bin")
	for _, d := range []string{install, alone, onPath, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	perch := filepath.Join(install, "perch")
	if out, err := exec.Command("go", "build", "-o", perch, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	write := func(path, text string) string {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write(filepath.Join(install, "perch-ui"), fakeUI)
	write(filepath.Join(onPath, "perch-ui"), strings.Replace(fakeUI, "pid=", "onpath pid=", 1))
	explicit := write(filepath.Join(dir, "explicit-ui"), strings.Replace(fakeUI, "pid=", "explicit pid=", 1))
	trapping := write(filepath.Join(dir, "trapping-ui"), trappingUI)
	lonely := filepath.Join(alone, "perch")
	if err := os.Link(perch, lonely); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(perch, filepath.Join(bin, "perch")); err != nil {
		t.Fatal(err)
	}
	basePath := "/usr/bin:/bin" // sh and sleep, never a perch-ui

	// A daemon that counts requests: a command that hands over, or fails
	// to, must not have talked to it.
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/v1"

	type result struct {
		stdout, stderr string
		code, pid      int
	}
	run := func(t *testing.T, bin string, env []string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append([]string{"PATH=" + basePath, "HOME=" + dir, "XDG_STATE_HOME=" + dir}, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode(), cmd.Process.Pid}
	}

	t.Run("next to perch: same process, arguments, exit code", func(t *testing.T) {
		for _, args := range [][]string{
			{"--url", url},
			{"attach", "3f2b", "--url", url, "--theme", "dark"},
			{"--url", url, "attach", "3f2b"},
			{"demo", "--speed", "3"},
		} {
			r := run(t, perch, nil, args...)
			want := "pid=" + strconv.Itoa(r.pid) + " args=" + strings.Join(args, " ") + " handed=" + perch
			if r.code != 7 || strings.TrimSpace(r.stdout) != want || r.stderr != "" {
				t.Errorf("perch %v: exit %d, stdout %q, stderr %q; want exit 7 and %q", args, r.code, r.stdout, r.stderr, want)
			}
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("perch talked to the daemon %d times before handing over", n)
		}
	})
	t.Run("through a link: next to its target", func(t *testing.T) {
		r := run(t, filepath.Join(bin, "perch"), []string{"PATH=" + onPath + ":" + basePath}, "demo")
		if r.code != 7 || !strings.HasPrefix(r.stdout, "pid=") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("on PATH", func(t *testing.T) {
		r := run(t, lonely, []string{"PATH=" + onPath + ":" + basePath}, "demo")
		if r.code != 7 || !strings.HasPrefix(r.stdout, "onpath pid=") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("PERCH_UI before the search", func(t *testing.T) {
		r := run(t, perch, []string{"PERCH_UI=" + explicit}, "demo")
		if r.code != 7 || !strings.HasPrefix(r.stdout, "explicit pid=") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("missing: one error, exit 1, nothing else runs", func(t *testing.T) {
		for _, args := range [][]string{{"--url", url}, {"attach", "3f2b", "--url", url}, {"demo"}} {
			r := run(t, lonely, nil, args...)
			for _, w := range []string{"perch-ui not found", filepath.Join(alone, "perch-ui"), "$PATH",
				"go install github.com/perch-tui/perch/cmd/perch-ui@latest"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("perch %v: stderr %q does not say %q", args, r.stderr, w)
				}
			}
			if r.code != 1 || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("perch %v: exit %d, stdout %q, stderr %q; want exit 1 and one line", args, r.code, r.stdout, r.stderr)
			}
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("perch talked to the daemon %d times without a UI to show", n)
		}
	})
	t.Run("perch named as perch-ui: no loop", func(t *testing.T) {
		r := run(t, perch, []string{"PERCH_UI=" + lonely}, "demo")
		if r.code != 1 || !strings.Contains(r.stderr, perch+" handed the terminal UI over to "+lonely+", which has no UI either") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("commands without the UI stay in perch", func(t *testing.T) {
		for _, args := range [][]string{{"--version"}, {"attach", "--help"}, {"help", "demo"}} {
			r := run(t, perch, nil, args...)
			if r.code != 0 || strings.Contains(r.stdout, "pid=") {
				t.Errorf("perch %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
			}
		}
		// A usage mistake of a command that may print is perch's own.
		if r := run(t, perch, nil, "replay"); r.code != 2 || strings.Contains(r.stdout, "pid=") {
			t.Errorf("perch replay: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		// attach and demo go to perch-ui early, mistakes and all: it is
		// the same command line, and says the same.
		if r := run(t, perch, nil, "attach"); r.code != 7 || !strings.Contains(r.stdout, "args=attach ") {
			t.Errorf("perch attach: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	// perch leaves the SQLite driver to perch-ui: a command that reads an
	// Attocode store goes there whole, and says why when it cannot.
	store, err := filepath.Abs(filepath.Join("backend", "attocode", "testdata", "fixtures", "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	jsonl, err := filepath.Abs(filepath.Join("backend", "attocode", "testdata", "fixtures", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a SQLite store goes to perch-ui", func(t *testing.T) {
		for _, args := range [][]string{
			{"import", store, "--format", "md"},
			{"replay", store, "--format", "jsonl"},
			{"import", "--from", "attocode", store, "--session", "s1"},
		} {
			r := run(t, perch, nil, args...)
			want := "pid=" + strconv.Itoa(r.pid) + " args=" + strings.Join(args, " ") + " handed=" + perch
			if r.code != 7 || strings.TrimSpace(r.stdout) != want || r.stderr != "" {
				t.Errorf("perch %v: exit %d, stdout %q, stderr %q; want exit 7 and %q", args, r.code, r.stdout, r.stderr, want)
			}
		}
		// Every other file is perch's own.
		if r := run(t, perch, nil, "import", jsonl, "--format", "md"); r.code != 0 || strings.Contains(r.stdout, "pid=") {
			t.Errorf("perch import %s: exit %d, stdout %.200q, stderr %q", jsonl, r.code, r.stdout, r.stderr)
		}
		r := run(t, lonely, nil, "import", store)
		for _, w := range []string{store + " is a SQLite database, which perch reads through perch-ui", "perch-ui not found",
			"go install github.com/perch-tui/perch/cmd/perch-ui@latest"} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("perch import without perch-ui: stderr %q does not say %q", r.stderr, w)
			}
		}
		if r.code != 1 || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("perch import without perch-ui: exit %d, stdout %q, stderr %q; want exit 1 and one line", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("signals reach the UI", func(t *testing.T) {
		cmd := exec.Command(perch, "demo")
		cmd.Env = []string{"PATH=" + basePath, "HOME=" + dir, "PERCH_UI=" + trapping}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line := make([]byte, 6)
		if _, err := out.Read(line); err != nil || string(line) != "ready\n" {
			cmd.Process.Kill()
			t.Fatalf("the UI did not start: %q %v", line, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 42 {
			t.Errorf("after SIGTERM to perch's pid: exit %d, want 42 (the UI's trap)", code)
		}
	})
}
