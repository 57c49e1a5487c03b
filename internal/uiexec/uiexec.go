// Package uiexec finds perch-ui, the program that has perch's terminal
// UI, and hands the running process over to it.
//
// perch is two programs, as git is several: perch, the command line
// without the UI's libraries (their package initialisation alone costs
// several times a scriptable command's whole run), and perch-ui, the full
// perch with the UI linked. When perch is asked for the UI it replaces
// itself with perch-ui, with the same arguments and environment, so the
// exit code, signals and the terminal are those of one process.
package uiexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

const (
	// Program is the name of the program that has the UI.
	Program = "perch-ui"
	// EnvProgram names the program explicitly (tests, packagers); it
	// replaces the search.
	EnvProgram = "PERCH_UI"
	// EnvHandedOver is set in the environment perch hands to perch-ui:
	// a perch that finds it set was itself started in perch-ui's place
	// (PERCH_UI or an install pointing at a perch without the UI), and
	// fails instead of handing over again, forever. perch-ui removes it
	// before it runs anything.
	EnvHandedOver = "PERCH_UI_HANDED_OVER"
	// Install says how to get perch-ui.
	Install = "install it with `go install github.com/perch-tui/perch/cmd/perch-ui@latest`, " +
		"or build it next to perch (`go build -o DIR/ . ./cmd/perch-ui` in a clone), " +
		"or name it with " + EnvProgram + "=/path/to/perch-ui"
)

// Finder looks perch-ui up. Its functions are the process's own in
// perch (os.Executable, exec.LookPath, os.Getenv); tests replace them.
type Finder struct {
	Executable func() (string, error)
	LookPath   func(file string) (string, error)
	Getenv     func(key string) string
}

// OS is the Finder of the running process.
func OS() Finder {
	return Finder{Executable: os.Executable, LookPath: exec.LookPath, Getenv: os.Getenv}
}

// ErrNotFound is wrapped by the error Find returns when perch-ui is not
// installed where perch looks.
var ErrNotFound = errors.New(Program + " not found")

// Find returns the path of perch-ui: $PERCH_UI when it is set, else the
// program next to perch's own executable (symbolic links resolved, so a
// link to perch in a bin directory finds the perch-ui of its install),
// else the one on PATH. Its error says what is missing, where perch looked
// and how to install it.
func (f Finder) Find() (string, error) {
	if from := f.Getenv(EnvHandedOver); from != "" {
		self, err := f.Executable()
		if err != nil {
			self = "the program started"
		}
		return "", fmt.Errorf("%s handed the terminal UI over to %s, which has no UI either "+
			"(it is perch's command line, not %s; is %s wrong?): %s", from, self, Program, EnvProgram, Install)
	}
	if p := f.Getenv(EnvProgram); p != "" {
		if !strings.ContainsRune(p, filepath.Separator) {
			if lp, err := f.LookPath(p); err == nil {
				p = lp // a bare name is looked up on PATH, as a shell would
			}
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("the terminal UI is in %s, and %s names %s: %w; point %s at %s, or unset it",
				Program, EnvProgram, p, err, EnvProgram, Program)
		}
		return p, nil
	}
	name := Program
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var looked []string
	if self, err := f.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		next := filepath.Join(filepath.Dir(self), name)
		if executable(next) == nil {
			return next, nil
		}
		looked = append(looked, next)
	}
	if p, err := f.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, nil
	}
	looked = append(looked, "the directories in $PATH")
	return "", fmt.Errorf("the terminal UI is a separate program, %w (looked at %s): %s",
		ErrNotFound, strings.Join(looked, " and in "), Install)
}

// executable says why path is not a program perch can start, or nil.
func executable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return errors.Unwrap(err) // "no such file or directory", without the path again
	case fi.IsDir():
		return errors.New("a directory")
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// Env is the environment handed to perch-ui: the process's own, with
// extra ("KEY=value") replacing any value of the same keys, and
// EnvHandedOver naming perch (self).
func Env(environ []string, self string, extra ...string) []string {
	out := make([]string, 0, len(environ)+1+len(extra))
	replaced := func(kv string) bool {
		for _, e := range extra {
			if k, _, _ := strings.Cut(e, "="); strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return strings.HasPrefix(kv, EnvHandedOver+"=")
	}
	for _, kv := range environ {
		if !replaced(kv) {
			out = append(out, kv)
		}
	}
	out = append(out, extra...)
	return append(out, EnvHandedOver+"="+self)
}

// Start finds perch-ui and hands the process over to it with args (the
// arguments after the program name) and this process's environment, with
// extra ("KEY=value") set in it. It returns only when it could not; see
// Exec.
func Start(args []string, extra ...string) error {
	path, err := OS().Find()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return Exec(path, args, Env(os.Environ(), self, extra...))
}
