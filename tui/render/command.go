package render

import (
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tools"
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
	cr := events.WithDetails(t.Result, tools.FormatCommand, t.Call).Command
	if cr == nil && t.Result.Exit() != nil {
		// A system that reports the exit status apart from the output.
		cr = &events.CommandResult{ExitCode: t.Result.Exit(), Stdout: tools.OutputMember(t.Result.Text)}
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
		segs = append(segs, textSeg(stderr, func(_ []int, ls []string, w int) []string {
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
