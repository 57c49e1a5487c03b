package tui

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perch-tui/perch/sanitize"
)

// Unsent is text the user typed that is in no outbox: the composer, the
// drafts kept per task, an edit of a held message not saved yet, and
// submitted messages not written down yet. The exit report prints it, so
// nothing typed is ever lost. Drafts are printed, not held: they were
// never submitted, and a held message would be sent by the next perch
// that sees the task idle.
type Unsent struct {
	TaskID string
	Text   string
	Why    string // "in the composer", "draft", …
}

// Unsent lists what would be lost at exit, one entry per text.
func (m *Model) Unsent() []Unsent {
	var out []Unsent
	if m.mode == modeTask {
		v := m.comp.value()
		why := "in the composer"
		if m.held.editing != "" {
			why = "edit of held message " + m.held.editing + ", not saved (the message keeps its earlier text)"
			if strings.TrimSpace(m.held.stash) != "" {
				out = append(out, Unsent{TaskID: m.task.ID, Text: m.held.stash, Why: "in the composer"})
			}
		}
		if strings.TrimSpace(v) != "" {
			out = append(out, Unsent{TaskID: m.task.ID, Text: v, Why: why})
		}
		for _, l := range m.held.local {
			out = append(out, Unsent{TaskID: m.task.ID, Text: l.text, Why: "submitted as perch quit, maybe not written down"})
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
	return out
}

// writeExitReport runs after the terminal is restored (it reads the
// outbox: IO, never in Update). For every task the session opened that
// still has messages: how many perch keeps and where, or, for an outbox in
// memory, their texts. Then the texts that are in no outbox.
func (m *Model) writeExitReport(w io.Writer) {
	if w == nil {
		return
	}
	for _, ob := range m.allOutboxes() {
		m.reportOutbox(w, ob)
	}
	writeUnsent(w, m.Unsent())
}

// reportOutbox is the exit report of one source's messages.
func (m *Model) reportOutbox(w io.Writer, ob *outboxes) {
	for _, id := range ob.tasks() {
		q, err := ob.store.Load(id)
		if err != nil {
			fmt.Fprintf(w, "perch: could not read the held messages of task %s: %v\n", shortID(id), err)
			continue
		}
		n := q.Len()
		if n == 0 {
			continue
		}
		if path := ob.path(id); path != "" {
			fmt.Fprintf(w, "perch keeps %s for task %s in %s (perch queue %s to see %s)\n",
				nouns(n, "message"), shortID(id), path, shortID(id), pick(n == 1, "it", "them"))
			continue
		}
		fmt.Fprintf(w, "perch: %s for task %s %s kept in memory only; %s, to resend:\n", nouns(n, "held message"), shortID(id),
			pick(n == 1, "was", "were"), pick(n == 1, "here it is", "here they are"))
		for _, msg := range q.Pending() {
			why := string(msg.State)
			if msg.Err != "" {
				why += ": " + msg.Err
			}
			fmt.Fprintf(w, "\n--- task %s (%s)\n%s\n", shortID(id), sanitize.Line(why), sanitize.Text(msg.Text))
		}
	}
}

// writeUnsent prints unsent texts.
func writeUnsent(w io.Writer, list []Unsent) {
	if w == nil || len(list) == 0 {
		return
	}
	n := len(list)
	fmt.Fprintf(w, "perch: %s you typed %s not sent or held; %s:\n", nouns(n, "text"), pick(n == 1, "was", "were"), pick(n == 1, "here it is", "here they are"))
	for _, u := range list {
		fmt.Fprintf(w, "\n--- task %s (%s)\n%s\n", shortID(u.TaskID), sanitize.Line(u.Why), sanitize.Text(u.Text))
	}
}
