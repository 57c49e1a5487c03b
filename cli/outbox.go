package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sanitize"
)

// taskBox is a task and its outbox.
type taskBox struct {
	be    client.Backend
	store *outbox.FileStore
	task  events.Task // ID always; the rest only when online
	// online: the daemon answered. Otherwise reachErr says why not, and
	// the task was resolved among the outboxes on disk (or taken as typed).
	online   bool
	reachErr error
}

// outboxRoot is perch's state directory ($XDG_STATE_HOME/perch).
func outboxRoot(env Env) string { return outbox.DefaultRoot(env.Getenv, env.Home) }

// unreachable tells a daemon that could not be asked from one that
// answered with an error or does not have the task.
func unreachable(err error) bool {
	var he *client.HTTPError
	return !errors.As(err, &he) && !errors.Is(err, client.ErrNoTask) && !errors.Is(err, client.ErrAmbiguousTask) &&
		!errors.Is(err, context.Canceled)
}

// boxUse says what a command may do when the daemon can't name the task.
type boxUse int

const (
	// forSend: with the daemon unreachable, a task with held messages on
	// disk, else the argument as typed (its messages move to the real id
	// once the daemon is back and names it).
	forSend boxUse = iota
	// forQueue: with the daemon unreachable, or without the task (deleted),
	// a task with held messages on disk, so they can still be seen and
	// deleted.
	forQueue
)

// openBox resolves a task (id or unique prefix) and opens its outbox,
// falling back to the outboxes kept for that daemon as use allows.
func (c *conn) openBox(ctx context.Context, env Env, arg string, use boxUse) (*taskBox, error) {
	// A local CLI's session (Claude Code, Codex) when the server has no
	// such task or there is no server.
	localBox := func() (*taskBox, bool) {
		lb, lt, ok := c.localSession(ctx, env, arg)
		if !ok {
			return nil, false
		}
		c.opened = lb
		b := &taskBox{be: lb, store: outbox.OpenFileStore(outboxRoot(env), lb.URL()), task: lt, online: true}
		b.adopt(ctx)
		return b, true
	}
	be, err := c.open(ctx, env)
	if err != nil {
		if b, ok := localBox(); ok {
			return b, nil
		}
		return nil, err
	}
	b := &taskBox{be: be, store: outbox.OpenFileStore(outboxRoot(env), be.URL())}
	task, err := be.Session(ctx, arg)
	if err == nil {
		b.task, b.online = task, true
		b.adopt(ctx)
		return b, nil
	}
	if errors.Is(err, client.ErrNoTask) || unreachable(err) {
		if lb, ok := localBox(); ok {
			return lb, nil
		}
	}
	if !unreachable(err) && !(use == forQueue && errors.Is(err, client.ErrNoTask)) {
		return nil, err
	}
	b.reachErr = err // unreachable, or no such task any more
	local, lerr := b.store.Tasks()
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	q := strings.ToLower(strings.TrimSpace(arg))
	var hits []string
	for _, id := range local {
		if strings.ToLower(id) == q {
			hits = []string{id}
			break
		}
		if q != "" && strings.HasPrefix(strings.ToLower(id), q) {
			hits = append(hits, id)
		}
	}
	switch {
	case len(hits) == 1:
		b.task.ID = hits[0]
	case len(hits) > 1:
		return nil, fmt.Errorf("%w (and %q matches the held messages of %d tasks: %s)", err, arg, len(hits), strings.Join(hits, ", "))
	case use == forSend && q != "":
		b.task.ID = strings.TrimSpace(arg)
	default:
		return nil, err
	}
	return b, nil
}

// adopt moves messages kept under a prefix of the task's id (typed while
// the daemon was unreachable) into the task's own outbox.
func (b *taskBox) adopt(ctx context.Context) {
	local, err := b.store.Tasks()
	if err != nil {
		return
	}
	full := strings.ToLower(b.task.ID)
	for _, k := range local {
		if k == b.task.ID || !strings.HasPrefix(full, strings.ToLower(k)) {
			continue
		}
		if t, err := b.be.Session(ctx, k); err == nil && t.ID == b.task.ID {
			_, _ = b.store.Merge(k, b.task.ID)
		}
	}
}

// stamp is the session the task's new messages are written for ("" when
// the daemon did not answer: then they go to whatever session has the id).
func (b *taskBox) stamp() string {
	if !b.online {
		return ""
	}
	return outbox.SessionStamp(b.task)
}

func (b *taskBox) deliverer() *outbox.Deliverer {
	return &outbox.Deliverer{Store: b.store, Backend: b.be}
}

// keptError is a delivery that failed while the message stays in the
// outbox: the error, then what became of the message.
type keptError struct {
	err  error
	note string
}

func (e *keptError) Error() string { return e.err.Error() + "\nperch: " + e.note }
func (e *keptError) Unwrap() error { return e.err }

