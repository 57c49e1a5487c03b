package render

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// commandBody draws execute_command: an exit badge in the header, stdout,
// then stderr under a label in its own colour. Legacy builds send the
// parts structured; at HEAD only the text exists, so it is parsed
// (docs/protocol.md §7.1), and anything unparseable is shown as-is.
//
// mark is the header's status mark for how the command ended: ✓ exit 0,
// ✗ ran and exited non-zero, ⧖ timed out; "" when the output does not say
// (the tool's own status mark stays). The tool call itself succeeded in
// all of these; a failed tool is errorBody's.
func commandBody(r *Renderer, t *events.ToolItem, w int) (segs []seg, tags []string, mark string) {
	cr := t.Result.Command
	if cr == nil {
		cr = parseCommandText(t.Result.Text)
	}
	if cr == nil && t.Result.Exit() != nil {
		// A system that reports the exit status apart from the output.
		cr = &events.CommandResult{ExitCode: t.Result.Exit(), Stdout: t.Result.Text}
	}
	if cr == nil {
		segs, tags = genericBody(r, t, w)
		return segs, tags, ""
	}
	ts := r.st.Tool
	switch {
	case cr.TimedOut:
		tags = append(tags, ts.ExitBad.Render("timed out"))
		mark = ts.Status.TimedOut.Render(styles.IconTimedOut)
	case cr.ExitCode != nil && *cr.ExitCode == 0:
		tags = append(tags, ts.ExitOK.Render("exit 0"))
		mark = ts.Status.OK.Render(styles.IconOK)
	case cr.ExitCode != nil:
		tags = append(tags, ts.ExitBad.Render("exit "+strconv.Itoa(*cr.ExitCode)))
		mark = ts.Status.Failed.Render(styles.IconFailed)
	}
	stdout := trimTrailingNewlines(cr.Stdout)
	stderr := trimTrailingNewlines(cr.Stderr)
	hasOut, hasErr := strings.TrimSpace(stdout) != "", strings.TrimSpace(stderr) != ""
	if hasOut {
		if hasErr {
			segs = append(segs, linesSeg(r.p.label.on("stdout")))
		}
		segs = append(segs, textSeg(stdout, nil))
	}
	if hasErr {
		segs = append(segs, linesSeg(r.p.label.on("stderr")))
		p := r.p
		segs = append(segs, textSeg(stderr, func(_ int, ls []string, w int) []string {
			for i, l := range ls {
				ls[i] = p.stderr.on(fit(l, w))
			}
			return ls
		}))
	}
	if !hasOut && !hasErr {
		segs = append(segs, linesSeg(r.p.subtle.on("(no output)")))
	}
	return segs, tags, mark
}

var commandHeadRe = regexp.MustCompile(`(?s)\ACommand (.*?) (?:exited with status (-?\d+)|timed out after \d+ seconds)\.(?:\n|\z)`)

// parseCommandText reads the HEAD text format:
//
//	Command <cmd> exited with status <n>.
//	=== STDOUT (<k> lines) ===
//	…
//	=== STDERR (<k> lines) ===
//	…
//
// The command may span lines; only the first 64 KB are searched for the
// status line so a huge output is never scanned by the regexp.
func parseCommandText(text string) *events.CommandResult {
	m := commandHeadRe.FindStringSubmatchIndex(cutBytes(text, 64<<10))
	if m == nil {
		return nil
	}
	cr := &events.CommandResult{Command: text[m[2]:m[3]]}
	if m[4] >= 0 {
		if n, err := strconv.Atoi(text[m[4]:m[5]]); err == nil {
			cr.ExitCode = &n
		}
	} else {
		cr.TimedOut = true
	}
	rest := text[m[1]:]
	const outH, errH = "=== STDOUT (", "=== STDERR ("
	// stderr comes last, so the last marker at a line start wins: a
	// stdout that happens to contain the marker is less likely to fool
	// it. strings.Index is used forward because it is vectorized (on "="
	// a rare first byte); LastIndex was 30 ms on 20 MB.
	i := -1
	for off := 0; ; {
		j := strings.Index(rest[off:], errH)
		if j < 0 {
			break
		}
		if k := off + j; k == 0 || rest[k-1] == '\n' {
			i = k
		}
		off += j + len(errH)
	}
	if i >= 0 {
		cr.Stderr = afterHeader(rest[i:])
		rest = rest[:max(i-1, 0)]
	}
	if strings.HasPrefix(rest, outH) {
		cr.Stdout = afterHeader(rest)
	}
	return cr
}

// afterHeader drops the "=== … ===" line.
func afterHeader(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return ""
}
