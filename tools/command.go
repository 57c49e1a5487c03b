package tools

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The regular expressions are compiled when first used, not at package
// initialisation, which every perch command pays (docs/performance.md,
// "Startup").
var commandHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^Command (.*?) (exited with status (-?\d+)|timed out after \d+ seconds)\.`)
})

// ParseCommand reads maria's execute_command text (FormatCommand):
// "Command <cmd> exited with status <n>." then optional "=== STDOUT (k
// lines) ===" / STDERR sections. args are the call's; nil when the text is
// not of this format.
func ParseCommand(text string, args json.RawMessage) *CommandResult {
	cmd := Arg(args, "command")
	c := &CommandResult{Command: cmd}
	prefix := "Command " + cmd + " "
	rest := ""
	switch {
	case cmd != "" && strings.HasPrefix(text, prefix+"exited with status "):
		rest = text[len(prefix+"exited with status "):]
		end := strings.IndexByte(rest, '.')
		if end < 0 {
			return nil
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil {
			return nil
		}
		c.ExitCode = &n
		rest = rest[end+1:]
	case cmd != "" && strings.HasPrefix(text, prefix+"timed out after "):
		c.TimedOut = true
		rest = text[len(prefix):]
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
	default:
		m := commandHead().FindStringSubmatchIndex(text)
		if m == nil {
			return nil
		}
		c.Command = text[m[2]:m[3]]
		if m[6] >= 0 {
			n, _ := strconv.Atoi(text[m[6]:m[7]])
			c.ExitCode = &n
		} else {
			c.TimedOut = true
		}
		rest = text[m[1]:]
	}
	heads := sectionHeads(rest)
	for i, h := range heads {
		start := h[1]
		if start < len(rest) && rest[start] == '\n' {
			start++
		}
		end := len(rest)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		body := strings.TrimSuffix(rest[start:end], "\n")
		if rest[h[2]:h[3]] == "STDOUT" {
			c.Stdout = body
		} else {
			c.Stderr = body
		}
	}
	return c
}

// sectionHeads finds execute_command's "=== STDOUT (k lines) ===" and
// "=== STDERR (…) ===" lines, i.e. the matches of the regexp
// (?m)^=== (STDOUT|STDERR) \(([^)]*)\) ===$, as [start, end, name start,
// name end]. A hand scan: the regexp cost more than the rest of decoding a
// large output.
func sectionHeads(text string) [][4]int {
	var out [][4]int
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], "=== STD")
		if i < 0 {
			break
		}
		start := from + i
		from = start + 1
		if start > 0 && text[start-1] != '\n' {
			continue
		}
		rest := text[start+4:]
		if !strings.HasPrefix(rest, "STDOUT (") && !strings.HasPrefix(rest, "STDERR (") {
			continue
		}
		paren := strings.IndexByte(rest[8:], ')')
		if paren < 0 {
			continue
		}
		end := start + 4 + 8 + paren
		if !strings.HasPrefix(text[end:], ") ===") {
			continue
		}
		end += len(") ===")
		if end < len(text) && text[end] != '\n' {
			continue
		}
		out = append(out, [4]int{start, end, start + 4, start + 10})
		from = end
	}
	return out
}

// OutputMember is the "output" string of a command result reported as a
// JSON object ({"output": "…", "exit_code": 0, …}, as Suna's tools do), so
// that the command's output is shown rather than its JSON; any other text
// is returned as it is. Large texts are left alone: a renderer must not
// parse megabytes.
func OutputMember(text string) string {
	t := strings.TrimSpace(text)
	if len(t) > 1<<20 || !strings.HasPrefix(t, "{") || !strings.Contains(t, `"output"`) {
		return text
	}
	var v struct {
		Output *string `json:"output"`
	}
	if json.Unmarshal([]byte(t), &v) != nil || v.Output == nil {
		return text
	}
	return *v.Output
}

// claudeExitCode reads the status Claude Code's Bash tool puts first in a
// failed command's result ("Exit code 2\n…").
var claudeExitCode = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:Error: )?Exit code (-?\d{1,9})\b`)
})

// ClaudeExitCode is the exit status at the head of a failed Claude Code
// Bash result, if it has one.
func ClaudeExitCode(text string) (int, bool) {
	m := claudeExitCode().FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}
