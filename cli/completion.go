package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/perch-tui/perch/client/registry"
)

// perch completion SHELL prints a completion script. The commands and
// their flags come from the commands themselves: each is run with
// Env.listFlags set, which hands over its flag set where it would parse
// its arguments, so the script cannot fall behind a new flag.

// cmdFlags is one command's flags, for completion.
type cmdFlags struct {
	name, summary string
	file          bool // its argument is a file (import, replay)
	flags         []compFlag
}

type compFlag struct {
	name, usage string
	takesValue  bool
}

// values lists what a flag's value may be, where perch knows it.
func (f compFlag) values() []string {
	switch f.name {
	case "from", "system":
		return registry.Names()
	case "by":
		return []string{"day", "week", "month", "session", "project", "model"}
	case "role":
		return []string{"user", "assistant", "tool"}
	case "backend", "kind":
		return registry.LiveNames()
	case "theme":
		return []string{"auto", "dark", "light"}
	case "dialect":
		return []string{"head", "docs", "legacy"}
	}
	return usageValues(f.usage)
}

// valueList finds the list of values a flag's usage gives after its
// colon ("output format: md, json or jsonl (…)"; a word's own note in
// parentheses is left out).
var valueList = regexp.MustCompile(`^[^:(]*: ((?:[a-z0-9-]+(?: \([^)]*\))?, )*[a-z0-9-]+(?: \([^)]*\))? or [a-z0-9-]+)\b`)

// usageValues are the values a usage lists, nil when it lists none: the
// flags whose values perch names in its help (--format) complete too.
func usageValues(usage string) []string {
	m := valueList.FindStringSubmatch(usage)
	if m == nil {
		return nil
	}
	var out []string
	for _, v := range regexp.MustCompile(`, | or `).Split(m[1], -1) {
		if i := strings.Index(v, " ("); i >= 0 {
			v = v[:i]
		}
		out = append(out, v)
	}
	return out
}

// fileValue: the flag names a file.
func (f compFlag) fileValue() bool { return f.name == "o" || f.name == "replay" }

// dash is how the flag is written: -o, -v, --url.
func (f compFlag) dash() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

// short is the first clause of the flag's usage, for a shell's menu.
func (f compFlag) short() string {
	u := f.usage
	for _, sep := range []string{" (", "; "} {
		if i := strings.Index(u, sep); i > 0 {
			u = u[:i]
		}
	}
	return u
}

// completionTable asks every command (and perch itself, "") for its flags.
func completionTable(ctx context.Context, env Env) []cmdFlags {
	collect := func(run func(context.Context, Env, []string) error) []compFlag {
		var out []compFlag
		e := env
		e.Stdout, e.Stderr = io.Discard, io.Discard
		e.listFlags = func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) {
				bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
				out = append(out, compFlag{name: f.Name, usage: f.Usage, takesValue: !isBool || !bf.IsBoolFlag()})
			})
		}
		_ = run(ctx, e, nil)
		return out
	}
	table := []cmdFlags{{name: "", flags: collect(runRoot)}}
	for _, c := range commands() {
		table = append(table, cmdFlags{name: c.name, summary: c.summary, file: c.args == "FILE" || c.args == "[FILE…]", flags: collect(c.run)})
	}
	return table
}

func runCompletion(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "completion")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	shells := map[string]func(io.Writer, []cmdFlags){"bash": writeBash, "zsh": writeZsh, "fish": writeFish}
	write, ok := shells[pos[0]]
	if !ok {
		return usagef("completion: no script for %q; the shells are bash, zsh and fish%s", pos[0], didYouMean(pos[0], []string{"bash", "zsh", "fish"}))
	}
	var b strings.Builder
	write(&b, completionTable(ctx, env))
	_, err = io.WriteString(env.Stdout, b.String())
	return err
}

// commandNames and extra words perch takes (help, version).
func commandWords() []string { return append(commandNames(), "help", "version") }

