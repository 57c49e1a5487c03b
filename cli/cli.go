// Package cli is perch's command line: argument parsing, the scriptable
// commands, and the entry points of the terminal UI and the fake daemon.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tui"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Env is everything a command may touch of the outside world, so tests can
// run commands in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Home   string // for ~/.moonagent/daemon.json
	// LookupHost resolves host names for a backend that dials by itself
	// (client.Config.LookupHost: maria's localhost fallback); nil means
	// the system resolver.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	Cwd        string // default for `new --cwd`
	// IsTerminal reports whether stdout is a terminal (colour, TUI).
	IsTerminal bool
	// StderrIsTerminal reports whether stderr is a terminal: notes for
	// people (which system answered a URL) are said there only then,
	// or with -v.
	StderrIsTerminal bool
	// openUI replaces the terminal UI (tests): it is handed what the
	// command would show; nil means tui.Run.
	openUI func(ctx context.Context, b client.Backend, c tui.Config) error

	// secrets are values (the token) never to be printed; Main sets it.
	secrets *secrets
	// registry replaces the live backends (tests); nil means registry.Default.
	registry func() *registry.Registry
	// conf is the config file, read once per run by the first command
	// that needs it (Main sets it; nil reads it at each ask).
	conf *configState
	// listFlags, when set, is handed each command's flags instead of
	// running it (perch completion asks the commands for their flags).
	listFlags func(*flag.FlagSet)
}

// OSEnv is the Env of the running process.
func OSEnv() Env {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Home: home, Cwd: cwd,
		IsTerminal: isTerminal(os.Stdout), StderrIsTerminal: isTerminal(os.Stderr)}
}

func isTerminal(f *os.File) bool {
	fi, _ := f.Stat()
	return fi != nil && fi.Mode()&os.ModeCharDevice != 0
}

