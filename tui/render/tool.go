package render

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tools"
)

// toolBody draws the body of a finished, successful tool call: the
// segments to lay out, and short tags for the header ("exit 0", "12
// entries"). w is the body's width (inside the rail).
type toolBody func(r *Renderer, t *events.ToolItem, w int) (segs []seg, tags []string)

// toolBodies maps a tool's output format to its renderer; text shown as
// it is uses genericBody.
func toolBodies(name string) toolBody {
	switch tools.FormatOf(name) {
	case tools.FormatRead:
		return readFileBody
	case tools.FormatListing:
		return listFilesBody
	case tools.FormatWrite, tools.FormatMetaWrite:
		return writeBody
	case tools.FormatPatch:
		return patchBody
	case tools.FormatSearch:
		return searchBody
	case tools.FormatTodo:
		return todoBody
	}
	return genericBody
}

func toolName(t *events.ToolItem) string {
	if t.Name != "" {
		return t.Name
	}
	if t.Call.Name != "" {
		return t.Call.Name
	}
	return "tool"
}

func (r *Renderer) tool(it *events.Item, w int, expanded bool) content {
	t := it.Tool
	if t == nil {
		// A tool item without its tool state: show what there is.
		return content{lines: r.notice(&events.Item{Text: it.Text, Level: events.LevelWarning}, w, expanded)}
	}
	name := toolName(t)
	segs, tags, icon := r.toolSegs(t, w)
	switch t.Status {
	case events.ToolCancelled:
		tags = append(tags, r.p.tag.on("cancelled"))
	case events.ToolUnknown:
		tags = append(tags, r.p.tag.on("no result"))
	}
	if t.Pruned {
		tags = append(tags, r.p.tag.on(styles.IconPruned+" pruned from context"))
	}

	tail := r.headerTail(name, keyArg(t), tags, w-2)
	c := content{headerTail: tail, running: t.Status == events.ToolRunning}
	c.lines = append(c.lines, icon+" "+tail)

	if expanded {
		// Every line, long ones wrapped; laid out as it is shown.
		c.body = r.newWrapped(it, segs, max(w-2, 1))
		return c
	}
	for _, l := range r.p.body(segs, max(w-2, 1), collapsedHead, collapsedTail) {
		c.lines = append(c.lines, r.p.rail+l)
	}
	return c
}

// toolSegs is what a tool's body shows, its header tags and status icon.
func (r *Renderer) toolSegs(t *events.ToolItem, w int) (segs []seg, tags []string, icon string) {
	name := toolName(t)
	res := t.Result
	isCommand := tools.KindOf(name) == tools.Command
	edits := tools.Edits(name, t.Call.Args)
	var cr *events.CommandResult
	switch {
	case res != nil && (res.IsError || t.Status == events.ToolError) && !(isCommand && res.Exit() != nil):
		segs, tags = errorBody(r, t)
	case res != nil && isCommand:
		cr = t.Command()
		segs, tags = commandBody(r, t, cr, w-2)
	case len(edits) > 0 && (res != nil || t.Status == events.ToolRunning):
		// The change the call makes, already while it runs.
		segs, tags = r.editBody(edits)
	case res != nil:
		segs, tags = toolBodies(name)(r, t, w-2)
	}
	// One rule for every view: events.ToolOutcome.
	return segs, tags, r.outcomeIcon(events.ToolOutcome(t.Status, cr))
}

func (r *Renderer) runningHeader(c content, spinner string) string {
	if spinner == "" {
		spinner = styles.IconRunning
	}
	// Frames are meant to be one cell; anything else is cut to one so the
	// cached header still fits.
	spinner = fit(sanitize.Line(spinner), 1)
	return r.st.Tool.Status.Running.Render(spinner) + " " + c.headerTail
}

// headerTail is "<name> <key arg>  <tags>" fitted to w cells: the key
// argument gives way first, so the name and status tags stay visible.
func (r *Renderer) headerTail(name, arg string, tags []string, w int) string {
	ts := r.st.Tool
	name = sanitize.Line(name)
	nameW := ansi.StringWidth(name)
	var tag string
	if len(tags) > 0 {
		tag = "  " + strings.Join(tags, r.p.tag.on(" · "))
	}
	tagW := ansi.StringWidth(tag)
	if nameW+tagW > w {
		tag, tagW = "", 0
	}
	out := ts.Name.Render(fit(name, w))
	if room := w - nameW - tagW - 1; arg != "" && room > 0 {
		out += " " + ts.KeyArg.Render(fit(arg, room))
	}
	return out + tag
}

// keyArg is the argument a person wants to see first (tools.KeyArg).
func keyArg(t *events.ToolItem) string { return sanitize.Line(t.KeyArg()) }

// errorBody shows a failed call's readable error in the error colour.
func errorBody(r *Renderer, t *events.ToolItem) ([]seg, []string) {
	res := t.Output()
	text := res.ErrorText
	if text == "" {
		text = res.Text
	}
	p := r.p
	return []seg{textSeg(text, func(_ []int, ls []string, w int) []string {
		for i, l := range ls {
			ls[i] = p.errText.on(fit(l, w))
		}
		return ls
	})}, nil
}

// genericBody is the fallback: the text as-is, diff-coloured when it looks
// like a unified diff.
func genericBody(r *Renderer, t *events.ToolItem, _ int) ([]seg, []string) {
	text := t.Output().Text
	if tools.LooksLikeDiff(text) {
		return []seg{textSeg(text, r.p.diffChunk)}, nil
	}
	return []seg{textSeg(text, nil)}, nil
}

// todoBody: todo calls are drawn by the app's todo panel; in the transcript
// they are a single header line with the item count.
func todoBody(r *Renderer, t *events.ToolItem, _ int) ([]seg, []string) {
	if n := len(t.Result.Todos); n > 0 {
		return nil, []string{r.p.tag.on(plural(n, "item"))}
	}
	return nil, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