func writeBash(w io.Writer, table []cmdFlags) {
	// Only perch's own flags come before the command word.
	var lead []string
	for _, f := range table[0].flags {
		if f.takesValue {
			lead = append(lead, "-"+f.name, "--"+f.name)
		}
	}
	fmt.Fprintf(w, `# bash completion for perch: source <(perch completion bash)
_perch() {
    local cur prev cmd i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            %s) ((i++)) ;;
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$prev" in
`, strings.Join(lead, "|"))
	done := map[string]bool{}
	var other []string
	for _, c := range table {
		for _, f := range c.flags {
			if done[f.name] || !f.takesValue {
				continue
			}
			done[f.name] = true
			switch {
			case f.values() != nil:
				fmt.Fprintf(w, "        -%s|--%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", f.name, f.name, strings.Join(f.values(), " "))
			case f.fileValue():
				fmt.Fprintf(w, "        -%s|--%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f.name, f.name)
			case f.name == "url" || f.name == "token" || f.name == "header":
				other = append(other, "-"+f.name, "--"+f.name)
			}
		}
	}
	fmt.Fprintf(w, "        %s) COMPREPLY=(); return ;;\n    esac\n", strings.Join(other, "|"))
	fmt.Fprint(w, "    if [[ \"$cur\" == -* ]]; then\n        case \"$cmd\" in\n")
	for _, c := range table {
		name := c.name
		if name == "" {
			name = `""`
		}
		fmt.Fprintf(w, "            %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", name, flagWords(c.flags))
	}
	var files []string
	for _, c := range table {
		if c.file {
			files = append(files, c.name)
		}
	}
	fmt.Fprintf(w, `        esac
        return
    fi
    case "$cmd" in
        "") COMPREPLY=($(compgen -W %q -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W %q -- "$cur")) ;;
        completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
        config) COMPREPLY=($(compgen -W "path" -- "$cur")) ;;
        %s) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}
complete -F _perch perch
`, strings.Join(commandWords(), " "), strings.Join(commandNames(), " "), strings.Join(files, "|"))
}

func flagWords(flags []compFlag) string {
	var out []string
	for _, f := range flags {
		out = append(out, f.dash())
	}
	return strings.Join(out, " ")
}

func writeZsh(w io.Writer, table []cmdFlags) {
	esc := strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`)
	spec := func(f compFlag) string {
		s := fmt.Sprintf("'%s[%s]", f.dash(), esc.Replace(f.short()))
		switch {
		case !f.takesValue:
		case f.values() != nil:
			s += fmt.Sprintf(":%s:(%s)", f.name, strings.Join(f.values(), " "))
		case f.fileValue():
			s += ":file:_files"
		default:
			s += ":" + f.name + ":"
		}
		return s + "'"
	}
	fmt.Fprint(w, "#compdef perch\n# zsh completion for perch: perch completion zsh > \"${fpath[1]}/_perch\"\n_perch() {\n    local curcontext=\"$curcontext\" state line\n    typeset -A opt_args\n    local -a commands\n    commands=(\n")
	for _, c := range table[1:] {
		fmt.Fprintf(w, "        '%s:%s'\n", c.name, esc.Replace(c.summary))
	}
	fmt.Fprint(w, "        'help:show the help of perch or of a command'\n        'version:print the version and commit'\n    )\n    _arguments -C \\\n")
	for _, f := range table[0].flags {
		fmt.Fprintf(w, "        %s \\\n", spec(f))
	}
	fmt.Fprint(w, "        '1: :->cmds' \\\n        '*:: :->args'\n    case $state in\n        cmds) _describe -t commands 'perch command' commands ;;\n        args)\n            case $line[1] in\n")
	for _, c := range table[1:] {
		fmt.Fprintf(w, "                %s) _arguments", c.name)
		for _, f := range c.flags {
			fmt.Fprintf(w, " \\\n                    %s", spec(f))
		}
		switch {
		case c.file:
			fmt.Fprint(w, " \\\n                    '1:file:_files'")
		case c.name == "completion":
			fmt.Fprint(w, " \\\n                    '1:shell:(bash zsh fish)'")
		case c.name == "config":
			fmt.Fprint(w, " \\\n                    '1:what:(path)'")
		}
		fmt.Fprint(w, " ;;\n")
	}
	fmt.Fprint(w, "                help) _describe -t commands 'perch command' commands ;;\n            esac ;;\n    esac\n}\n_perch \"$@\"\n")
}

func writeFish(w io.Writer, table []cmdFlags) {
	esc := strings.NewReplacer(`\`, `\\`, "'", `\'`)
	fmt.Fprint(w, "# fish completion for perch: perch completion fish > ~/.config/fish/completions/perch.fish\ncomplete -c perch -f\n")
	for _, c := range table[1:] {
		fmt.Fprintf(w, "complete -c perch -n '__fish_use_subcommand' -a %s -d '%s'\n", c.name, esc.Replace(c.summary))
	}
	fmt.Fprint(w, "complete -c perch -n '__fish_use_subcommand' -a help -d 'show the help of perch or of a command'\n")
	fmt.Fprint(w, "complete -c perch -n '__fish_use_subcommand' -a version -d 'print the version and commit'\n")
	fmt.Fprintf(w, "complete -c perch -n '__fish_seen_subcommand_from help' -a '%s'\n", strings.Join(commandNames(), " "))
	for _, c := range table {
		cond := "__fish_use_subcommand"
		if c.name != "" {
			cond = "__fish_seen_subcommand_from " + c.name
		}
		for _, f := range c.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			line := fmt.Sprintf("complete -c perch -n '%s' %s -d '%s'", cond, opt, esc.Replace(f.short()))
			switch {
			case !f.takesValue:
			case f.values() != nil:
				line += fmt.Sprintf(" -x -a '%s'", strings.Join(f.values(), " "))
			case f.fileValue():
				line += " -r -F"
			default:
				line += " -x"
			}
			fmt.Fprintln(w, line)
		}
		switch {
		case c.file:
			fmt.Fprintf(w, "complete -c perch -n '%s' -F\n", cond)
		case c.name == "completion":
			fmt.Fprintf(w, "complete -c perch -n '%s' -a 'bash zsh fish'\n", cond)
		case c.name == "config":
			fmt.Fprintf(w, "complete -c perch -n '%s' -a path\n", cond)
		}
	}
}
