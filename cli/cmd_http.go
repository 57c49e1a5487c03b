package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/transcript"
)

// taskJSON is the --json shape of a task.
type taskJSON struct {
	ID        string              `json:"id"`
	Name      string              `json:"name,omitempty"`
	Status    string              `json:"status"`
	Cwd       string              `json:"cwd"`
	Model     string              `json:"model,omitempty"`
	WebSearch bool                `json:"web_search"`
	Created   int64               `json:"created"`
	Updated   int64               `json:"updated"`
	Queue     []transcript.Queued `json:"queued_messages"`
	Held      int                 `json:"held,omitempty"`    // perch's own messages for it, not delivered yet
	Orphans   int                 `json:"orphans,omitempty"` // of them, written for a session that is gone
}

func queued(q []events.QueuedMessage) []transcript.Queued {
	out := make([]transcript.Queued, 0, len(q))
	for _, m := range q {
		out = append(out, transcript.Queued{ID: m.ID, Text: m.Text})
	}
	return out
}

func runTasks(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "tasks")
	var c conn
	c.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "every source's sessions (every --url, the config file's [[source]] tables, the local daemon), as the board shows them")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *all {
		return runTasksAll(ctx, env, &c, *asJSON)
	}
	be, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	tasks, err := be.Sessions(ctx)
	if err != nil {
		return err
	}
	held, gone := heldCounts(outbox.OpenFileStore(outboxRoot(env), be.URL()), tasks)
	if *asJSON {
		out := make([]taskJSON, 0, len(tasks))
		for _, t := range tasks {
			out = append(out, taskJSON{ID: t.ID, Name: t.Name, Status: t.Status, Cwd: t.Cwd, Model: t.Model, WebSearch: t.WebSearch,
				Created: t.Created.UnixMilli(), Updated: t.Updated.UnixMilli(), Queue: queued(t.QueuedMessages),
				Held: held[t.ID].Held, Orphans: held[t.ID].Orphans})
		}
		return writeJSON(env.Stdout, out)
	}
	if len(tasks) == 0 && len(gone) == 0 {
		fmt.Fprintln(env.Stdout, "No tasks. Start one with: perch new 'your first message'")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	withHeld := len(held) > 0
	if withHeld {
		fmt.Fprintln(tw, "ID\tSTATUS\tNAME\tCWD\tMODEL\tQUEUE\tHELD\tAGE")
	} else {
		fmt.Fprintln(tw, "ID\tSTATUS\tNAME\tCWD\tMODEL\tQUEUE\tAGE")
	}
	now := time.Now()
	for _, t := range tasks {
		heldCol := ""
		if withHeld {
			heldCol = held[t.ID].String() + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s%s\n", shortID(t.ID), t.Status, clip(sanitize.Line(t.Name), 40),
			clip(sanitize.Line(t.Cwd), 40), sanitize.Line(t.Model), len(t.QueuedMessages), heldCol, age(now, t.Created))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(gone) > 0 {
		fmt.Fprintln(env.Stdout, "\nOrphans: perch keeps messages for sessions that are gone (perch queue ID shows them, --move-to OTHER moves them):")
		for _, g := range gone {
			fmt.Fprintf(env.Stdout, "  %s  %s\n", shortID(g.id), g.n)
		}
	}
	return nil
}

// heldCount is a task's messages in perch's outbox: held (all not
// delivered yet) and, of them, orphans.
type heldCount outbox.Kept

func (c heldCount) String() string {
	switch {
	case c.Held == 0:
		return "-"
	case c.Orphans > 0:
		return fmt.Sprintf("%d (%d orphan%s)", c.Held, c.Orphans, map[bool]string{true: "s"}[c.Orphans > 1])
	}
	return strconv.Itoa(c.Held)
}

// goneBox is an outbox on disk whose session the backend does not list.
type goneBox struct {
	id string
	n  heldCount
}

// heldCounts counts perch's messages per listed task, and lists the
// outboxes with messages for sessions the backend does not list (every
// message of those is an orphan), by id (outbox.TakeCensus).
func heldCounts(store *outbox.FileStore, tasks []events.Task) (map[string]heldCount, []goneBox) {
	c, err := outbox.TakeCensus(store, tasks)
	if err != nil {
		return nil, nil // the list is the daemon's, these counts are extra
	}
	counts := make(map[string]heldCount, len(c.Held))
	for id, n := range c.Held {
		counts[id] = heldCount(n)
	}
	gone := make([]goneBox, 0, len(c.Gone))
	for id, n := range c.Gone {
		gone = append(gone, goneBox{id, heldCount(n)})
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].id < gone[j].id })
	return counts, gone
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// clip cuts s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// age is a short human duration since t ("3m", "2h", "5d").
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runSend(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "send")
	var c conn
	c.register(fs)
	web := fs.Bool("web-search", false, "let the model search the web for this message")
	hold := fs.Bool("hold", false, "hold the message in perch's queue instead of sending it (see perch queue)")
	asJSON := fs.Bool("json", false, `print {"id","queued"} (with --hold, or when kept: {"id":LOCAL_ID,"held":true})`)
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	text, err := messageText(env, pos[1], "send")
	if err != nil {
		return err
	}
	box, err := c.openBox(ctx, env, pos[0], forSend)
	if err != nil {
		return keepMessage(env, text, err)
	}
	intent := outbox.IntentSend
	if *hold {
		intent = outbox.IntentHold
	}
	// Written down before anything is posted.
	var m outbox.Message
	if _, err := box.store.Update(box.task.ID, func(q *outbox.Queue) error {
		var err error
		m, err = q.AddFor(box.stamp(), text, intent, *web, time.Now())
		return err
	}); err != nil {
		if errors.Is(err, outbox.ErrInvalidText) {
			return usagef("send: %v", err)
		}
		return keepMessage(env, text, err)
	}
	heldOut := func(errText string) error {
		return writeJSON(env.Stdout, struct {
			ID    string `json:"id"`
			Held  bool   `json:"held"`
			Error string `json:"error,omitempty"`
		}{m.ID, true, errText})
	}
	if *hold {
		if *asJSON {
			return heldOut("")
		}
		fmt.Fprintf(env.Stdout, "held as %s for task %s: an attached perch sends it when the task is idle; perch queue %s --release %s sends it now\n",
			m.ID, shortID(box.task.ID), shortID(box.task.ID), m.ID)
		return nil
	}
	// Unreachable, the attempt fails fast, and the message keeps why.
	rs, err := box.deliverer().Flush(ctx, box.task.ID)
	var mine *outbox.Result
	earlier := 0
	for i := range rs {
		if rs[i].Message.ID == m.ID {
			mine = &rs[i]
		} else if rs[i].Delivered {
			earlier++
		}
	}
	if earlier > 0 {
		fmt.Fprintf(env.Stderr, "perch: first delivered %s kept while the daemon was unreachable\n", nounCount(earlier, "earlier message"))
	}
	if mine != nil && mine.Delivered {
		return printSent(env, box, mine.Message, *asJSON)
	}
	// Another perch delivering this task may have sent it meanwhile.
	if q, lerr := box.store.Load(box.task.ID); lerr == nil {
		if cur, ok := q.Get(m.ID); ok {
			m = cur
		}
	}
	if m.State == outbox.Sent {
		return printSent(env, box, m, *asJSON)
	}
	if errors.Is(err, client.ErrBusy) && m.State == outbox.Held {
		// The server has no queue (Suna): perch holds the message until
		// the run ends, which is this backend's way of queueing.
		if *asJSON {
			return writeJSON(env.Stdout, struct {
				ID     string `json:"id"`
				Queued bool   `json:"queued"`
			}{m.ID, true})
		}
		fmt.Fprintf(env.Stdout, "queued by perch as %s: the session is running and %s keeps no queue; an attached perch sends it when the run ends, or perch queue %s --release %s\n",
			m.ID, box.be.Name(), shortID(box.task.ID), m.ID)
		return nil
	}
	if err == nil {
		err = errors.New("the message was not delivered")
	}
	if mine == nil {
		err = fmt.Errorf("an earlier message could not be delivered, and this one waits behind it: %w", err)
	}
	if *asJSON {
		heldOut(err.Error())
	}
	return &keptError{err, keptNote(box, m)}
}

