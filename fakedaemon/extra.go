package fakedaemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// SeedDemo creates a demo task in a fresh temporary copy of the fake project
// and sends it a first message whose keywords trigger the richest script:
// list_files, read_file, a passing and a failing command, a failing read, a
// todo list and its update, a diff, and a markdown answer with a list, a code
// block and a table.
func (d *Daemon) SeedDemo() (string, error) { return d.SeedDemoPrompt("") }

// demoPrompt is the demo task's first message.
const demoPrompt = "What does this project do? Run the tests, build it, plan the fix and show me the diff."

// SeedDemoPrompt is SeedDemo with another first message ("" for the
// demo's). The task ids come from the daemon's seed, so a daemon started
// again with the same seed and another prompt gives the demo task's id to
// another task, as a restarted daemon does.
func (d *Daemon) SeedDemoPrompt(prompt string) (string, error) {
	if prompt == "" {
		prompt = demoPrompt
	}
	dir, err := d.tempDir("perch-demo-")
	if err != nil {
		return "", err
	}
	if err := writeProject(dir); err != nil {
		return "", fmt.Errorf("fakedaemon: seed demo: %w", err)
	}
	return d.CreateTask(CreateRequest{
		Name:    prompt,
		Cwd:     dir,
		Message: prompt,
	})
}

// AddStoppedTask adds a task as if loaded from disk after a daemon restart:
// its replay has only persisted events (no queue snapshots, no ModelLoaded),
// includes TokenCounted/ContextPruned and ends without PostConversation; the
// stream then hangs until a forwarded request resumes the task.
func (d *Daemon) AddStoppedTask(name string) (string, error) {
	dir, err := d.tempDir("maria-stopped-")
	if err != nil {
		return "", err
	}
	if err := writeProject(dir); err != nil {
		return "", fmt.Errorf("fakedaemon: stopped task: %w", err)
	}
	if name == "" {
		name = "New Conversation"
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.newTaskLocked(dir, name, true, d.model, false)
	t.status = statusStopped
	// Yesterday's conversation, one second between model replies.
	at := d.nowMS() - 26*3600*1000
	t.created = at
	tick := func(ms int64) int64 { at += ms; return at }
	d.emitAt(t, tick(0), "SystemPromptSet", o("prompt", systemPrompt))
	for _, td := range toolDefs() {
		d.emitAt(t, at, "ToolAdded", o("tool", td))
	}
	text := "What does this project do? Look at the README."
	m := queued{id: t.uuid(), role: "user", parts: []string{text}}
	d.emitAt(t, tick(400), "MessageQueued", o("message", o("id", m.id)))
	d.emitAt(t, tick(1), "PreConversation", nil)
	d.emitAt(t, at, "MessageUnqueued", o("message", o("id", m.id)))
	d.emitAt(t, at, "UserMessage", o("content", text))
	for _, s := range d.script(t, text) {
		tokens := t.promptTokens + 200
		if t.replies == 0 {
			tokens = 9211
		}
		d.emitAt(t, tick(5), "TokenCounted", o("token_count", tokens))
		d.emitAt(t, at, "ContextPruned", o("origin_token_count", tokens, "pruned_token_count", tokens))
		d.emitReply(t, s, tick(1800))
		for _, c := range s.calls {
			d.emitPre(t, c, tick(40))
			d.emitPost(t, c, tick(300))
		}
	}
	t.updated = at
	return t.id, nil
}

// recFrame is one frame of a recorded stream.
type recFrame struct {
	event   string
	data    []string // data lines, kept separate so no raw newline is invented
	created int64    // 0 when the payload has none
	msg     string
}

// LoadRecording replays a recorded raw SSE stream (the exact bytes a client
// saw) as a new task's log. Frames are paced by the deltas of their
// "created" stamps divided by Speed, each gap capped at one second; the
// task's status follows the Pre/PostConversation (Failed, Cancelled) frames.
func (d *Daemon) LoadRecording(r io.Reader, name string) (string, error) {
	frames, err := parseRecording(r)
	if err != nil {
		return "", err
	}
	if len(frames) == 0 {
		return "", errors.New("fakedaemon: recording has no frames")
	}
	dir, err := d.tempDir("maria-replay-")
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return "", errors.New("fakedaemon: daemon closed")
	}
	t := d.newTaskLocked(dir, name, name != "", d.model, false)
	t.started = true
	d.wg.Add(1)
	go d.replay(t, frames)
	return t.id, nil
}

func (d *Daemon) replay(t *task, frames []recFrame) {
	defer d.wg.Done()
	var last int64
	for _, f := range frames {
		if f.created != 0 {
			if last != 0 && f.created > last {
				gap := time.Duration(f.created-last) * time.Millisecond
				tm := time.NewTimer(min(time.Duration(float64(gap)/d.speed), time.Second))
				select {
				case <-tm.C:
				case <-d.ctx.Done():
					tm.Stop()
					return
				}
			}
			last = f.created
		}
		var b strings.Builder
		b.WriteString("event: " + f.event + "\n")
		for _, l := range f.data {
			b.WriteString("data: " + l + "\n")
		}
		b.WriteString("\n")
		d.mu.Lock()
		t.log.append([]byte(b.String()))
		switch f.msg {
		case "PreConversation":
			d.setStatus(t, statusGenerating)
		case "PostConversation", "Failed", "Cancelled":
			if t.status != statusIdle {
				d.setStatus(t, statusIdle)
			}
		}
		d.mu.Unlock()
	}
}

// parseRecording splits raw SSE bytes into frames (LF or CRLF; comments, id:
// and retry: lines are dropped).
func parseRecording(r io.Reader) ([]recFrame, error) {
	br := bufio.NewReader(r)
	var out []recFrame
	var cur recFrame
	flush := func() {
		if len(cur.data) > 0 {
			if cur.event == "" {
				cur.event = "message"
			}
			cur.created, cur.msg = frameMeta(strings.Join(cur.data, "\n"))
			out = append(out, cur)
		}
		cur = recFrame{}
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("fakedaemon: read recording: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "event:"):
			cur.event = strings.TrimPrefix(strings.TrimPrefix(line, "event:"), " ")
		case strings.HasPrefix(line, "data:"):
			cur.data = append(cur.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
		if err == io.EOF {
			flush()
			return out, nil
		}
	}
}

// frameMeta extracts "created" and the variant name from a maria payload in
// either envelope.
func frameMeta(data string) (int64, string) {
	var v struct {
		Created int64  `json:"created"`
		Msg     string `json:"msg"`
		Desc    struct {
			Msg string `json:"msg"`
		} `json:"desc"`
	}
	if json.Unmarshal([]byte(data), &v) != nil {
		return 0, ""
	}
	if v.Desc.Msg != "" {
		return v.Created, v.Desc.Msg
	}
	return v.Created, v.Msg
}