// usageError is a mistake in how perch was called: exit code 2. cmd is
// the command it was made with ("" for perch itself), whose help Main
// points to.
type usageError struct{ msg, cmd string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// command is one subcommand.
type command struct {
	name    string
	args    string // synopsis of positional arguments
	summary string
	example string
	run     func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"attach", "TASK", "open a task in the terminal UI (TASK may be a unique id prefix)",
			"perch attach 3f2b\nperch attach 3f2b --url http://localhost:8090/v1", runAttach},
		{"demo", "", "start the built-in fake daemon with a demo task and open it",
			"perch demo\nperch demo --speed 3 --dialect legacy\nperch demo --all --serve   # then: perch watch --url … --url … --url …", runDemo},
		{"tasks", "", "list the daemon's tasks with status, name, cwd, model and queue (--all: every source's sessions, as the board shows them)",
			"perch tasks\nperch tasks --json\nperch tasks --all --url http://localhost:8090/v1 --url http://localhost:8484", runTasks},
		{"watch", "", "print one line per change of a session's state, and per source going down or up, across every source (--json: one object a line; --snapshot: every session first)",
			"perch watch\nperch watch --json | jq -r 'select(.type == \"session\" and .reason != \"\") | .name'\nperch watch --json --snapshot", runWatch},
		{"tail", "TASK", "follow a task's timeline as readable text (or --jsonl) until interrupted (--until-idle: until the run ends)",
			"perch tail 3f2b\nperch tail 3f2b --jsonl | jq .\nperch tail 3f2b --until-idle && notify-send 'run over'", runTail},
		{"export", "TASK", "print the transcript once the replay is in (--until-idle: after the run ends)",
			"perch export 3f2b --format md > session.md\nperch export 3f2b --format jsonl --until-idle", runExport},
		{"send", "TASK TEXT", "send a message (TEXT '-' reads stdin), or --hold it; kept by perch until the daemon has it",
			"perch send 3f2b 'Also add a CHANGELOG entry'\necho 'run the tests' | perch send 3f2b - --json\nperch send 3f2b 'then update the docs' --hold", runSend},
		{"cancel", "TASK", "cancel the running turn; the queued messages it recovered become held messages",
			"perch cancel 3f2b", runCancel},
		{"queue", "TASK", "show the daemon's queue and perch's held messages; edit, move, delete, release them",
			"perch queue 3f2b --json\nperch queue 3f2b --edit k3x9 'new text'\nperch queue 3f2b --move k3x9 1\nperch queue 3f2b --delete q7aa\nperch queue 3f2b --release\nperch queue 3f2b --pause", runQueue},
		{"new", "TEXT", "create a task with a first message and print its id",
			"perch new --cwd ~/src/app 'What does this project do?'", runNew},
		{"record", "TASK", "write the task's raw event stream to a file (-o FILE)",
			"perch record 3f2b -o session.sse --until-idle", runRecord},
		{"replay", "FILE", "open a transcript file of any known system in the terminal UI, read-only (or print it with --format); FILE may be an indexed session's id, also when its file is gone",
			"perch replay session.sse\nperch replay thread.json --from suna\nperch replay session.sse --format md\nperch replay 3f2b   # a session perch search found", runReplay},
		{"import", "FILE", "print a transcript file of any known system (maria, suna, pynchy, attocode, provider logs) as perch's export; FILE - reads stdin",
			"perch import thread.json --format md\nperch import history.json --from pynchy --chat tui:alice\ncodex exec --json 'fix the tests' | perch import - --format md", runImport},
		{"index", "[FILE…]", "read sessions into the index that search and usage ask (no FILE: the local Claude Code and Codex sessions and every session indexed before)",
			"perch index\nperch index ~/logs/run.jsonl --from claude-code\nperch index --live --url http://localhost:8000/v1\nperch index --forget 3f2b\nperch index --rebuild", runIndex},
		{"search", "QUERY", "find messages across every indexed session: words, \"phrases\", prefix*; newest first",
			"perch search flaky test\nperch search '\"go test\" timeout*' --role tool --tool Bash --since 7d\nperch search migration --project ~/src/app --json | jq -r .session", runSearch},
		{"usage", "", "tokens and cost of the indexed sessions by day, week, month, session, project or model",
			"perch usage\nperch usage --by session --since 2026-01-01\nperch usage --by model --json", runUsage},
		{"config", "[path]", "print the settings in effect and where each comes from (the token redacted), or where the config file is",
			"perch config\nperch config path\n$EDITOR \"$(perch config path)\"", runConfig},
		{"completion", "bash|zsh|fish", "print a completion script for bash, zsh or fish",
			"source <(perch completion bash)        # in ~/.bashrc\nperch completion zsh > \"${fpath[1]}/_perch\"\nperch completion fish > ~/.config/fish/completions/perch.fish", runCompletion},
		{"fake-daemon", "", "run a fake server on its own (maria's daemon, or --kind suna|pynchy) and print its URL",
			"perch fake-daemon --addr localhost:8090 --dialect docs --speed 2\nperch fake-daemon --kind suna --addr localhost:8000 --token dev\nperch fake-daemon --kind pynchy --addr localhost:8484", runFakeDaemon},
	}
}

// Main runs perch with args (without the program name) and returns the
// exit code. Errors are one clear line on stderr, never a stack trace.
func Main(ctx context.Context, env Env, args []string) int {
	if env.secrets == nil {
		env.secrets = &secrets{}
	}
	if env.conf == nil {
		env.conf = &configState{}
	}
	env.Stderr = redactWriter{w: env.Stderr, s: env.secrets}
	err := dispatch(ctx, env, args)
	if sig, ok := interruption(ctx); ok {
		// Ctrl-C: say so, and exit as a shell would report it. A command
		// with more to say (export printed what it had, marked
		// incomplete) says it in its error.
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(env.Stderr, "perch: %v\n", err)
		} else {
			fmt.Fprintf(env.Stderr, "perch: %s\n", sig.word())
		}
		return sig.exitCode()
	}
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, new(usageError)):
		var ue usageError
		errors.As(err, &ue)
		if ue.cmd != "" {
			fmt.Fprintf(env.Stderr, "perch: %v\nRun 'perch %s --help' for its flags and examples.\n", err, ue.cmd)
		} else {
			fmt.Fprintf(env.Stderr, "perch: %v\nRun 'perch --help' for usage.\n", err)
		}
		return ExitUsage
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return ExitOK // ended by the caller (not a signal): a normal way to stop tail
	default:
		if noDaemon(err) {
			fmt.Fprintf(env.Stderr, "perch: %v%s\n", err, demoHint)
		} else {
			fmt.Fprintf(env.Stderr, "perch: %v\n", err)
		}
		return ExitFailure
	}
}