// printSent reports a delivered message as send always has.
func printSent(env Env, box *taskBox, m outbox.Message, asJSON bool) error {
	if asJSON {
		return writeJSON(env.Stdout, struct {
			ID     string `json:"id"`
			Queued bool   `json:"queued"`
		}{m.DaemonID, m.Queued})
	}
	switch {
	case m.Recovered:
		fmt.Fprintf(env.Stdout, "sent to %s (the daemon already had it)\n", shortID(box.task.ID))
	case m.DaemonID == "":
		fmt.Fprintf(env.Stdout, "sent to %s\n", shortID(box.task.ID))
	case m.Queued:
		fmt.Fprintf(env.Stdout, "queued (message %s): the agent is busy and will read it at its next turn\n", m.DaemonID)
	default:
		fmt.Fprintf(env.Stdout, "sent (message %s)\n", m.DaemonID)
	}
	return nil
}

// messageText is a TEXT argument, read from stdin when it is "-".
func messageText(env Env, arg, cmd string) (string, error) {
	text := arg
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, 16<<20))
		if err != nil {
			return "", fmt.Errorf("read the message from stdin: %w", err)
		}
		text = strings.TrimRight(string(b), "\n")
	}
	if strings.TrimSpace(text) == "" {
		return "", usagef("%s: the message is empty", cmd)
	}
	return text, nil
}

