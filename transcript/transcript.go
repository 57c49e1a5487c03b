// Package transcript writes a timeline out for people and programs: the
// normalized JSON-lines contract of `perch export --format jsonl`, one JSON
// document, and a Markdown transcript to paste into an issue.
package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
)

// Record is one line of the jsonl export. Field order is the contract's.
type Record struct {
	Type string `json:"type"`
	// user, assistant, tool
	ID *string `json:"id,omitempty"`
	// notice (before text: the contract's key order)
	Level *string `json:"level,omitempty"`
	Kind  *string `json:"kind,omitempty"`
	Text  *string `json:"text,omitempty"`
	// assistant
	Thinking   *string `json:"thinking,omitempty"`
	ToolCalls  *[]Call `json:"tool_calls,omitempty"`
	Usage      *Usage  `json:"usage,omitempty"`
	StopReason *string `json:"stop_reason,omitempty"`
	Incomplete *bool   `json:"incomplete,omitempty"`
	// tool
	Name     *string          `json:"name,omitempty"`
	Status   *string          `json:"status,omitempty"`
	Args     *json.RawMessage `json:"args,omitempty"`
	Output   *string          `json:"output,omitempty"`
	ExitCode *int             `json:"exit_code,omitempty"`
	// state
	Queue *[]Queued `json:"queue,omitempty"`
	Todos *[]Todo   `json:"todos,omitempty"`
}

// Call is a tool call of an assistant record.
type Call struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Usage is the token usage of an assistant record. InputTokens is the whole
// prompt, cache reads and writes included; the optional counts appear only
// when the source reported them.
type Usage struct {
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CachedTokens     int64    `json:"cached_tokens"`
	CacheWriteTokens *int64   `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  *int64   `json:"reasoning_tokens,omitempty"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

func usageRecord(u *events.Usage) *Usage {
	r := &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens}
	if u.HasCacheWrite {
		r.CacheWriteTokens = ptr(u.CacheWriteTokens)
	}
	if u.HasReasoning {
		r.ReasoningTokens = ptr(u.ReasoningTokens)
	}
	if u.HasCost {
		r.CostUSD = ptr(u.CostUSD)
	}
	return r
}

// optional is a pointer to s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Queued is a queued message of the state record.
type Queued struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Todo is a todo of the state record.
type Todo struct {
	ID       string `json:"id"`
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

func ptr[T any](v T) *T { return &v }

// args is the parsed JSON when it parses, else the raw string (or null).
func args(c events.ToolCall) json.RawMessage {
	if len(c.Args) > 0 {
		return c.Args
	}
	if c.ArgsRaw == "" {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(c.ArgsRaw)
	return b
}

// ItemRecord is the jsonl record of one timeline item.
func ItemRecord(it *events.Item) Record {
	switch it.Kind {
	case events.ItemUser:
		return Record{Type: "user", ID: ptr(it.ID), Text: ptr(it.Text)}
	case events.ItemAssistant:
		calls := make([]Call, 0, len(it.ToolCalls))
		for _, c := range it.ToolCalls {
			calls = append(calls, Call{ID: c.ID, Name: c.Name, Arguments: args(c)})
		}
		r := Record{Type: "assistant", ID: ptr(it.ID), Text: ptr(it.Text), Thinking: optional(it.Thinking),
			ToolCalls: &calls, StopReason: optional(it.StopReason)}
		if it.Incomplete {
			r.Incomplete = ptr(true)
		}
		if it.Usage != nil {
			r.Usage = usageRecord(it.Usage)
		}
		return r
	case events.ItemTool:
		t := it.Tool
		out := ""
		if t.Result != nil {
			out = t.Result.Text
			if t.Result.IsError && out == "" {
				out = t.Result.ErrorText
			}
		}
		return Record{Type: "tool", ID: ptr(t.CallID), Name: ptr(t.Name), Status: ptr(t.Status.String()),
			Args: ptr(args(t.Call)), Output: ptr(out), ExitCode: t.Result.Exit()}
	}
	return Record{Type: "notice", Level: ptr(it.Level.String()), Kind: optional(it.NoticeKind), Text: ptr(it.Text)}
}

// StateRecord is the closing record: status, queue and todos.
func StateRecord(tl *events.Timeline) Record {
	q := make([]Queued, 0, len(tl.Queue()))
	for _, m := range tl.Queue() {
		q = append(q, Queued{ID: m.ID, Text: m.Text})
	}
	todos := make([]Todo, 0, len(tl.Todos()))
	for _, t := range tl.Todos() {
		todos = append(todos, Todo{ID: t.ID, Content: t.Content, Status: t.Status, Priority: t.Priority})
	}
	return Record{Type: "state", Status: ptr(tl.Status().String()), Queue: &q, Todos: &todos}
}

// Records is the whole export: one record per item, then the state.
func Records(tl *events.Timeline) []Record {
	out := make([]Record, 0, tl.Len()+1)
	for _, it := range tl.Items() {
		out = append(out, ItemRecord(it))
	}
	return append(out, StateRecord(tl))
}

// WriteJSONL writes one compact JSON object per line.
func WriteJSONL(w io.Writer, tl *events.Timeline) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range Records(tl) {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write jsonl: %w", err)
		}
	}
	return nil
}

