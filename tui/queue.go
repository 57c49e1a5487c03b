package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/sanitize"
)

// queueLines is the daemon's queue, live from the timeline, above the held
// panel (perch's own messages, heldpanel.go). Collapsed, every message is
// one line; expanded (ctrl+q / Q) each shows its full text.
func (m *Model) queueLines() []string {
	if m.mode != modeTask {
		return nil
	}
	w := m.w
	var out []string
	q := m.tl.Queue()
	if len(q) == 0 {
		return out
	}
	head := m.ch.Warn.Render("  ⧗ " + itoa(len(q)) + " queued")
	if m.queueOpen {
		head += m.ch.Hint.Render(" · ctrl+q collapse")
	} else {
		head += m.ch.Hint.Render(" · ctrl+q expand")
	}
	if m.caps.Cancel {
		head += m.ch.Hint.Render(" · ctrl+x cancel run (returns them as held)")
	}
	out = append(out, truncate(head, w))
	for i, qm := range q {
		num := itoa(i+1) + ". "
		prefix := "    " + num
		web := ""
		if qm.WebSearch {
			web = m.ch.Dim.Render(" [web]")
		}
		if !m.queueOpen {
			out = append(out, truncate(prefix+oneLine(qm.Text)+web, w))
			continue
		}
		indent := strings.Repeat(" ", len(prefix))
		text := strings.TrimSpace(qm.Text)
		if len(text) > previewMax {
			text = cutText(text, previewMax) + " …"
		}
		body := ansi.Wrap(sanitize.Text(text), max(w-len(prefix), 1), "")
		for j, l := range strings.Split(body, "\n") {
			p := indent
			if j == 0 {
				p = prefix
			}
			out = append(out, truncate(p+l, w))
		}
		if web != "" {
			out = append(out, indent+web)
		}
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return oneLine(err.Error())
}
