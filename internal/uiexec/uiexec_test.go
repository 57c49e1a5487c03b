package uiexec

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test programs are unix files")
	}
	dir := t.TempDir()
	install := filepath.Join(dir, "install") // perch and perch-ui, as built side by side
	bin := filepath.Join(dir, "bin")         // a link to perch only
	alone := filepath.Join(dir, "alone")     // perch without perch-ui
	onPath := filepath.Join(dir, "path")     // a perch-ui on PATH
	for _, d := range []string{install, bin, alone, onPath} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prog := func(path string, mode os.FileMode) string {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	prog(filepath.Join(install, "perch"), 0o755)
	installedUI := prog(filepath.Join(install, Program), 0o755)
	if err := os.Symlink(filepath.Join(install, "perch"), filepath.Join(bin, "perch")); err != nil {
		t.Fatal(err)
	}
	prog(filepath.Join(alone, "perch"), 0o755)
	pathUI := prog(filepath.Join(onPath, Program), 0o755)
	explicit := prog(filepath.Join(dir, "my-ui"), 0o755)
	notExec := prog(filepath.Join(dir, "not-exec"), 0o644)

	lookPath := func(dirs ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, d := range dirs {
				if p := filepath.Join(d, name); executable(p) == nil {
					return p, nil
				}
			}
			return "", errors.New("not on PATH")
		}
	}
	for _, c := range []struct {
		name  string
		self  string
		env   map[string]string
		path  []string // PATH's directories
		want  string
		wantE []string // the error says all of these
	}{
		{name: "next to perch", self: filepath.Join(install, "perch"), path: []string{onPath}, want: installedUI},
		{name: "next to the link's target", self: filepath.Join(bin, "perch"), path: []string{onPath}, want: installedUI},
		{name: "on PATH", self: filepath.Join(alone, "perch"), path: []string{onPath}, want: pathUI},
		{name: "PERCH_UI first", self: filepath.Join(install, "perch"), env: map[string]string{EnvProgram: explicit}, want: explicit},
		{name: "PERCH_UI by name, on PATH", self: filepath.Join(alone, "perch"), path: []string{onPath},
			env: map[string]string{EnvProgram: Program}, want: pathUI},
		{name: "missing", self: filepath.Join(alone, "perch"),
			wantE: []string{"perch-ui not found", filepath.Join(alone, Program), "$PATH",
				"go install github.com/perch-tui/perch/cmd/perch-ui@latest", "./cmd/perch-ui", EnvProgram}},
		{name: "PERCH_UI missing: no search", self: filepath.Join(install, "perch"), env: map[string]string{EnvProgram: filepath.Join(dir, "nope")},
			wantE: []string{"PERCH_UI names " + filepath.Join(dir, "nope"), "no such file"}},
		{name: "PERCH_UI not executable", self: filepath.Join(install, "perch"), env: map[string]string{EnvProgram: notExec},
			wantE: []string{notExec, "not executable"}},
		{name: "PERCH_UI a directory", self: filepath.Join(install, "perch"), env: map[string]string{EnvProgram: dir},
			wantE: []string{"a directory"}},
		{name: "handed over already", self: filepath.Join(install, "perch"), env: map[string]string{EnvHandedOver: "/x/perch"},
			wantE: []string{"/x/perch handed the terminal UI over to " + filepath.Join(install, "perch") + ", which has no UI either", "go install"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Finder{
				Executable: func() (string, error) { return c.self, nil },
				LookPath:   lookPath(c.path...),
				Getenv:     func(k string) string { return c.env[k] },
			}
			got, err := f.Find()
			if c.wantE == nil {
				if err != nil || got != c.want {
					t.Fatalf("Find() = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Find() = %q, want an error", got)
			}
			for _, w := range c.wantE {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestFindWithoutOwnPath(t *testing.T) {
	f := Finder{
		Executable: func() (string, error) { return "", errors.New("unknown") },
		LookPath:   func(string) (string, error) { return "", errors.New("not on PATH") },
		Getenv:     func(string) string { return "" },
	}
	_, err := f.Find()
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "(looked at the directories in $PATH)") {
		t.Errorf("Find: %v", err)
	}
}

func TestEnvMarksTheHandOver(t *testing.T) {
	got := Env([]string{"A=1", EnvHandedOver + "=/old", "B=2"}, "/bin/perch")
	want := []string{"A=1", "B=2", EnvHandedOver + "=/bin/perch"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

func TestEnvSetsExtra(t *testing.T) {
	got := Env([]string{"A=1", "PERCH_BACKEND=suna", "PERCH_BACKENDS=x", "B=2"}, "/bin/perch", "PERCH_BACKEND=maria", "C=3")
	want := []string{"A=1", "PERCH_BACKENDS=x", "B=2", "PERCH_BACKEND=maria", "C=3", EnvHandedOver + "=/bin/perch"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}
