// Package transcript writes a timeline out for people and programs: the
// normalized JSON-lines contract of `perch export --format jsonl`, one JSON
// document, and a Markdown transcript to paste into an issue.
package transcript

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
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
	e   *streamEncoder
	enc *json.Encoder
	buf []byte
	out countWriter
}

// NewJSONLWriter writes to w, through a buffer (Flush).
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	j := &JSONLWriter{out: countWriter{w: w}}
	// Records without a large text are built in one buffer (fast); a
	// record with one streams its large texts in pieces (small memory).
	j.e = newStreamEncoder(&j.out, "")
	j.enc = json.NewEncoder(j.e.w)
	j.enc.SetEscapeHTML(false)
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
	var err error
	if hasBigText(&r) {
		var bigs []string
		r = stashRecord(r, j.e.token, &bigs)
		err = j.e.encode(r, bigs)
	} else if b, ok := appendRecord(j.buf[:0], &r); !ok {
		// Byte for byte what enc writes; a record it cannot take (a value
		// encoding/json refuses) goes to enc, to fail as it does.
		err = j.enc.Encode(r)
	} else {
		j.buf = append(b, '\n')
		_, err = j.e.w.Write(j.buf)
	}
	if err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
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

// appendRecord appends r as json.Encoder with HTML escaping off writes it
// (without the line end). ok is false when encoding/json would fail (a
// cost that is not a finite number, arguments that are not JSON).
func appendRecord(b []byte, r *Record) (_ []byte, ok bool) {
	str := func(key string, v *string) {
		if v != nil {
			b = append(append(append(b, ',', '"'), key...), '"', ':')
			b = jsonx.AppendString(b, *v)
		}
	}
	b = append(b, `{"type":`...)
	b = jsonx.AppendString(b, r.Type)
	str("id", r.ID)
	str("level", r.Level)
	str("kind", r.Kind)
	str("text", r.Text)
	str("thinking", r.Thinking)
	ok = true
	raw := func(v json.RawMessage) {
		if v == nil {
			b = append(b, "null"...)
			return
		}
		var good bool
		if b, good = jsonx.AppendCompact(b, v); !good {
			ok = false
		}
	}
	if r.ToolCalls != nil {
		b = append(b, `,"tool_calls":`...)
		if *r.ToolCalls == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, c := range *r.ToolCalls {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = jsonx.AppendString(b, c.ID)
				b = append(b, `,"name":`...)
				b = jsonx.AppendString(b, c.Name)
				b = append(b, `,"arguments":`...)
				raw(c.Arguments)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
	}
	if u := r.Usage; u != nil {
		b = append(b, `,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, u.InputTokens, 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, u.OutputTokens, 10)
		b = append(b, `,"cached_tokens":`...)
		b = strconv.AppendInt(b, u.CachedTokens, 10)
		if u.CacheWriteTokens != nil {
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, *u.CacheWriteTokens, 10)
		}
		if u.ReasoningTokens != nil {
			b = append(b, `,"reasoning_tokens":`...)
			b = strconv.AppendInt(b, *u.ReasoningTokens, 10)
		}
		if u.CostUSD != nil {
			b = append(b, `,"cost_usd":`...)
			var good bool
			if b, good = appendFloat(b, *u.CostUSD); !good {
				ok = false
			}
		}
		b = append(b, '}')
	}
	str("stop_reason", r.StopReason)
	if r.Incomplete != nil {
		b = strconv.AppendBool(append(b, `,"incomplete":`...), *r.Incomplete)
	}
	str("name", r.Name)
	str("status", r.Status)
	if r.Args != nil {
		b = append(b, `,"args":`...)
		raw(*r.Args)
	}
	str("output", r.Output)
	if r.ExitCode != nil {
		b = strconv.AppendInt(append(b, `,"exit_code":`...), int64(*r.ExitCode), 10)
	}
	if r.Queue != nil {
		b = append(b, `,"queue":`...)
		if *r.Queue == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, q := range *r.Queue {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonx.AppendString(append(b, `{"id":`...), q.ID)
				b = jsonx.AppendString(append(b, `,"text":`...), q.Text)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
	}
	if r.Todos != nil {
		b = append(b, `,"todos":`...)
		if *r.Todos == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, t := range *r.Todos {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonx.AppendString(append(b, `{"id":`...), t.ID)
				b = jsonx.AppendString(append(b, `,"content":`...), t.Content)
				b = jsonx.AppendString(append(b, `,"status":`...), t.Status)
				b = jsonx.AppendString(append(b, `,"priority":`...), t.Priority)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
	}
	return append(b, '}'), ok
}

// appendFloat writes f as encoding/json does (ES6 number formatting); ok
// is false for NaN and infinities, which it refuses.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// hasBigText reports whether r has a text that stashRecord would stash.
func hasBigText(r *Record) bool {
	big := func(p *string) bool { return p != nil && len(*p) >= bigText }
	if big(r.Text) || big(r.Output) {
		return true
	}
	if r.Queue != nil {
		for _, q := range *r.Queue {
			if len(q.Text) >= bigText {
				return true
			}
		}
	}
	return false
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
	e *streamEncoder
	n int // items written
}

// NewJSONWriter writes to w, through a buffer.
func NewJSONWriter(w io.Writer) *JSONWriter {
	return &JSONWriter{e: newStreamEncoder(w, "  ")}
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
	return j.record(ItemRecord(it), "    ")
}

// End closes "items", writes "state" and flushes.
func (j *JSONWriter) End(tl *events.Timeline) error {
	if j.n == 0 {
		j.e.w.WriteString("{\n  \"items\": [],\n  \"state\": ")
	} else {
		j.e.w.WriteString("\n  ],\n  \"state\": ")
	}
	if err := j.record(StateRecord(tl), "  "); err != nil {
		return err
	}
	j.e.w.WriteString("\n}\n")
	if err := j.e.w.Flush(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// record writes r indented as a value whose lines start with prefix,
// without encoding/json's newline after it.
func (j *JSONWriter) record(r Record, prefix string) error {
	var bigs []string
	r = stashRecord(r, j.e.token, &bigs)
	j.e.enc.SetIndent(prefix, "  ")
	j.e.trim = true
	if err := j.e.encode(r, bigs); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// bigText is the length from which a text is streamed to the output in
// pieces instead of going through encoding/json's buffer, which would hold
// a second, escaped copy of a tool output and grow to it by doubling.
const bigText = 64 << 10

// streamEncoder writes values as a json.Encoder with HTML escaping off
// would, except that large texts are first replaced by placeholders (a
// random token and an index, see stashRecord) and then written in pieces
// where their placeholder lands.
type streamEncoder struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder // into buf, for the value with its placeholders
	piece  bytes.Buffer
	pieces *json.Encoder // into piece, for the pieces of a large text
	token  string
	trim   bool // leave out the newline after each value
}

func newStreamEncoder(w io.Writer, indent string) *streamEncoder {
	e := &streamEncoder{w: bufio.NewWriterSize(w, 256<<10)}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	if indent != "" {
		e.enc.SetIndent("", indent)
	}
	e.pieces = json.NewEncoder(&e.piece)
	e.pieces.SetEscapeHTML(false)
	var r [16]byte
	_, _ = rand.Read(r[:])
	e.token = "perch-" + hex.EncodeToString(r[:]) + "-"
	return e
}

// stash replaces *p by a placeholder when it is large.
func stash(p **string, token string, bigs *[]string) {
	if *p == nil || len(**p) < bigText {
		return
	}
	*bigs = append(*bigs, **p)
	*p = ptr(token + strconv.Itoa(len(*bigs)-1))
}

// stashRecord returns r with its large texts stashed in bigs. r's slices
// are copied before they are changed: records share them with the timeline.
func stashRecord(r Record, token string, bigs *[]string) Record {
	stash(&r.Text, token, bigs)
	stash(&r.Output, token, bigs)
	if r.Queue != nil {
		q := make([]Queued, len(*r.Queue)) // never nil: [] stays []
		copy(q, *r.Queue)
		for i := range q {
			p := &q[i].Text
			stash(&p, token, bigs)
			q[i].Text = *p
		}
		r.Queue = &q
	}
	return r
}

// encode writes v (and a newline), putting each stashed text where its
// placeholder is.
func (e *streamEncoder) encode(v any, bigs []string) error {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	out := e.buf.Bytes()
	if e.trim {
		out = bytes.TrimSuffix(out, []byte{'\n'})
	}
	mark := []byte(`"` + e.token)
	for len(bigs) > 0 {
		i := bytes.Index(out, mark)
		if i < 0 {
			break
		}
		rest := out[i+len(mark):]
		j := bytes.IndexByte(rest, '"')
		k, err := strconv.Atoi(string(rest[:max(j, 0)]))
		if j < 0 || err != nil || k < 0 || k >= len(bigs) {
			return fmt.Errorf("lost a placeholder")
		}
		e.w.Write(out[:i])
		if err := e.writeString(bigs[k]); err != nil {
			return err
		}
		out = rest[j+1:]
	}
	_, err := e.w.Write(out)
	return err
}

// writeString writes s as a JSON string, in pieces cut at rune starts, so
// each piece escapes exactly as its part of s would in one go.
func (e *streamEncoder) writeString(s string) error {
	e.w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), 32<<10)
		for k := 0; k < utf8.UTFMax-1 && n < len(s) && !utf8.RuneStart(s[n]); k++ {
			n--
		}
		e.piece.Reset()
		if err := e.pieces.Encode(s[:n]); err != nil {
			return err
		}
		p := e.piece.Bytes()
		e.w.Write(p[1 : len(p)-2]) // without the quotes and the newline
		s = s[n:]
	}
	_, err := e.w.Write([]byte{'"'})
	return err
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