// keepMessage adds the undelivered text to the error, so nothing the user
// typed is lost.
func keepMessage(env Env, text string, err error) error {
	fmt.Fprintf(env.Stderr, "perch: the message was NOT delivered. Here it is, to resend:\n%s\n", text)
	return err
}

func runCancel(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "cancel")
	var c conn
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the recovered messages as JSON")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	be, err := c.open(ctx, env)
	if err != nil {
		return err
	}
	if !be.Capabilities().Cancel {
		return fmt.Errorf("%s at %s cannot stop a run: it has no way to cancel one from outside, so perch does not pretend (the run ends on its own)", be.Name(), be.URL())
	}
	task, err := be.Session(ctx, pos[0])
	if err != nil {
		return err
	}
	if task.Status == events.StatusStopped {
		// Any forwarded request would resume a stopped task just to cancel.
		fmt.Fprintf(env.Stdout, "Nothing to cancel: task %s is stopped.\n", shortID(task.ID))
		return nil
	}
	pending, err := be.Cancel(ctx, task.ID)
	if errors.Is(err, client.ErrNotRunning) {
		fmt.Fprintf(env.Stdout, "Nothing to cancel: task %s is not running.\n", shortID(task.ID))
		return nil
	}
	if err != nil {
		return err
	}
	// The recovered messages go to the front of the held queue, in order,
	// each its own message; auto-delivery pauses.
	box := &taskBox{be: be, store: outbox.OpenFileStore(outboxRoot(env), be.URL()), task: task, online: true}
	held := make([]outbox.Message, len(pending))
	var keepErr error
	if len(pending) > 0 {
		texts := make([]string, len(pending))
		for i, m := range pending {
			texts[i] = m.Text
		}
		var ms []outbox.Message
		_, keepErr = box.store.Update(task.ID, func(q *outbox.Queue) error {
			var err error
			ms, err = q.RecoverFromCancelFor(box.stamp(), texts, time.Now())
			return err
		})
		if keepErr == nil {
			copy(held, ms)
		}
	}
	if *asJSON {
		out := make([]cancelledJSON, len(pending))
		for i, m := range pending {
			out[i] = cancelledJSON{ID: m.ID, Text: m.Text, HeldID: held[i].ID}
		}
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
		return keepErr
	}
	if len(pending) == 0 {
		fmt.Fprintf(env.Stdout, "Cancelled task %s. No queued messages were pending.\n", shortID(task.ID))
		return nil
	}
	fmt.Fprintf(env.Stdout, "Cancelled task %s. Recovered %s not sent to the agent", shortID(task.ID), nounCount(len(pending), "queued message"))
	if keepErr == nil {
		fmt.Fprintf(env.Stdout, "; perch holds them (auto-delivery paused):\n")
	} else {
		fmt.Fprintf(env.Stdout, ":\n")
	}
	for i, m := range pending {
		fmt.Fprintf(env.Stdout, "\n--- %s", m.ID)
		if held[i].ID != "" {
			fmt.Fprintf(env.Stdout, " (held as %s)", held[i].ID)
		}
		fmt.Fprintf(env.Stdout, "\n%s\n", sanitize.Text(m.Text))
	}
	if keepErr != nil {
		return fmt.Errorf("could not hold them in the outbox (the texts are above): %w", keepErr)
	}
	fmt.Fprintf(env.Stdout, "\nEdit, reorder or send them with perch queue %s (--resume lets an attached perch deliver them when idle).\n", shortID(task.ID))
	return nil
}

// cancelledJSON is one recovered message in `cancel --json`.
type cancelledJSON struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	HeldID string `json:"held_id,omitempty"`
}

