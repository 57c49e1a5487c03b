package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
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
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	tasks, err := cl.Tasks(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]taskJSON, 0, len(tasks))
		for _, t := range tasks {
			out = append(out, taskJSON{ID: t.ID, Name: t.Name, Status: t.Status, Cwd: t.Cwd, Model: t.Model, WebSearch: t.WebSearch,
				Created: t.Created.UnixMilli(), Updated: t.Updated.UnixMilli(), Queue: queued(t.QueuedMessages)})
		}
		return writeJSON(env.Stdout, out)
	}
	if len(tasks) == 0 {
		fmt.Fprintln(env.Stdout, "No tasks. Start one with: perch new 'your first message'")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tNAME\tCWD\tMODEL\tQUEUE\tAGE")
	now := time.Now()
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", shortID(t.ID), t.Status, clip(sanitize.Line(t.Name), 40),
			clip(sanitize.Line(t.Cwd), 40), sanitize.Line(t.Model), len(t.QueuedMessages), age(now, t.Created))
	}
	return tw.Flush()
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
	asJSON := fs.Bool("json", false, `print {"id","queued"}`)
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	text, err := messageText(env, pos[1], "send")
	if err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return keepMessage(env, text, err)
	}
	task, err := cl.ResolveTask(ctx, pos[0])
	if err != nil {
		return keepMessage(env, text, err)
	}
	res, err := cl.Send(ctx, task.ID, text, *web)
	if err != nil {
		return keepMessage(env, text, err)
	}
	if *asJSON {
		return writeJSON(env.Stdout, struct {
			ID     string `json:"id"`
			Queued bool   `json:"queued"`
		}{res.ID, res.Queued})
	}
	switch {
	case res.ID == "":
		fmt.Fprintf(env.Stdout, "sent to %s\n", shortID(task.ID))
	case res.Queued:
		fmt.Fprintf(env.Stdout, "queued (message %s): the agent is busy and will read it at its next turn\n", res.ID)
	default:
		fmt.Fprintf(env.Stdout, "sent (message %s)\n", res.ID)
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
	cl, task, err := c.task(ctx, env, pos[0])
	if err != nil {
		return err
	}
	if task.Status == events.StatusStopped {
		// Any forwarded request would resume a stopped task just to cancel.
		fmt.Fprintf(env.Stdout, "Nothing to cancel: task %s is stopped.\n", shortID(task.ID))
		return nil
	}
	pending, err := cl.Cancel(ctx, task.ID)
	if errors.Is(err, client.ErrNotRunning) {
		fmt.Fprintf(env.Stdout, "Nothing to cancel: task %s is not running.\n", shortID(task.ID))
		return nil
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, queued(pending))
	}
	if len(pending) == 0 {
		fmt.Fprintf(env.Stdout, "Cancelled task %s. No queued messages were pending.\n", shortID(task.ID))
		return nil
	}
	fmt.Fprintf(env.Stdout, "Cancelled task %s. Recovered %d queued message(s) that were not sent to the agent:\n", shortID(task.ID), len(pending))
	for _, m := range pending {
		fmt.Fprintf(env.Stdout, "\n--- %s\n%s\n", m.ID, sanitize.Text(m.Text))
	}
	return nil
}

func runQueue(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "queue")
	var c conn
	c.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	// GET /task/{id} is served by the daemon itself (fresh for running
	// tasks) and, unlike …/queued-messages, never resumes a stopped task.
	task, err := cl.ResolveTask(ctx, pos[0])
	if err != nil {
		return err
	}
	if task, err = cl.Task(ctx, task.ID); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, queued(task.QueuedMessages))
	}
	if len(task.QueuedMessages) == 0 {
		fmt.Fprintf(env.Stdout, "No queued messages for task %s (%s).\n", shortID(task.ID), task.Status)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%d queued message(s) for task %s:\n", len(task.QueuedMessages), shortID(task.ID))
	for i, m := range task.QueuedMessages {
		fmt.Fprintf(env.Stdout, "\n%d. [%s]\n%s\n", i+1, m.ID, sanitize.Text(m.Text))
	}
	return nil
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
	cl, err := c.client(env)
	if err != nil {
		return keepMessage(env, text, err)
	}
	res, err := cl.CreateTask(ctx, client.CreateTaskRequest{Name: *name, Model: *model, Cwd: dir, Message: text, WebSearch: *web})
	if err != nil {
		return keepMessage(env, text, err)
	}
	fmt.Fprintln(env.Stdout, res.Task.ID)
	return nil
}
