// Package tmuxinfo asks tmux, at the very start of a program that draws,
// whether it passes 24-bit colour, so that the question overlaps the rest of
// the program's start instead of preceding it.
//
// Inside tmux, lipgloss's package initialisation detects the colour profile
// and, to do so, runs `tmux info` and waits for it (15 to 65 ms on a busy
// machine) before main runs: nothing else happens meanwhile, and a program
// that draws nothing (perch's scriptable commands) pays it all the same.
// Start, called from the init of a package that Go initialises before
// lipgloss (it depends on the standard library alone), hides TMUX from the
// environment, so that lipgloss's detection does not ask tmux, and, when
// the program will draw, starts `tmux info` on a goroutine. main puts TMUX
// back first thing (Restore); the answer completes lipgloss's profile just
// before the first frame (internal/termprofile). perch calls it from
// internal/uiexec/early, perch-ui from cmd/perch-ui/internal/tmuxearly.
package tmuxinfo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Query is one `tmux info` run.
type Query struct {
	done      chan struct{}
	trueColor bool

	restore     func()
	restoreOnce sync.Once
}

// Start hides TMUX from lipgloss's initialisation and, when ask, asks
// tmux about colour on the side. It returns nil outside tmux, when
// standard output is not a terminal (lipgloss asks nothing then), and in a
// test binary (its environment is left alone).
func Start(ask bool) *Query {
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		return nil // a test binary: leave its environment alone
	}
	if !mayBeTerminal(os.Stdout) && !ttyForced(os.Getenv("TTY_FORCE")) {
		return nil // lipgloss will not ask tmux: nor do we
	}
	run := runTmuxInfo
	if !ask {
		run = nil
	}
	return start(os.LookupEnv, os.Environ, os.Unsetenv, os.Setenv, run)
}

// mayBeTerminal is true for a character device (a terminal, or /dev/null,
// which costs only a needless question): the standard library has no
// isatty, and a package that does would be initialised later.
func mayBeTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ttyForced reads TTY_FORCE as lipgloss's detection does (a boolean
// that makes any output count as a terminal).
func ttyForced(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}

// start begins the query when TMUX is set, hiding TMUX from the
// environment once the query's child has its own copy of it; a nil run
// only hides it (TrueColor then answers nothing).
func start(lookup func(string) (string, bool), environ func() []string, unset func(string) error,
	set func(string, string) error, run func(env []string) ([]byte, error)) *Query {
	v, ok := lookup("TMUX")
	if !ok || v == "" {
		return nil
	}
	q := &Query{}
	if run != nil {
		q.done = make(chan struct{})
		env := environ() // the child needs TMUX to find its server
		go func() {
			defer close(q.done)
			out, err := run(env)
			q.trueColor = err == nil && passesTrueColor(out)
		}()
	}
	_ = unset("TMUX")
	q.restore = func() { _ = set("TMUX", v) }
	return q
}

func runTmuxInfo(env []string) ([]byte, error) {
	cmd := exec.Command("tmux", "info")
	cmd.Env = env
	return cmd.Output()
}

// passesTrueColor reads `tmux info`: tmux passes 24-bit colour when the
// outer terminal's Tc or RGB capability is set ("Tc: (flag) true"). The
// test is the loose one lipgloss applies to the same output, so that the
// profile is the one it would have detected.
func passesTrueColor(out []byte) bool {
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		if (bytes.Contains(line, []byte("Tc")) || bytes.Contains(line, []byte("RGB"))) &&
			bytes.Contains(line, []byte("true")) {
			return true
		}
	}
	return false
}

// Restore puts TMUX back into the environment (for the programs perch-ui
// starts, and Bubble Tea's view of the terminal). Safe to call more than
// once, and on nil.
func (q *Query) Restore() {
	if q == nil {
		return
	}
	q.restoreOnce.Do(q.restore)
}

// TrueColor waits up to timeout for tmux's answer. answered is false when
// tmux did not answer in time; trueColor is false when tmux failed or
// does not pass 24-bit colour.
func (q *Query) TrueColor(timeout time.Duration) (trueColor, answered bool) {
	if q == nil || q.done == nil {
		return false, false
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-q.done:
		return q.trueColor, true
	case <-t.C:
		return false, false
	}
}
