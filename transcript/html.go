package transcript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tools"
)

//go:embed htmlassets/page.css
var pageCSS string

//go:embed htmlassets/page.js
var pageJS string

// HTMLOptions say what heads an HTML transcript.
type HTMLOptions struct {
	Title  string // the session's name
	System string // the agent system it came from ("claude-code", "maria", …)
	Cwd    string // the session's working directory, when known
	// Note, when set, is a line under the heading, asked for when the
	// heading is written, at the end (what redaction took out).
	Note func() string
}

// htmlHead is what every HTML transcript starts with up to its first
// entry: the styles and script are the same bytes every time, so their
// Content-Security-Policy hashes are computed once.
var htmlHead = sync.OnceValue(func() (h struct{ style, csp string }) {
	var css bytes.Buffer
	css.WriteString(pageCSS)
	style := styles.Get(codeStyle)
	if err := chromahtml.New(chromahtml.WithClasses(true)).WriteCSS(&css, style); err != nil {
		css.WriteString("/* no code colours */")
	}
	h.style = css.String()
	sum := func(s string) string {
		d := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(d[:]) + "'"
	}
	// Nothing may be loaded from anywhere: the file must open offline and
	// show nothing it does not hold. Only this style and this script run.
	h.csp = "default-src 'none'; style-src " + sum(h.style) + "; script-src " + sum(pageJS) +
		"; img-src 'none'; form-action 'none'; base-uri 'none'"
	return h
})

// codeStyle is chroma's style for code blocks.
const codeStyle = "github"

// HTMLWriter writes a session as one self-contained HTML page, an item at
// a time (see Writer): styles and the search script inline, nothing
// loaded from any address. The heading (system, model, time span, tokens,
// cost, status, todos) is known only at the end, so it is written last
// and shown first by the page's layout.
//
// Every text is sanitized (sanitize.Text) and escaped; Markdown is
// rendered without raw HTML, images become their alternative text, and
// links keep only web and mail addresses. The writer does not redact:
// wrap it with redact.NewWriter for that.
type HTMLWriter struct {
	b       *bufio.Writer
	o       HTMLOptions
	started bool
	n       int // items written
	md      *markdown

	first, last time.Time
	usage       events.Usage
	turns       int
}

// NewHTMLWriter writes to w, through a buffer.
func NewHTMLWriter(w io.Writer, o HTMLOptions) *HTMLWriter {
	return &HTMLWriter{b: bufio.NewWriterSize(w, 256<<10), o: o}
}

func (h *HTMLWriter) start() {
	if h.started {
		return
	}
	h.started = true
	head := htmlHead()
	title := sanitize.Line(h.o.Title)
	if title == "" {
		title = "Session"
	}
	b := h.b
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"")
	b.WriteString(head.csp)
	b.WriteString("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"perch\">\n<title>")
	h.text(title)
	b.WriteString(" · perch</title>\n<style>")
	b.WriteString(head.style)
	b.WriteString("</style>\n</head><body><div id=\"t\">\n<nav id=\"bar\"><input id=\"q\" type=\"search\" placeholder=\"Search this session\" aria-label=\"Search this session\" autocomplete=\"off\"><span id=\"n\"></span></nav>\n")
}

