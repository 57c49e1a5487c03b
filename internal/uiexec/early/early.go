// Package early hands perch over to perch-ui during package
// initialisation, before the rest of perch's packages are initialised,
// when the command line certainly opens the UI: bare perch (with only its
// own flags), attach and demo. Imported for that effect by perch's main
// only (never by perch-ui, which would hand over to itself).
//
// It depends on the standard library and package uiexec alone, and its
// import path sorts before the modules perch links (golang.org/x,
// modernc.org, r3labs), so Go initialises it early: a UI launch then pays
// perch's runtime start, not its package initialisation, before perch-ui's.
// Anything it is unsure of (help, an unknown flag, another command) and a
// missing perch-ui are left to the command line, which decides again,
// and says what is wrong.
package early

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/perch-tui/perch/internal/tmuxinfo"
	"github.com/perch-tui/perch/internal/uiexec"
)

// tmux is the colour question started at initialisation (see init).
var tmux *tmuxinfo.Query

func init() {
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		return // a test binary of package main
	}
	paint := paintSupported && MayPaintFirst(os.Args[1:], os.Getenv, terminals())
	if !OpensUI(os.Args[1:]) || paint {
		// perch goes on: lipgloss, linked for the first paint, must not
		// run `tmux info` in its initialisation (a scriptable command
		// draws nothing); the first paint asks tmux on the side.
		tmux = tmuxinfo.Start(paint)
		return
	}
	path, err := uiexec.OS().Find()
	if err != nil {
		tmux = tmuxinfo.Start(false)
		return // the command line says so, after its own checks
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	// On success this never returns; on failure the command line tries
	// again and reports.
	_ = uiexec.Exec(path, os.Args[1:], uiexec.Env(os.Environ(), self))
	tmux = tmuxinfo.Start(false)
}

// Tmux is the question about tmux's colour that initialisation started
// (internal/tmuxinfo): main restores TMUX with it first thing. nil outside
// tmux.
func Tmux() *tmuxinfo.Query { return tmux }

// valueFlags are the flags of bare perch and their values: the connection
// flags of every command, and --theme and --model.
var valueFlags = map[string]bool{"url": true, "header": true, "backend": true, "token": true, "theme": true, "model": true}

// connFlags may also come before a command's name.
var connFlags = map[string]bool{"url": true, "header": true, "backend": true, "token": true}

// OpensUI says whether perch invoked with args surely opens the terminal
// UI: no command, or attach or demo, and no request for help. false means
// "let the command line decide".
func OpensUI(args []string) bool {
	for _, a := range args {
		switch strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0] {
		case "h", "help", "version":
			if strings.HasPrefix(a, "-") {
				return false
			}
		}
	}
	// Connection flags may come before the command (perch --url U attach X).
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		name, hasValue := flagName(args[i])
		if !connFlags[name] {
			break
		}
		i++
		if !hasValue {
			if i == len(args) {
				return false // a flag without its value: a usage error
			}
			i++
		}
	}
	if i < len(args) && !strings.HasPrefix(args[i], "-") {
		return args[i] == "attach" || args[i] == "demo"
	}
	// Bare perch: every argument is one of its flags.
	for i < len(args) {
		name, hasValue := flagName(args[i])
		if !strings.HasPrefix(args[i], "-") || !valueFlags[name] {
			return false
		}
		i++
		if !hasValue {
			if i == len(args) {
				return false // a flag without its value: a usage error
			}
			i++
		}
	}
	return true
}

// flagName is a flag argument's name ("--url=x" → "url", true).
func flagName(arg string) (name string, hasValue bool) {
	name, _, hasValue = strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, hasValue
}

// paintSupported is internal/firstpaint's Supported (a test holds them
// equal; importing firstpaint would initialise this package after
// lipgloss): elsewhere than Linux perch does not paint, and bare perch is
// handed over here as attach is.
const paintSupported = runtime.GOOS == "linux"

// MayPaintFirst says whether bare perch with args may draw the task list
// itself before it hands over (the command line's paintFirst): it needs the
// command line's packages, so the hand-over waits for them. That is bare
// perch at a URL (--url or PERCH_URL) whose system it probes (no --backend
// or PERCH_BACKEND), on a terminal.
func MayPaintFirst(args []string, getenv func(string) string, onTerminal bool) bool {
	if !onTerminal || (len(args) > 0 && !strings.HasPrefix(args[0], "-")) {
		return false // not a terminal, or a command (attach, demo)
	}
	url := getenv("PERCH_URL") != ""
	named := getenv("PERCH_BACKEND") != ""
	for i := 0; i < len(args); i++ {
		name, hasValue := flagName(args[i])
		switch name {
		case "url":
			url = true
		case "backend":
			named = true
		}
		if !hasValue {
			i++ // its value (OpensUI checked that every flag has one)
		}
	}
	return url && !named
}

// terminals reports whether standard input and output may be terminals
// (character devices; the standard library has no isatty, and a package
// that does would be initialised later).
func terminals() bool {
	for _, f := range []*os.File{os.Stdin, os.Stdout} {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			return false
		}
	}
	return true
}