// keptNote says where an undelivered message is kept and what happens next.
func keptNote(b *taskBox, m outbox.Message) string {
	where := fmt.Sprintf("message %s of task %s, in %s", m.ID, shortID(b.task.ID), b.store.Path(b.task.ID))
	release := fmt.Sprintf("perch queue %s --release %s", shortID(b.task.ID), m.ID)
	switch m.State {
	case outbox.Sending:
		return "the daemon may or may not have the message: it is kept as " + where +
			", and checked against the task's transcript before it is ever sent again (" + release + ")"
	case outbox.Failed:
		return "the daemon refused the message: it is kept as held " + where +
			"; edit, release or delete it with perch queue " + shortID(b.task.ID)
	}
	return "the message is kept as held " + where +
		"; it is delivered at the next perch send to this task, by an attached perch, or now with: " + release
}

// heldJSON is one held message in `queue --json`.
type heldJSON struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Paused bool   `json:"paused,omitempty"`
	Orphan bool   `json:"orphan,omitempty"` // its session is gone
	Error  string `json:"error,omitempty"`
}

// heldError is what a held message shows as its reason.
func heldError(m outbox.Message) string {
	switch m.State {
	case outbox.Sending:
		if m.Err != "" {
			return "not confirmed by the daemon: " + m.Err
		}
		return "being delivered"
	case outbox.Failed:
		return "refused: " + m.Err
	case outbox.Orphaned:
		return "orphan: " + m.Err
	}
	return m.Err
}

// writeHeld prints the held queue as text.
func writeHeld(w io.Writer, b *taskBox, q *outbox.Queue) {
	pending := q.Pending()
	if len(pending) == 0 {
		fmt.Fprintf(w, "No held messages for task %s.\n", shortID(b.task.ID))
		return
	}
	state := "delivered one at a time when the task is idle, by an attached perch"
	if q.Paused() {
		state = "auto-delivery paused; perch queue " + shortID(b.task.ID) + " --resume"
	}
	fmt.Fprintf(w, "%s for task %s (%s):\n", nounCount(len(pending), "held message"), shortID(b.task.ID), state)
	switch n := len(q.Orphans()); {
	case n == 1 && len(pending) == 1:
		fmt.Fprintf(w, "It is an orphan: the session it was written for is gone; perch queue %s --move-to OTHER moves it, --take ID prints it and deletes it\n", shortID(b.task.ID))
	case n == 1:
		fmt.Fprintf(w, "1 of them is an orphan: the session it was written for is gone; perch queue %s --move-to OTHER moves it, --take ID prints it and deletes it\n", shortID(b.task.ID))
	case n > 1:
		fmt.Fprintf(w, "%d of them are orphans: the session they were written for is gone; perch queue %s --move-to OTHER moves them, --take ID prints one and deletes it\n",
			n, shortID(b.task.ID))
	}
	for i, m := range pending {
		fmt.Fprintf(w, "\n%d. [%s]", i+1, m.ID)
		if m.Intent == outbox.IntentSend && m.State == outbox.Held {
			fmt.Fprint(w, " sent, waiting for the daemon")
		}
		if e := heldError(m); e != "" {
			fmt.Fprintf(w, " (%s)", sanitize.Line(e))
		}
		fmt.Fprintf(w, "\n%s\n", sanitize.Text(m.Text))
	}
}

// damagedNote warns about journal lines that could not be read.
func damagedNote(env Env, b *taskBox, q *outbox.Queue) {
	if q.Damaged > 0 {
		verb := "were"
		if q.Damaged == 1 {
			verb = "was"
		}
		fmt.Fprintf(env.Stderr, "perch: %s of %s %s skipped; the next change rewrites it and keeps a copy beside it\n",
			nounCount(q.Damaged, "damaged line"), b.store.Path(b.task.ID), verb)
	}
}

// moveMessages moves the box's orphans, or the message id, to the session
// other (resolved by the backend: it must answer), and says what it did.
func moveMessages(ctx context.Context, box *taskBox, other, id string) (string, error) {
	if !box.online && box.reachErr != nil && unreachable(box.reachErr) {
		return "", fmt.Errorf("moving messages needs the daemon, which did not answer: %w", box.reachErr)
	}
	to, err := box.be.Session(ctx, other)
	if err != nil {
		return "", err
	}
	q, err := box.store.Load(box.task.ID)
	if err != nil {
		return "", err
	}
	var ids []string
	if id != "" {
		m, err := q.Find(id)
		if err != nil {
			return "", err
		}
		ids = []string{m.ID}
	} else {
		for _, m := range q.Orphans() {
			ids = append(ids, m.ID)
		}
		if len(ids) == 0 {
			return "", fmt.Errorf("task %s has no orphans (give a message ID to move a held one): %w", shortID(box.task.ID), outbox.ErrNoMessage)
		}
	}
	var done []string
	for _, mid := range ids {
		m, err := outbox.MoveTo(box.store, box.task.ID, mid, box.store, to.ID, outbox.SessionStamp(to), time.Now())
		if err != nil {
			return strings.Join(done, "\n"), err
		}
		done = append(done, fmt.Sprintf("moved %s to task %s as %s (held)", mid, shortID(to.ID), m.ID))
	}
	return strings.Join(done, "\n"), nil
}