func runQueue(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "queue")
	var c conn
	c.register(fs)
	asJSON := fs.Bool("json", false, `print {"daemon":[{"id","text"}],"held":[{"id","text","paused"?,"error"?}]} ("daemon" is null when unreachable)`)
	edit := fs.String("edit", "", "replace the text of held message `ID` with TEXT (the next argument; '-' reads stdin)")
	del := fs.String("delete", "", "delete held message `ID`")
	move := fs.String("move", "", "move held message `ID` to position POS (the next argument, 1-based)")
	release := fs.Bool("release", false, "send the first held message now, or the one whose ID follows")
	pause := fs.Bool("pause", false, "pause auto-delivery of held messages")
	resume := fs.Bool("resume", false, "resume auto-delivery of held messages")
	moveTo := fs.String("move-to", "", "move the orphans (messages whose session is gone), or the held message whose ID follows, to session `OTHER`")
	take := fs.String("take", "", "print held message `ID` and delete it (take it back)")
	pos, err := parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	actions := 0
	for _, on := range []bool{*edit != "", *del != "", *move != "", *release, *pause, *resume, *moveTo != "", *take != ""} {
		if on {
			actions++
		}
	}
	if actions > 1 {
		return usagef("queue: give one of --edit, --delete, --move, --release, --pause, --resume, --move-to, --take")
	}
	extra := ""
	if len(pos) == 2 {
		extra = pos[1]
	}
	switch {
	case *edit != "" || *move != "":
		if extra == "" {
			return usagef("queue: --edit ID TEXT and --move ID POS take a second argument")
		}
	case *release, *moveTo != "":
	case extra != "":
		return usagef("queue: too many arguments %q (want TASK)", pos[1:])
	}
	box, err := c.openBox(ctx, env, pos[0], forQueue)
	if err != nil {
		return err
	}
	id := box.task.ID
	d := box.deliverer()
	var done string  // what a change did, for the text output
	var failed error // a release that failed, reported after the listing
	switch {
	case *edit != "":
		text, err := messageText(env, extra, "queue --edit")
		if err != nil {
			return err
		}
		_, err = box.store.Update(id, func(q *outbox.Queue) error {
			m, err := q.Find(*edit)
			if err != nil {
				return err
			}
			done = "edited " + m.ID
			return q.Edit(m.ID, text)
		})
		if err != nil {
			return queueError(err)
		}
	case *del != "":
		m, err := d.Drop(ctx, id, *del)
		if err != nil {
			return queueError(err)
		}
		done = "deleted " + m.ID
	case *take != "":
		m, err := d.Drop(ctx, id, *take)
		if err != nil {
			return queueError(err)
		}
		if *asJSON {
			return writeJSON(env.Stdout, heldJSON{ID: m.ID, Text: m.Text})
		}
		fmt.Fprintln(env.Stdout, m.Text)
		return nil
	case *moveTo != "":
		moved, err := moveMessages(ctx, box, *moveTo, extra)
		if err != nil {
			return queueError(err)
		}
		done = moved
	case *move != "":
		n, err := strconv.Atoi(extra)
		if err != nil || n < 1 {
			return usagef("queue: --move ID POS: POS must be a position from 1, not %q", extra)
		}
		_, err = box.store.Update(id, func(q *outbox.Queue) error {
			m, err := q.Find(*move)
			if err != nil {
				return err
			}
			n = min(n, q.Len())
			done = fmt.Sprintf("moved %s to position %d", m.ID, n)
			return q.Move(m.ID, n-1)
		})
		if err != nil {
			return queueError(err)
		}
	case *pause || *resume:
		_, err = box.store.Update(id, func(q *outbox.Queue) error { return q.SetPaused(*pause) })
		if err != nil {
			return err
		}
		done = "auto-delivery resumed"
		if *pause {
			done = "auto-delivery paused"
		}
	case *release:
		r, err := d.Release(ctx, id, extra)
		if errors.Is(err, outbox.ErrNoMessage) || errors.Is(err, outbox.ErrAmbiguousID) || errors.Is(err, outbox.ErrNotDue) {
			return queueError(err)
		}
		if errors.Is(err, outbox.ErrOrphaned) {
			return fmt.Errorf("%w; move it to another session with perch queue %s --move-to OTHER, or take it back with --take ID", err, shortID(id))
		}
		if err != nil {
			if r.Message.ID == "" {
				return err
			}
			failed = &keptError{err, keptNote(box, r.Message)}
			if *asJSON {
				break // the listing shows it with its error
			}
			return failed
		}
		if !*asJSON {
			fmt.Fprintf(env.Stdout, "%s: ", r.Message.ID)
			return printSent(env, box, r.Message, false)
		}
	}
	if done != "" && !*asJSON {
		fmt.Fprintln(env.Stdout, done)
		return nil
	}
	if err := listQueues(ctx, env, box, *asJSON); err != nil {
		return err
	}
	return failed
}