// hoistCommand lets connection flags come before the command name
// ("perch --url U tasks"): it moves them after it.
func hoistCommand(args []string) []string {
	var lead []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		switch {
		case !strings.HasPrefix(a, "-"):
			for _, c := range commands() {
				if c.name == a {
					return append(append([]string{a}, lead...), args[i+1:]...)
				}
			}
			return args
		case name == "v" || strings.HasPrefix(name, "v="):
			lead = append(lead, a) // -v takes no value
		case connFlag(name):
			if i+1 < len(args) {
				lead = append(lead, a, args[i+1])
				i++
			}
		case connFlag(strings.SplitN(name, "=", 2)[0]) && strings.Contains(name, "="):
			lead = append(lead, a)
		default:
			return args
		}
	}
	return args
}

// connFlag: the connection flags every command takes.
func connFlag(name string) bool {
	switch name {
	case "url", "header", "backend", "token":
		return true
	}
	return false
}

func dispatch(ctx context.Context, env Env, args []string) error {
	args = hoistCommand(args)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			printUsage(env.Stdout)
			return nil
		}
		if len(args) > 0 && args[0] == "--version" {
			fmt.Fprintln(env.Stdout, versionText())
			return nil
		}
		return runRoot(ctx, env, args)
	}
	name := args[0]
	if name == "help" {
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					return c.run(ctx, env, []string{"--help"})
				}
			}
		}
		printUsage(env.Stdout)
		return nil
	}
	if name == "version" {
		fmt.Fprintln(env.Stdout, versionText())
		return nil
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, env, args[1:])
			if ue, ok := err.(usageError); ok && ue.cmd == "" {
				ue.cmd = c.name
				return ue
			}
			return err
		}
	}
	return usagef("unknown command %q%s", name, didYouMean(name, commandNames()))
}

// commandNames lists the commands, in the order help shows them.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `perch — a terminal client for live agent sessions (maria, Suna, pynchy)

Usage:
  perch [--url URL]          open the task list of the daemon it finds
  perch COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands() {
		syn := strings.TrimSpace(c.name + " " + c.args)
		fmt.Fprintf(w, "  %-22s %s\n", syn, c.summary)
	}
	fmt.Fprint(w, `
Connection flags (every command):
  --url URL               server base URL, e.g. http://localhost:8090/v1 (maria),
                          http://localhost:8000/v1 (Suna), http://localhost:8484 (pynchy)
                          (default: $PERCH_URL, else url in the config file, else maria's
                          port in ~/.moonagent/daemon.json)
  --backend NAME          the server's system: maria, suna or pynchy (default: $PERCH_BACKEND,
                          else the config file's, else perch asks the URL)
  --token TOKEN           bearer token for the server (default: $PERCH_TOKEN, else the
                          config file's token_command; never printed)
  --header 'Name: value'  extra request header, repeatable (values are never printed)
  -v                      say which system answered the URL (said anyway when stderr is a terminal)

Flags may come before or after the arguments. A TASK may be any unique
prefix of its id. Exit codes: 0 ok, 1 failure, 2 usage, 130 interrupted.
Settings: 'perch config' (the file: 'perch config path'). Flags win over
the environment, which wins over the config file.
Run 'perch COMMAND --help' for a command's flags and examples.
`)
}

// conn holds the connection flags every command takes.
type conn struct {
	url     string
	urls    []string // every --url given, in order (url is the last)
	headers headerList
	backend string
	token   string
	cmd     string // the command, for messages
	// mariaOnly: a maria daemon whatever the environment says (the demo's
	// own fake daemon).
	mariaOnly bool
	// noLocal: the board's sources without the local CLIs (perch index
	// reads their sessions as the files they are, not as live sources).
	noLocal bool
	// probedTasks is the task list the probe read while open asked which
	// system answers at the URL (nil: no probe, a system whose probe reads
	// none, or a list that did not decode): the UI shows it instead of
	// asking again.
	probedTasks []events.Task
	// verbose (-v): say which system answered the URL even when stderr
	// is not a terminal.
	verbose bool
	// opened is the backend open returned: a command that asks again (the
	// UI commands) gets the same one, probed once.
	opened client.Backend
	// given is the URL opened, as the user (or discovery) gave it: the
	// board's seen marks are keyed by it (seenMarker).
	given string
}

// urlFlag is --url: the last one given, and all of them for the
// commands that watch several sources.
type urlFlag struct{ c *conn }

func (u urlFlag) String() string {
	if u.c == nil {
		return ""
	}
	return u.c.url
}