// text writes s escaped for an element's content: only &, < and > need
// it there, which keeps quoted code its size.
func (h *HTMLWriter) text(s string) {
	b := h.b
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// attr writes s escaped for a quoted attribute value.
func (h *HTMLWriter) attr(s string) { h.b.WriteString(html.EscapeString(s)) }

// Item writes one entry.
func (h *HTMLWriter) Item(it *events.Item) error {
	h.start()
	h.n++
	if !it.Created.IsZero() {
		if h.first.IsZero() || it.Created.Before(h.first) {
			h.first = it.Created
		}
		if it.Created.After(h.last) {
			h.last = it.Created
		}
	}
	switch it.Kind {
	case events.ItemUser:
		h.open("u", "User", it.Created)
		h.b.WriteString(`<div class="b p">`)
		h.text(strings.TrimSpace(sanitize.Text(it.Body())))
		h.b.WriteString("</div>")
	case events.ItemAssistant:
		h.assistant(it)
	case events.ItemTool:
		h.tool(it)
	default:
		fmt.Fprintf(h.b, `<article class="i n %s" id="e%d"><div class="p">`, it.Level, h.n)
		h.text(noticeMark(it.Level) + sanitize.Text(it.Text))
		h.b.WriteString("</div>")
	}
	h.b.WriteString("</article>\n")
	return nil // write errors surface at End's flush
}

func noticeMark(l events.NoticeLevel) string {
	switch l {
	case events.LevelWarning:
		return "⚠ "
	case events.LevelError:
		return "✗ "
	}
	return "· "
}

// open starts an entry's article and its header line.
func (h *HTMLWriter) open(class, who string, at time.Time) {
	fmt.Fprintf(h.b, `<article class="i %s" id="e%d"><div class="h"><b>%s</b>`, class, h.n, who)
	h.stamp(at)
	h.b.WriteString("</div>")
}

func (h *HTMLWriter) stamp(at time.Time) {
	if !at.IsZero() {
		fmt.Fprintf(h.b, `<time datetime="%s">%s</time>`, at.UTC().Format(time.RFC3339), at.UTC().Format("15:04:05"))
	}
}

func (h *HTMLWriter) assistant(it *events.Item) {
	h.open("a", "Assistant", it.Created)
	b := h.b
	if t := strings.TrimSpace(sanitize.Text(it.ThinkingBody())); t != "" {
		fmt.Fprintf(b, `<details class="th"><summary>Thinking · %s</summary><div class="p">`, sizeText(len(t)))
		h.text(t)
		b.WriteString("</div></details>")
	}
	b.WriteString(`<div class="b">`)
	if text := strings.TrimSpace(sanitize.Text(it.Body())); text != "" {
		if h.md == nil {
			h.md = newMarkdown()
		}
		if err := h.md.render(b, text); err != nil {
			// Shown as it is rather than lost.
			b.WriteString(`<div class="p">`)
			h.text(text)
			b.WriteString("</div>")
		}
	} else if len(it.ToolCalls) == 0 {
		b.WriteString("<p><em>(empty reply)</em></p>")
	} else {
		b.WriteString("<p><em>Calls ")
		for i, c := range it.ToolCalls {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("<code>")
			h.text(sanitize.Line(events.Excerpt([]byte(c.Name), 100)))
			b.WriteString("</code>")
		}
		b.WriteString(".</em></p>")
	}
	b.WriteString("</div>")
	if it.Incomplete {
		b.WriteString(`<div class="usage bad">incomplete: the stream ended before this reply did</div>`)
	}
	if u := it.Usage; u != nil {
		h.turns++
		h.usage.Add(u)
		fmt.Fprintf(b, `<div class="usage">tokens: %s in (%s cached), %s out`, count(u.InputTokens), count(u.CachedTokens), count(u.OutputTokens))
		if u.HasCost {
			b.WriteString(" · " + events.CostText(u.CostUSD))
		}
		b.WriteString("</div>")
	}
}

// An output of more lines or bytes than these starts collapsed (every view shows a long output's head only).
const (
	collapseLines = 12
	collapseBytes = 2000
)

func (h *HTMLWriter) tool(it *events.Item) {
	t := it.Tool
	b := h.b
	cr := t.Command()
	out := events.ToolOutcome(t.Status, cr)
	class := "ok"
	switch {
	case out.Failed():
		class = "fail"
	case out != events.OutcomeOK:
		class = "other"
	}
	mark := "✓"
	switch class {
	case "fail":
		mark = "✗"
	case "other":
		mark = "•"
	}
	fmt.Fprintf(b, `<article class="i t %s" id="e%d"><div class="h"><span class="st">%s</span><b>`, class, h.n, mark)
	name := t.Name
	if name == "" {
		name = t.Call.Name
	}
	h.text(sanitize.Line(name))
	b.WriteString("</b>")
	if k := t.KeyArg(); k != "" {
		b.WriteString("<code>")
		h.text(sanitize.Line(k))
		b.WriteString("</code>")
	}
	status := out.String()
	if cr != nil && cr.ExitCode != nil && *cr.ExitCode != 0 {
		status += ", exit " + strconv.Itoa(*cr.ExitCode)
	}
	if out != events.OutcomeOK {
		if out.Failed() {
			b.WriteString(`<span class="bad">`)
		} else {
			b.WriteString("<span>")
		}
		b.WriteString(status + "</span>")
	}
	if t.Pruned {
		b.WriteString(`<span>pruned from context</span>`)
	}
	b.WriteString("</div>")

	args := t.Call.Args
	shown := false
	if edits := tools.Edits(name, args); len(edits) > 0 {
		for _, e := range edits {
			h.diff(e.Path, e.Op, e.Diff, tools.HunkLineOf)
		}
		shown = true
	} else if tools.KindOf(name) == tools.Patch {
		// The result's diff, else the call's patch (as the TUI draws it).
		p := ""
		if t.Result != nil {
			if pr := events.WithDetails(t.Result, tools.FormatPatch, t.Call).Patch; pr != nil {
				p = pr.Diff
			}
		}
		if p == "" {
			p = tools.PatchText(args)
		}
		if p != "" {
			h.diff("", "patch", tools.DropPatchNoise(p), tools.DiffLineOf)
			shown = true
		}
	}
	res := t.Result
	if tools.KindOf(name) == tools.TodoList {
		var todos []events.Todo
		if res != nil {
			todos = res.Todos
			if todos == nil {
				todos = tools.ParseTodos(res.Text, args)
			}
		}
		if len(todos) > 0 {
			h.todos(todos)
			return
		}
	}
	if !shown && (len(args) > 0 || t.Call.ArgsRaw != "") {
		raw := string(args)
		if raw == "" {
			raw = t.Call.ArgsRaw
		}
		// The key argument says it all for most calls; the rest waits.
		if len(raw) > len(t.KeyArg())+24 {
			h.block("Arguments", sanitize.Text(raw), true)
		}
	}
	if res == nil {
		return
	}
	text := res.Text
	if res.IsError && res.ErrorText != "" {
		text = res.ErrorText
	}
	text = strings.TrimRight(sanitize.Text(text), "\n")
	if text == "" {
		return
	}
	if !res.IsError && tools.LooksLikeDiff(text) {
		h.diff("", "output", text, tools.DiffLineOf)
		return
	}
	long := len(text) > collapseBytes || strings.Count(text, "\n") >= collapseLines
	label := "Output"
	if res.IsError {
		label = "Error"
	}
	h.block(label, text, long)
}

// block writes a text in a <details>, closed when collapsed.
func (h *HTMLWriter) block(label, text string, collapsed bool) {
	b := h.b
	b.WriteString("<details")
	if !collapsed {
		b.WriteString(" open")
	}
	fmt.Fprintf(b, "><summary>%s · %s</summary><pre>", label, linesText(text))
	h.text(text)
	b.WriteString("</pre></details>")
}

// diff writes an edit as diff lines, marked added, removed and hunk as
// kind reads them (a bare hunk's lines or a whole patch's).
func (h *HTMLWriter) diff(path, op, diff string, kind func(string) tools.DiffLine) {
	b := h.b
	diff = sanitize.Text(diff)
	if strings.TrimSpace(diff) == "" {
		// The call names the file but not the change (older codex).
		b.WriteString(`<div class="usage">`)
		h.text(strings.TrimSpace(op + " " + sanitize.Line(path)))
		b.WriteString("</div>")
		return
	}
	added, removed := tools.FileEdit{Diff: diff}.Stat()
	b.WriteString("<details")
	if len(diff) <= 4*collapseBytes {
		b.WriteString(" open")
	}
	b.WriteString("><summary>")
	if op != "" {
		h.text(op + " ")
	}
	h.text(sanitize.Line(path))
	fmt.Fprintf(b, ` <span class="ok">+%d</span> <span class="bad">−%d</span></summary><pre class="diff">`, added, removed)
	for l := range strings.SplitSeq(strings.TrimRight(diff, "\n"), "\n") {
		class := ""
		switch kind(l) {
		case tools.DiffAdd:
			class = "ad"
		case tools.DiffDel:
			class = "de"
		case tools.DiffHunk, tools.DiffHeader:
			class = "hu"
		}
		if class == "" {
			h.text(l)
			b.WriteByte('\n')
			continue
		}
		fmt.Fprintf(b, `<span class="%s">`, class)
		h.text(l)
		b.WriteString("</span>")
	}
	b.WriteString("</pre></details>")
}

func (h *HTMLWriter) todos(todos []events.Todo) {
	b := h.b
	b.WriteString(`<ul class="todos">`)
	for _, t := range todos {
		box := "☐"
		switch t.Status {
		case "completed":
			box = "☑"
		case "in_progress":
			box = "▶"
		}
		fmt.Fprintf(b, `<li class="%s">%s `, html.EscapeString(t.Status), box)
		h.text(sanitize.Line(t.Content))
		if t.Priority != "" {
			b.WriteString(" <small>(")
			h.text(sanitize.Line(t.Priority))
			b.WriteString(")</small>")
		}
		b.WriteString("</li>")
	}
	b.WriteString("</ul>")
}

// End writes the heading (shown first), the script, and flushes.
func (h *HTMLWriter) End(tl *events.Timeline) error {
	h.start()
	b := h.b
	b.WriteString(`<header id="sum"><h1>`)
	title := sanitize.Line(h.o.Title)
	if title == "" {
		title = "Session"
	}
	h.text(title)
	b.WriteString("</h1>")
	if h.o.Note != nil {
		b.WriteString(`<p class="usage">`)
		h.text(sanitize.Line(h.o.Note()))
		b.WriteString("</p>")
	}
	b.WriteString("<dl>")
	row := func(k, v string) {
		if v == "" {
			return
		}
		fmt.Fprintf(b, "<dt>%s</dt><dd>", k)
		h.text(sanitize.Line(v))
		b.WriteString("</dd>")
	}
	row("System", h.o.System)
	row("Model", tl.Meta().Model)
	row("Directory", h.o.Cwd)
	if !h.first.IsZero() {
		span := h.first.UTC().Format("2006-01-02 15:04:05")
		if h.last.After(h.first) {
			span += " – " + h.last.UTC().Format("2006-01-02 15:04:05") + " UTC (" + h.last.Sub(h.first).Round(time.Second).String() + ")"
		} else {
			span += " UTC"
		}
		row("Time", span)
	}
	row("Entries", strconv.Itoa(h.n))
	if h.turns > 0 {
		u := h.usage
		row("Tokens", fmt.Sprintf("%s in (%s cached), %s out over %d replies", count(u.InputTokens), count(u.CachedTokens), count(u.OutputTokens), h.turns))
		if u.HasCost {
			row("Cost", events.CostText(u.CostUSD))
		}
	}
	row("Status", tl.Status().String())
	b.WriteString("</dl>")
	if q := tl.Queue(); len(q) > 0 {
		fmt.Fprintf(b, `<details><summary>%d queued</summary><ul>`, len(q))
		for _, m := range q {
			b.WriteString("<li>")
			h.text(sanitize.Line(m.Text))
			b.WriteString("</li>")
		}
		b.WriteString("</ul></details>")
	}
	if todos := tl.Todos(); len(todos) > 0 {
		b.WriteString("<details open><summary>Todos</summary>")
		h.todos(todos)
		b.WriteString("</details>")
	}
	b.WriteString("</header>\n</div>\n<script>")
	b.WriteString(pageJS)
	b.WriteString("</script>\n</body></html>\n")
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// count writes n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func linesText(s string) string {
	n := strings.Count(s, "\n") + 1
	if n == 1 {
		return sizeText(len(s))
	}
	return strconv.Itoa(n) + " lines"
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return strconv.Itoa(n) + " bytes"
}
