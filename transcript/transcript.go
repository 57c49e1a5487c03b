// Package transcript writes a timeline out for people and programs: the
// normalized JSON-lines contract of `perch export --format jsonl`, one JSON
// document, and a Markdown transcript to paste into an issue.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
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
		return Record{Type: "user", ID: ptr(it.ID), Text: ptr(it.Body())}
	case events.ItemAssistant:
		calls := make([]Call, 0, len(it.ToolCalls))
		for _, c := range it.ToolCalls {
			calls = append(calls, Call{ID: c.ID, Name: c.Name, Arguments: args(c)})
		}
		r := Record{Type: "assistant", ID: ptr(it.ID), Text: ptr(it.Body()), Thinking: optional(it.ThinkingBody()),
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
		if res := t.Result; res != nil {
			out = t.OutputText()
			if res.IsError && out == "" {
				out = res.ErrorText
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

// Writer writes one export an item at a time: Item for each item in
// order, then End with the timeline, for its closing state. An exporter
// can so write the items a timeline settled and let them go before the
// session is read to its end (events.Timeline.Settled).
type Writer interface {
	Item(it *events.Item) error
	End(tl *events.Timeline) error
}

// NewWriter is the Writer of a format: "json", "jsonl", else Markdown with
// title and md's options.
func NewWriter(w io.Writer, format, title string, md MarkdownOptions) Writer {
	switch format {
	case "json":
		return NewJSONWriter(w)
	case "jsonl":
		return NewJSONLWriter(w)
	}
	return NewMarkdownWriter(w, title, md)
}

// writeAll writes the timeline's items and its end.
func writeAll(w Writer, tl *events.Timeline) error {
	for _, it := range tl.Items() {
		if err := w.Item(it); err != nil {
			return err
		}
	}
	return w.End(tl)
}

// Records is the whole export: one record per item, then the state.
func Records(tl *events.Timeline) []Record {
	out := make([]Record, 0, tl.Len()+1)
	for _, it := range tl.Items() {
		out = append(out, ItemRecord(it))
	}
	return append(out, StateRecord(tl))
}

// WriteJSONL writes one compact JSON object per line. Every text is
// written whole, byte for byte as encoding/json encodes it.
func WriteJSONL(w io.Writer, tl *events.Timeline) error {
	return writeAll(NewJSONLWriter(w), tl)
}

// JSONLWriter writes the lines of WriteJSONL one record at a time, for a
// caller that writes an export's items before its timeline is complete
// (see Writer).
type JSONLWriter struct {
	e   *recordEncoder
	out countWriter
}

// NewJSONLWriter writes to w, through a buffer (Flush).
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	j := &JSONLWriter{out: countWriter{w: w}}
	j.e = newRecordEncoder(&j.out, "")
	return j
}

// Item writes the record of one timeline item.
func (j *JSONLWriter) Item(it *events.Item) error { return j.write(ItemRecord(it)) }

// State writes the closing record.
func (j *JSONLWriter) State(tl *events.Timeline) error { return j.write(StateRecord(tl)) }

// End writes the closing record and flushes.
func (j *JSONLWriter) End(tl *events.Timeline) error {
	if err := j.State(tl); err != nil {
		return err
	}
	return j.Flush()
}

// Written is how many bytes the records written so far take, buffered
// ones included.
func (j *JSONLWriter) Written() int64 { return j.out.n + int64(j.e.w.Buffered()) }

// Flush writes out what is buffered.
func (j *JSONLWriter) Flush() error {
	if err := j.e.w.Flush(); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	return nil
}

func (j *JSONLWriter) write(r Record) error {
	if err := j.e.record(&r, ""); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	j.e.w.WriteByte('\n')
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteJSON writes {"items":[…],"state":{…}} as one indented document,
// every text whole.
func WriteJSON(w io.Writer, tl *events.Timeline) error {
	return writeAll(NewJSONWriter(w), tl)
}

// JSONWriter writes WriteJSON's document one item at a time (see Writer):
// byte for byte what encoding/json writes for the whole document, indented
// by two spaces.
type JSONWriter struct {
	e *recordEncoder
	n int // items written
}

// NewJSONWriter writes to w, through a buffer.
func NewJSONWriter(w io.Writer) *JSONWriter {
	return &JSONWriter{e: newRecordEncoder(w, "  ")}
}

// Item writes the record of one item as the next element of "items".
func (j *JSONWriter) Item(it *events.Item) error {
	sep := ",\n    "
	if j.n == 0 {
		sep = "{\n  \"items\": [\n    "
	}
	j.n++
	j.e.w.WriteString(sep)
	// An element of "items" sits two levels deep in the document.
	r := ItemRecord(it)
	if err := j.e.record(&r, "    "); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// End closes "items", writes "state" and flushes.
func (j *JSONWriter) End(tl *events.Timeline) error {
	if j.n == 0 {
		j.e.w.WriteString("{\n  \"items\": [],\n  \"state\": ")
	} else {
		j.e.w.WriteString("\n  ],\n  \"state\": ")
	}
	r := StateRecord(tl)
	if err := j.e.record(&r, "  "); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	j.e.w.WriteString("\n}\n")
	if err := j.e.w.Flush(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// recordEncoder writes records as a json.Encoder with HTML escaping off
// writes them, compact or indented, straight to the output a member at a
// time: the values are encoding/json's (the strings jsonx.AppendString's,
// which writes them as encoding/json does, fuzzed against it), and a long
// text goes out in pieces, so that no record (a tool output of
// megabytes) is built whole in a second, escaped copy.
type recordEncoder struct {
	w      *bufio.Writer
	indent string // "" for compact
	buf    bytes.Buffer
	enc    *json.Encoder // into buf, for the values that are not strings
	str    []byte        // a string or a piece of one, encoded
	prefix string        // the record's indentation (indented only)
	n      int           // members written of the record
}

func newRecordEncoder(w io.Writer, indent string) *recordEncoder {
	e := &recordEncoder{w: bufio.NewWriterSize(w, 256<<10), indent: indent}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// record writes r, its lines after the first starting with prefix when
// indented. The members are written in the order of Record's fields, and
// omitted as its omitempty tags say (TestRecordsAsEncodingJSON holds the
// two together).
func (e *recordEncoder) record(r *Record, prefix string) error {
	e.prefix, e.n = prefix, 0
	e.w.WriteByte('{')
	e.text("type", &r.Type)
	e.text("id", r.ID)
	e.text("level", r.Level)
	e.text("kind", r.Kind)
	e.text("text", r.Text)
	e.text("thinking", r.Thinking)
	err := errors.Join(
		value(e, "tool_calls", r.ToolCalls),
		value(e, "usage", r.Usage))
	e.text("stop_reason", r.StopReason)
	err = errors.Join(err, value(e, "incomplete", r.Incomplete))
	e.text("name", r.Name)
	e.text("status", r.Status)
	err = errors.Join(err, value(e, "args", r.Args))
	e.text("output", r.Output)
	err = errors.Join(err,
		value(e, "exit_code", r.ExitCode),
		value(e, "queue", r.Queue),
		value(e, "todos", r.Todos))
	if e.indent != "" {
		e.w.WriteString("\n" + prefix)
	}
	e.w.WriteByte('}')
	return err
}

// key starts a member.
func (e *recordEncoder) key(k string) {
	if e.n > 0 {
		e.w.WriteByte(',')
	}
	e.n++
	if e.indent == "" {
		e.w.WriteString(`"` + k + `":`)
		return
	}
	e.w.WriteString("\n" + e.prefix + e.indent + `"` + k + `": `)
}

// textPiece is how much of a long text is encoded at a time.
const textPiece = 32 << 10

// text writes a string member, unless s is nil: in pieces cut at rune
// starts, so that each piece escapes exactly as its part of s would in
// one go.
func (e *recordEncoder) text(k string, s *string) {
	if s == nil {
		return
	}
	e.key(k)
	e.w.WriteByte('"')
	for rest := *s; len(rest) > 0; {
		n := min(len(rest), textPiece)
		for i := 0; i < utf8.UTFMax-1 && n < len(rest) && !utf8.RuneStart(rest[n]); i++ {
			n--
		}
		e.str = jsonx.AppendString(e.str[:0], rest[:n])
		e.w.Write(e.str[1 : len(e.str)-1]) // without the quotes
		rest = rest[n:]
	}
	e.w.WriteByte('"')
	if cap(e.str) > 2*textPiece {
		e.str = nil // a piece of invalid UTF-8 grew it: let it go
	}
}

// value writes a member that is not a string through encoding/json,
// unless v is nil. encoding/json's error (a cost that is not a number,
// arguments that are not JSON) is returned, and the member is written as
// null so that the line stays JSON.
func value[T any](e *recordEncoder, k string, v *T) error {
	if v == nil {
		return nil
	}
	e.key(k)
	e.buf.Reset()
	if e.indent != "" {
		e.enc.SetIndent(e.prefix+e.indent, e.indent)
	}
	if err := e.enc.Encode(v); err != nil {
		e.w.WriteString("null")
		return err
	}
	e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'}))
	return nil
}

// MaxMarkdownOutput bounds how much of one tool output the Markdown
// transcript quotes; it is meant to be read and pasted.
const MaxMarkdownOutput = 4000

// MarkdownOptions say what a Markdown transcript leaves out.
type MarkdownOptions struct {
	// Full quotes every tool output whole; by default one longer than
	// MaxMarkdownOutput bytes is cut, and says how much was left out.
	Full bool
	// NoThinking leaves the model's reasoning out (by default each
	// assistant turn shows it first, as a quoted block).
	NoThinking bool
}

// WriteMarkdown writes a readable transcript. Every daemon string is
// sanitized: the output may go straight to a terminal. A tool output longer
// than MaxMarkdownOutput bytes is cut, and says how much was left out.
func WriteMarkdown(w io.Writer, tl *events.Timeline, title string) error {
	return WriteMarkdownWith(w, tl, title, MarkdownOptions{})
}

// WriteMarkdownFull is WriteMarkdown with every tool output whole.
func WriteMarkdownFull(w io.Writer, tl *events.Timeline, title string) error {
	return WriteMarkdownWith(w, tl, title, MarkdownOptions{Full: true})
}

// WriteMarkdownWith is WriteMarkdown with options.
func WriteMarkdownWith(w io.Writer, tl *events.Timeline, title string, o MarkdownOptions) error {
	return writeAll(NewMarkdownWriter(w, title, o), tl)
}

// MarkdownWriter writes WriteMarkdownWith's transcript one item at a time
// (see Writer).
type MarkdownWriter struct {
	b     *bufio.Writer
	o     MarkdownOptions
	title string
}

// NewMarkdownWriter writes to w, through a buffer; the title (if any)
// heads the transcript.
func NewMarkdownWriter(w io.Writer, title string, o MarkdownOptions) *MarkdownWriter {
	return &MarkdownWriter{b: bufio.NewWriterSize(w, 256<<10), o: o, title: title}
}

// head writes the title once, before whatever comes first.
func (m *MarkdownWriter) head() {
	if m.title != "" {
		fmt.Fprintf(m.b, "# %s\n\n", sanitize.Line(m.title))
		m.title = ""
	}
}

// Item writes one item's section.
func (m *MarkdownWriter) Item(it *events.Item) error {
	m.head()
	b := m.b
	switch it.Kind {
	case events.ItemUser:
		b.WriteString("## User\n\n")
		b.WriteString(quote(sanitize.Text(it.Body())))
		b.WriteString("\n\n")
	case events.ItemAssistant:
		b.WriteString("## Assistant\n\n")
		if !m.o.NoThinking {
			writeThinkingMarkdown(b, it.ThinkingBody())
		}
		if text := strings.TrimSpace(sanitize.Text(it.Body())); text != "" {
			b.WriteString(text)
		} else {
			// A turn of tool calls only: the tool items follow.
			b.WriteString(callsMarkdown(it.ToolCalls))
		}
		b.WriteString("\n\n")
		if u := it.Usage; u != nil {
			fmt.Fprintf(b, "_tokens: %d in (%d cached), %d out", u.InputTokens, u.CachedTokens, u.OutputTokens)
			if u.HasCost {
				b.WriteString(", " + events.CostText(u.CostUSD))
			}
			b.WriteString("_\n\n")
		}
	case events.ItemTool:
		writeToolMarkdown(b, it.Tool, m.o.Full)
	case events.ItemNotice:
		fmt.Fprintf(b, "> **%s:** %s\n\n", it.Level, sanitize.Line(it.Text))
	}
	return nil // write errors surface at End's flush
}

// End writes the status, queue and todos, and flushes.
func (m *MarkdownWriter) End(tl *events.Timeline) error {
	m.head()
	b := m.b
	fmt.Fprintf(b, "---\n\nStatus: %s", tl.Status())
	if q := tl.Queue(); len(q) > 0 {
		fmt.Fprintf(b, " · %d queued:\n\n", len(q))
		for _, m := range q {
			fmt.Fprintf(b, "- %s\n", sanitize.Line(m.Text))
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
			fmt.Fprintf(b, "- [%s] %s (%s, %s)\n", mark, sanitize.Line(t.Content), t.Status, t.Priority)
		}
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// writeThinkingMarkdown writes a turn's reasoning as a quoted block
// marked Thinking, so that it reads apart from the reply.
func writeThinkingMarkdown(b *bufio.Writer, thinking string) {
	if t := strings.TrimSpace(sanitize.Text(thinking)); t != "" {
		b.WriteString("> **Thinking**\n>\n")
		b.WriteString(quote(t))
		b.WriteString("\n\n")
	}
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

func writeToolMarkdown(b *bufio.Writer, t *events.ToolItem, full bool) {
	// The outcome every view shows (events.ToolOutcome): a command that
	// exited non-zero failed, whatever the tool call's own status.
	cr := t.Command()
	status := events.ToolOutcome(t.Status, cr).String()
	if cr != nil && cr.ExitCode != nil && *cr.ExitCode != 0 {
		status += fmt.Sprintf(", exit %d", *cr.ExitCode)
	}
	fmt.Fprintf(b, "**Tool `%s`** (%s)", sanitize.Line(t.Name), status)
	if k := t.KeyArg(); k != "" {
		fmt.Fprintf(b, ": `%s`", strings.ReplaceAll(sanitize.Line(k), "`", "'"))
	}
	b.WriteString("\n\n")
	if writeEditMarkdown(b, t, full) {
		return
	}
	res := t.Output()
	if res == nil {
		return
	}
	out := res.Text
	if res.IsError && res.ErrorText != "" {
		out = res.ErrorText
	}
	if !full && len(out) > MaxMarkdownOutput {
		// Cut before sanitizing: the rest of a large output is never read.
		cut := strings.ToValidUTF8(out[:MaxMarkdownOutput], "")
		out = sanitize.Text(cut) + fmt.Sprintf("\n… (%d more bytes; --full shows everything)", len(out)-len(cut))
	} else {
		out = sanitize.Text(out)
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