func (u urlFlag) Set(v string) error {
	u.c.url = v
	u.c.urls = append(u.c.urls, v)
	return nil
}

type headerList []string

func (h *headerList) String() string     { return fmt.Sprintf("%d header(s)", len(*h)) }
func (h *headerList) Set(v string) error { *h = append(*h, v); return nil }

func (c *conn) register(fs *flagSet) {
	c.cmd = fs.Name()
	fs.Var(urlFlag{c}, "url", "server base URL (default $PERCH_URL, else the config file's url, else maria's ~/.moonagent/daemon.json); watch and tasks --all take several")
	fs.Var(&c.headers, "header", "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&c.backend, "backend", "", "the server's system: maria, suna or pynchy (default $PERCH_BACKEND, else the config file's, else asked of the URL)")
	fs.StringVar(&c.token, "token", "", "bearer token for the server (default $PERCH_TOKEN, else the config file's token_command; never printed)")
	fs.BoolVar(&c.verbose, "v", false, "say which system answered the URL (said anyway when stderr is a terminal)")
}

// flagSet is a command's flags plus its help text.
type flagSet struct {
	*flag.FlagSet
	help func()
	// list is Env.listFlags.
	list func(*flag.FlagSet)
}

// newFlagSet makes a FlagSet that reports errors once (as a usage error)
// and prints the command's help with examples on -h/--help.
func newFlagSet(env Env, cmd string) *flagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	help := func() {
		for _, c := range commands() {
			if c.name != cmd {
				continue
			}
			fmt.Fprintf(env.Stdout, "Usage: perch %s [flags]\n\n%s\n\nFlags:\n", strings.TrimSpace(cmd+" "+c.args), c.summary)
			// As README writes flags: --name.
			var b strings.Builder
			fs.SetOutput(&b)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			io.WriteString(env.Stdout, flagLine.ReplaceAllString(b.String(), "$1--$2"))
			fmt.Fprintf(env.Stdout, "\nExamples:\n")
			for _, ex := range strings.Split(c.example, "\n") {
				fmt.Fprintf(env.Stdout, "  %s\n", ex)
			}
			return
		}
		printUsage(env.Stdout)
	}
	return &flagSet{FlagSet: fs, help: help, list: env.listFlags}
}

// parse parses flags that may come before or after positional arguments;
// everything after "--" is positional. It checks the positional count.
func parse(fs *flagSet, args []string, min, max int) ([]string, error) {
	if fs.list != nil {
		fs.list(fs.FlagSet)
		return nil, flag.ErrHelp // stop here: the command was asked its flags
	}
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.help()
				return nil, err
			}
			return nil, usagef("%s: %s%s", fs.Name(), dashDash(err.Error()), flagHint(fs, err))
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	pos = append(pos, tail...)
	if len(pos) < min {
		return nil, usagef("%s: missing argument (want %s)", fs.Name(), synopsis(fs.Name()))
	}
	if max >= 0 && len(pos) > max {
		return nil, usagef("%s: too many arguments %q (want %s; quote TEXT with spaces)", fs.Name(), pos[max:], synopsis(fs.Name()))
	}
	return pos, nil
}

func synopsis(cmd string) string {
	for _, c := range commands() {
		if c.name == cmd {
			if c.args == "" {
				return "no arguments"
			}
			return c.args
		}
	}
	return "?"
}

// flagLine is a flag's line in the flag package's defaults ("  -name").
var flagLine = regexp.MustCompile(`(?m)^(  )-([A-Za-z])`)

// flagRef is a flag named in the flag package's errors ("-name").
var flagRef = regexp.MustCompile(`(: |flag |for )-([A-Za-z][A-Za-z0-9-]*)`)

// dashDash spells the flags of a flag package error as README does:
// --name, not -name.
func dashDash(s string) string { return flagRef.ReplaceAllString(s, "$1--$2") }

// oneOf validates an enumerated flag value.
func oneOf(flagName, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	hint := didYouMean(v, allowed)
	sort.Strings(allowed)
	return usagef("--%s must be one of %s, not %q%s", flagName, strings.Join(allowed, ", "), v, hint)
}

// flagHint suggests the flag nearest to one the flag package did not
// know ("flag provided but not defined: -NAME", its stable wording).
func flagHint(fs *flagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if hint := didYouMean(strings.TrimPrefix(name, "-"), names); hint != "" {
		return strings.Replace(hint, "mean ", "mean --", 1)
	}
	return ""
}
