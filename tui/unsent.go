package tui

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perch-tui/perch/sanitize"
)

// Unsent is text the user typed that never reached the daemon: the
// composer, the drafts kept per task, and sends that failed or were still
// pending. Run prints it when the program ends, whatever ended it (q,
// ctrl+c, a signal), so nothing typed is ever lost.
type Unsent struct {
	TaskID string
	Text   string
	Why    string // "draft", "not sent: <error>", "still sending"
}

// Unsent lists what would be lost at exit, one entry per text.
func (m *Model) Unsent() []Unsent {
	var out []Unsent
	if m.mode == modeTask {
		if v := m.comp.value(); strings.TrimSpace(v) != "" {
			out = append(out, Unsent{TaskID: m.task.ID, Text: v, Why: "in the composer"})
		}
	}
	ids := make([]string, 0, len(m.drafts))
	for id := range m.drafts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if strings.TrimSpace(m.drafts[id]) != "" {
			out = append(out, Unsent{TaskID: id, Text: m.drafts[id], Why: "draft"})
		}
	}
	for _, o := range m.outbox {
		why := "still sending when perch quit (check the task before resending)"
		if o.state == sendFailed {
			why = "not sent"
			if o.err != nil {
				why += ": " + o.err.Error()
			}
		}
		out = append(out, Unsent{TaskID: o.taskID, Text: o.text, Why: why})
	}
	return out
}

// writeUnsent prints unsent texts after the terminal is restored.
func writeUnsent(w io.Writer, list []Unsent) {
	if w == nil || len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "perch: %d message(s) you typed were not delivered; here they are, to resend:\n", len(list))
	for _, u := range list {
		fmt.Fprintf(w, "\n--- task %s (%s)\n%s\n", shortID(u.TaskID), sanitize.Line(u.Why), sanitize.Text(u.Text))
	}
}