// WriteJSON writes {"items":[…],"state":{…}} as one indented document.
func WriteJSON(w io.Writer, tl *events.Timeline) error {
	recs := Records(tl)
	doc := struct {
		Items []Record `json:"items"`
		State Record   `json:"state"`
	}{Items: recs[:len(recs)-1], State: recs[len(recs)-1]}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// MaxMarkdownOutput bounds how much of one tool output the Markdown
// transcript quotes; it is meant to be read and pasted.
const MaxMarkdownOutput = 4000

// WriteMarkdown writes a readable transcript. Every daemon string is
// sanitized: the output may go straight to a terminal.
func WriteMarkdown(w io.Writer, tl *events.Timeline, title string) error {
	var b bytes.Buffer
	if title != "" {
		fmt.Fprintf(&b, "# %s\n\n", sanitize.Line(title))
	}
	for _, it := range tl.Items() {
		switch it.Kind {
		case events.ItemUser:
			b.WriteString("## User\n\n")
			b.WriteString(quote(sanitize.Text(it.Text)))
			b.WriteString("\n\n")
		case events.ItemAssistant:
			b.WriteString("## Assistant\n\n")
			if text := strings.TrimSpace(sanitize.Text(it.Text)); text != "" {
				b.WriteString(text)
			} else {
				// A turn of tool calls only: the tool items follow.
				b.WriteString(callsMarkdown(it.ToolCalls))
			}
			b.WriteString("\n\n")
			if u := it.Usage; u != nil {
				fmt.Fprintf(&b, "_tokens: %d in (%d cached), %d out_\n\n", u.InputTokens, u.CachedTokens, u.OutputTokens)
			}
		case events.ItemTool:
			writeToolMarkdown(&b, it.Tool)
		case events.ItemNotice:
			fmt.Fprintf(&b, "> **%s:** %s\n\n", it.Level, sanitize.Line(it.Text))
		}
	}
	fmt.Fprintf(&b, "---\n\nStatus: %s", tl.Status())
	if q := tl.Queue(); len(q) > 0 {
		fmt.Fprintf(&b, " · %d queued:\n\n", len(q))
		for _, m := range q {
			fmt.Fprintf(&b, "- %s\n", sanitize.Line(m.Text))
		}
	} else {
		b.WriteString("\n")
	}
	if todos := tl.Todos(); len(todos) > 0 {
		b.WriteString("\nTodos:\n\n")
		for _, t := range todos {
			mark := " "
			if t.Status == "completed" {
				mark = "x"
			}
			fmt.Fprintf(&b, "- [%s] %s (%s, %s)\n", mark, sanitize.Line(t.Content), t.Status, t.Priority)
		}
	}
	_, err := w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// callsMarkdown stands for the text of a reply that has none.
func callsMarkdown(calls []events.ToolCall) string {
	if len(calls) == 0 {
		return "_(empty reply)_"
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = "`" + strings.ReplaceAll(sanitize.Line(events.Excerpt([]byte(c.Name), 100)), "`", "'") + "`"
	}
	return "_Calls " + strings.Join(names, ", ") + "._"
}

func writeToolMarkdown(b *bytes.Buffer, t *events.ToolItem) {
	status := t.Status.String()
	if r := t.Result; r != nil && r.Command != nil && r.Command.ExitCode != nil && *r.Command.ExitCode != 0 {
		status += fmt.Sprintf(", exit %d", *r.Command.ExitCode)
	}
	fmt.Fprintf(b, "**Tool `%s`** (%s)", sanitize.Line(t.Name), status)
	if k := t.KeyArg(); k != "" {
		fmt.Fprintf(b, ": `%s`", strings.ReplaceAll(sanitize.Line(k), "`", "'"))
	}
	b.WriteString("\n\n")
	if t.Result == nil {
		return
	}
	out := t.Result.Text
	if t.Result.IsError && t.Result.ErrorText != "" {
		out = t.Result.ErrorText
	}
	out = sanitize.Text(out)
	if len(out) > MaxMarkdownOutput {
		cut := strings.ToValidUTF8(out[:MaxMarkdownOutput], "")
		out = cut + fmt.Sprintf("\n… (%d more bytes)", len(out)-len(cut))
	}
	fence := "```"
	for strings.Contains(out, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%s\n%s\n%s\n\n", fence, strings.TrimRight(out, "\n"), fence)
}

func quote(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
