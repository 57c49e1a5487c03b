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
	"strconv"
	"strings"
	"unicode/utf8"

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

// WriteJSONL writes one compact JSON object per line. Every text is
// written whole, byte for byte as encoding/json encodes it.
func WriteJSONL(w io.Writer, tl *events.Timeline) error {
	e := newStreamEncoder(w, "")
	for _, r := range Records(tl) {
		var bigs []string
		r = stashRecord(r, e.token, &bigs)
		if err := e.encode(r, bigs); err != nil {
			return fmt.Errorf("write jsonl: %w", err)
		}
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	return nil
}

// WriteJSON writes {"items":[…],"state":{…}} as one indented document,
// every text whole.
func WriteJSON(w io.Writer, tl *events.Timeline) error {
	recs := Records(tl)
	var bigs []string
	e := newStreamEncoder(w, "  ")
	for i := range recs {
		recs[i] = stashRecord(recs[i], e.token, &bigs)
	}
	doc := struct {
		Items []Record `json:"items"`
		State Record   `json:"state"`
	}{Items: recs[:len(recs)-1], State: recs[len(recs)-1]}
	if err := e.encode(doc, bigs); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	if err := e.w.Flush(); err != nil {
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

// WriteMarkdown writes a readable transcript. Every daemon string is
// sanitized: the output may go straight to a terminal. A tool output longer
// than MaxMarkdownOutput bytes is cut, and says how much was left out.
func WriteMarkdown(w io.Writer, tl *events.Timeline, title string) error {
	return writeMarkdown(w, tl, title, false)
}

// WriteMarkdownFull is WriteMarkdown with every tool output whole.
func WriteMarkdownFull(w io.Writer, tl *events.Timeline, title string) error {
	return writeMarkdown(w, tl, title, true)
}

func writeMarkdown(w io.Writer, tl *events.Timeline, title string, full bool) error {
	b := bufio.NewWriterSize(w, 256<<10)
	if title != "" {
		fmt.Fprintf(b, "# %s\n\n", sanitize.Line(title))
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
				fmt.Fprintf(b, "_tokens: %d in (%d cached), %d out_\n\n", u.InputTokens, u.CachedTokens, u.OutputTokens)
			}
		case events.ItemTool:
			writeToolMarkdown(b, it.Tool, full)
		case events.ItemNotice:
			fmt.Fprintf(b, "> **%s:** %s\n\n", it.Level, sanitize.Line(it.Text))
		}
	}
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
