package redact

import (
	"github.com/perch-tui/perch/events"
)

// Item returns a copy of it holding only redacted texts: the body, the
// reasoning, every tool call's id, name and arguments, a tool's output,
// error and todos, a notice's text. The copy reads nothing from the
// timeline's store, so it stays valid after the timeline lets it go; it
// keeps of a tool result what the exports show (text, error, exit status,
// todos) and not the parsed details, which would hold the texts again.
func (r *Redactor) Item(it *events.Item) *events.Item {
	cp := &events.Item{
		Kind:       it.Kind,
		Level:      it.Level,
		Open:       it.Open,
		Incomplete: it.Incomplete,
		ID:         r.String(it.ID),
		Version:    it.Version,
		Created:    it.Created,
		Text:       r.String(it.Body()),
		Thinking:   r.String(it.ThinkingBody()),
		StopReason: it.StopReason,
		NoticeKind: it.NoticeKind,
	}
	if it.Usage != nil {
		u := *it.Usage
		cp.Usage = &u
	}
	if it.ToolCalls != nil {
		cp.ToolCalls = make([]events.ToolCall, len(it.ToolCalls))
		for i, c := range it.ToolCalls {
			cp.ToolCalls[i] = r.call(c)
		}
	}
	if t := it.Tool; t != nil {
		cp.Tool = r.tool(t)
	}
	return cp
}

func (r *Redactor) call(c events.ToolCall) events.ToolCall {
	out := events.ToolCall{ID: r.String(c.ID), Name: r.String(c.Name), ArgsRaw: r.String(c.ArgsRaw), ArgsErr: r.String(c.ArgsErr), DoubleEncoded: c.DoubleEncoded}
	if args, ok := r.JSON(c.Args); ok {
		out.Args = args
	} else if out.ArgsRaw == "" {
		// The redacted arguments no longer parse: kept as their text.
		out.ArgsRaw = string(args)
	}
	return out
}

func (r *Redactor) tool(t *events.ToolItem) *events.ToolItem {
	cp := &events.ToolItem{CallID: r.String(t.CallID), Name: r.String(t.Name), Call: r.call(t.Call), Status: t.Status, Pruned: t.Pruned}
	res := t.Output()
	if res == nil {
		return cp
	}
	out := &events.ToolResult{IsError: res.IsError, Text: r.String(res.Text), ErrorText: r.String(res.ErrorText), ExitCode: res.Exit()}
	if cr := t.Command(); cr != nil && cr.TimedOut {
		// What the text may not say again (views read the rest of a
		// command's result from its text, as they do the original's).
		out.Command = &events.CommandResult{ExitCode: cr.ExitCode, TimedOut: true}
	}
	if res.Todos != nil {
		out.Todos = r.todos(res.Todos)
	}
	cp.Result = out
	return cp
}

func (r *Redactor) todos(in []events.Todo) []events.Todo {
	out := make([]events.Todo, len(in))
	for i, t := range in {
		out[i] = events.Todo{ID: r.String(t.ID), Content: r.String(t.Content), Status: t.Status, Priority: t.Priority, Notes: r.String(t.Notes)}
	}
	return out
}

// Timeline returns a timeline holding what an export's end reads of tl,
// redacted: the run status, the queue, the todos and the model.
func (r *Redactor) Timeline(tl *events.Timeline) *events.Timeline {
	out := events.NewTimeline()
	if m := tl.Meta().Model; m != "" {
		out.Apply(events.Event{Kind: events.KindModelLoaded, Model: r.String(m)})
	}
	q := make([]events.QueuedMessage, len(tl.Queue()))
	for i, m := range tl.Queue() {
		q[i] = events.QueuedMessage{ID: r.String(m.ID), Text: r.String(m.Text), WebSearch: m.WebSearch}
	}
	out.SetQueue(q)
	if todos := tl.Todos(); todos != nil {
		out.Apply(events.Event{Kind: events.KindTodoUpdated, Todos: r.todos(todos)})
	}
	out.SetTask(events.Task{Status: tl.Status().String()})
	return out
}

// Writer is an export's item writer (transcript.Writer's methods).
type Writer interface {
	Item(it *events.Item) error
	End(tl *events.Timeline) error
}

// NewWriter returns a Writer that hands w redacted copies of the items
// and the end state: nothing unredacted reaches w.
func NewWriter(w Writer, r *Redactor) Writer { return &writer{w: w, r: r} }

type writer struct {
	w Writer
	r *Redactor
}

func (x *writer) Item(it *events.Item) error    { return x.w.Item(x.r.Item(it)) }
func (x *writer) End(tl *events.Timeline) error { return x.w.End(x.r.Timeline(tl)) }
