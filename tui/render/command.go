package render

import (
	"strconv"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// commandBody draws a shell command's result cr (events.ToolItem.Command):
// an exit badge in the header, stdout, then stderr under a label in its
// own colour. Legacy builds send the parts structured; at HEAD only the
// text exists, so it is parsed (docs/protocol.md §7.1), and anything
// unparseable (cr nil) is shown as-is. The header's status mark is
// outcomeIcon's, by the rule every view shares (events.ToolOutcome).
func commandBody(r *Renderer, t *events.ToolItem, cr *events.CommandResult, w int) (segs []seg, tags []string) {
	if cr == nil {
		return genericBody(r, t, w)
	}
	ts := r.st.Tool
	switch {
	case cr.TimedOut:
		tags = append(tags, ts.ExitBad.Render("timed out"))
	case cr.ExitCode != nil && *cr.ExitCode == 0:
		tags = append(tags, ts.ExitOK.Render("exit 0"))
	case cr.ExitCode != nil:
		tags = append(tags, ts.ExitBad.Render("exit "+strconv.Itoa(*cr.ExitCode)))
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
	return segs, tags
}

// outcomeIcon is a tool header's status mark (styles.OutcomeIcon, the
// mark of every view): ✓ done (a command exited 0), ✗ a command exited
// non-zero, ⧖ timed out, ⊗ the tool itself failed, ⊘ cancelled.
func (r *Renderer) outcomeIcon(o events.Outcome) string {
	ts := r.st.Tool.Status
	icon := styles.OutcomeIcon(o)
	switch o {
	case events.OutcomeRunning:
		return ts.Running.Render(icon)
	case events.OutcomeOK:
		return ts.OK.Render(icon)
	case events.OutcomeFailed:
		return ts.Failed.Render(icon)
	case events.OutcomeTimedOut:
		return ts.TimedOut.Render(icon)
	case events.OutcomeError:
		return ts.Error.Render(icon)
	case events.OutcomeCancelled:
		return ts.Cancelled.Render(icon)
	}
	return ts.Unknown.Render(icon)
}