// queueError makes a bad message id a usage error.
func queueError(err error) error {
	if errors.Is(err, outbox.ErrNoMessage) || errors.Is(err, outbox.ErrAmbiguousID) || errors.Is(err, outbox.ErrState) ||
		errors.Is(err, outbox.ErrEmptyText) || errors.Is(err, outbox.ErrInvalidText) {
		return usagef("queue: %v", err)
	}
	return err
}

// listQueues prints the daemon's queue and perch's held messages.
func listQueues(ctx context.Context, env Env, box *taskBox, asJSON bool) error {
	q, err := box.store.Load(box.task.ID)
	if err != nil {
		return err
	}
	damagedNote(env, box, q)
	var daemon []events.QueuedMessage
	status := ""
	reachErr := box.reachErr
	if box.online {
		// GET /task/{id} is served by the daemon itself (fresh for running
		// tasks) and, unlike …/queued-messages, never resumes a stopped task.
		if t, err := box.be.Session(ctx, box.task.ID); err != nil {
			reachErr = err
		} else {
			daemon, status = t.QueuedMessages, t.Status
		}
	}
	if asJSON {
		out := struct {
			Daemon []transcript.Queued `json:"daemon"`
			Held   []heldJSON          `json:"held"`
		}{Held: []heldJSON{}}
		if reachErr == nil {
			out.Daemon = queued(daemon)
		}
		for _, m := range q.Pending() {
			out.Held = append(out.Held, heldJSON{ID: m.ID, Text: m.Text, Paused: q.Paused(), Orphan: m.State == outbox.Orphaned, Error: heldError(m)})
		}
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
		return reachErr
	}
	switch {
	case errors.Is(reachErr, client.ErrNoTask):
		fmt.Fprintf(env.Stdout, "The daemon has no task %s any more (deleted?): its held messages can't be delivered.\n", shortID(box.task.ID))
	case reachErr != nil:
		fmt.Fprintf(env.Stdout, "The daemon's queue for task %s is unknown: the daemon did not answer.\n", shortID(box.task.ID))
	case len(daemon) == 0:
		fmt.Fprintf(env.Stdout, "No queued messages for task %s (%s).\n", shortID(box.task.ID), status)
	default:
		fmt.Fprintf(env.Stdout, "%s for task %s:\n", nounCount(len(daemon), "queued message"), shortID(box.task.ID))
		for i, m := range daemon {
			fmt.Fprintf(env.Stdout, "\n%d. [%s]\n%s\n", i+1, m.ID, sanitize.Text(m.Text))
		}
	}
	fmt.Fprintln(env.Stdout)
	writeHeld(env.Stdout, box, q)
	if status == events.StatusStopped && q.Len() > 0 {
		fmt.Fprintf(env.Stdout, "\nThe task is stopped: held messages wait; --release resumes it with the first one.\n")
	}
	return reachErr
}

func runNew(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "new")
	var c conn
	c.register(fs)
	cwd := fs.String("cwd", "", "working directory of the task (default: the current directory)")
	model := fs.String("model", "", "model name (default: the daemon's default)")
	web := fs.Bool("web-search", false, "let the model search the web")
	name := fs.String("name", "", "task name (default: the first line of TEXT)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	text, err := messageText(env, pos[0], "new")
	if err != nil {
		return err
	}
	dir := *cwd
	if dir == "" {
		dir = env.Cwd
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if *name == "" {
		first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		*name = clip(first, 80)
	}
	be, err := c.open(ctx, env)
	if err != nil {
		return keepMessage(env, text, err)
	}
	if !be.Capabilities().Create {
		return keepMessage(env, text, fmt.Errorf("%s at %s cannot start a session from perch", be.Name(), be.URL()))
	}
	task, err := be.Create(ctx, client.CreateRequest{Name: *name, Model: *model, Cwd: dir, Prompt: text, WebSearch: *web})
	if err != nil {
		return keepMessage(env, text, err)
	}
	fmt.Fprintln(env.Stdout, task.ID)
	return nil
}
