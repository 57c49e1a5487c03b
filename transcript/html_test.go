package transcript

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/transcript/redact"
	"github.com/perch-tui/perch/transcript/redact/redacttest"
)

// hostile is text that tries to become markup, load something or run
// something; the page must show it as text.
const hostile = `<img src="http://127.0.0.1:9/u.png"><script>alert(1)</script>` +
	"\x1b]52;c;aGk=\x07 \u202Eevil\u202C <iframe src=//127.0.0.1:9/></iframe>"

// hostileMD is Markdown that tries the same through the renderer.
const hostileMD = "Look: ![pixel](http://127.0.0.1:9/pixel.png) [click](javascript:alert(1)) " +
	"<img src=http://127.0.0.1:9/raw.png> <https://example.org/ok> [fine](https://example.org/doc)\n\n" +
	"```html\n<script src=\"http://127.0.0.1:9/x.js\"></script>\n```\n"

// FinalReply is the last reply of the seeded session: the page must show it.
const finalReply = "All done: the login bug was a stale token cache, quokka."

// seededTimeline is a session with every seeded credential in a tool's
// arguments, its output and the model's reasoning, plus a user message
// and a path naming the home directory, an edit, todos, a failed
// command, a long output, a notice and hostile text.
func seededTimeline(t testing.TB) *events.Timeline {
	t.Helper()
	tl := events.NewTimeline()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	next := func() time.Time { at = at.Add(7 * time.Second); return at }
	tl.Apply(events.Event{Kind: events.KindModelLoaded, Model: "claude-test-1"})
	tl.Apply(events.Event{Kind: events.KindUserMessage, ID: "u1", Created: next(),
		Text: "Fix the login bug in " + redacttest.Home + "/app/login.go " + hostile})
	usage := &events.Usage{InputTokens: 1200, OutputTokens: 80, CachedTokens: 200, CostUSD: 0.0123, HasCost: true}
	for i, s := range redacttest.Secrets() {
		id := "call-" + s.Name
		args, _ := json.Marshal(map[string]string{"command": "echo '" + s.Text + "'"})
		call := events.ToolCall{ID: id, Name: "Bash", Args: args}
		tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "a" + s.Name, Created: next(),
			Thinking: "I should check " + s.Text, Text: "Checking " + s.Name + ".", ToolCalls: []events.ToolCall{call}, Usage: usage})
		exit := i % 2
		tl.Apply(events.Event{Kind: events.KindPostToolCall, Created: next(), Tool: &events.ToolEvent{Call: call, Name: "Bash",
			Result: &events.ToolResult{Text: "out: " + s.Text + "\n", ExitCode: &exit}}})
	}
	edit, _ := json.Marshal(map[string]string{"file_path": redacttest.Home + "/app/login.go", "old_string": "cache := old\n", "new_string": "cache := fresh\n"})
	todo, _ := json.Marshal(map[string]any{"todos": []map[string]string{{"content": "Fix the cache", "status": "completed"}, {"content": "Run the tests", "status": "pending"}}})
	long := strings.Repeat("line of a long build log\n", 30) + "the buried word is xylophone\n"
	calls := []events.ToolCall{{ID: "e1", Name: "Edit", Args: edit}, {ID: "t1", Name: "TodoWrite", Args: todo}, {ID: "b1", Name: "Bash", Args: json.RawMessage(`{"command":"go build ./..."}`)}}
	tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "a-edit", Created: next(), Text: hostileMD, ToolCalls: calls, Usage: usage})
	tl.Apply(events.Event{Kind: events.KindPostToolCall, Created: next(), Tool: &events.ToolEvent{Call: calls[0], Name: "Edit", Result: &events.ToolResult{Text: "edited"}}})
	tl.Apply(events.Event{Kind: events.KindPostToolCall, Created: next(), Tool: &events.ToolEvent{Call: calls[1], Name: "TodoWrite", Result: &events.ToolResult{Text: "ok",
		Todos: []events.Todo{{Content: "Fix the cache", Status: "completed"}, {Content: "Run the tests", Status: "pending"}}}}})
	two := 2
	tl.Apply(events.Event{Kind: events.KindPostToolCall, Created: next(), Tool: &events.ToolEvent{Call: calls[2], Name: "Bash", Result: &events.ToolResult{Text: long, ExitCode: &two}}})
	tl.Apply(events.Event{Kind: events.KindNotice, Created: next(), Level: events.LevelWarning, Text: "Context is getting full"})
	tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "a-final", Created: next(), Text: finalReply, Usage: usage})
	tl.Apply(events.Event{Kind: events.KindPostConversation, Created: next()})
	return tl
}

// SeededTitle names the session with a secret in it.
func seededTitle() string { return "login fix " + redacttest.Secrets()[0].Text }

func newRedactor(t testing.TB) *redact.Redactor {
	t.Helper()
	r, err := redact.New(redact.Options{Home: redacttest.Home, User: redacttest.User})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeSeeded writes the seeded session in format, redacted.
func writeSeeded(t testing.TB, format string) ([]byte, *redact.Redactor) {
	t.Helper()
	r := newRedactor(t)
	var buf bytes.Buffer
	title := r.String(seededTitle())
	var w Writer
	if format == "html" {
		w = NewHTMLWriter(&buf, HTMLOptions{Title: title, System: "claude-code", Cwd: r.String(redacttest.Home + "/app")})
	} else {
		w = NewWriter(&buf, format, title, MarkdownOptions{Full: true})
	}
	if err := writeAll(redact.NewWriter(w, r), seededTimeline(t)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), r
}

// TestSeededCorpusRedacted: no seeded secret is left, in any byte, in any
// format's redacted export; stderr's summary names kinds, not secrets.
func TestSeededCorpusRedacted(t *testing.T) {
	for _, format := range []string{"html", "md", "json", "jsonl"} {
		out, r := writeSeeded(t, format)
		for _, s := range redacttest.Secrets() {
			if bytes.Contains(out, []byte(s.Secret)) {
				t.Errorf("%s: %s left in the export", format, s.Name)
			}
		}
		if !bytes.Contains(out, []byte(redact.Marker("github-pat"))) {
			t.Errorf("%s: no marker where the GitHub token was", format)
		}
		sum := r.Summary()
		for _, s := range redacttest.Secrets() {
			if strings.Contains(sum, s.Secret) {
				t.Errorf("%s: the summary holds %s", format, s.Name)
			}
		}
		if !strings.Contains(sum, "home-directory") {
			t.Errorf("%s: summary %q", format, sum)
		}
	}
	// And without redaction the secrets are there: the test can fail.
	var buf bytes.Buffer
	if err := WriteHTMLForTest(&buf, seededTimeline(t)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(redacttest.Secrets()[1].Secret)) {
		t.Error("the unredacted page lacks the seeded token: the corpus does not reach the page")
	}
}

// WriteHTMLForTest writes tl as an unredacted page.
func WriteHTMLForTest(buf *bytes.Buffer, tl *events.Timeline) error {
	return writeAll(NewHTMLWriter(buf, HTMLOptions{Title: "t"}), tl)
}

var (
	tagRE  = regexp.MustCompile(`<(img|iframe|script|link|object|embed|video|audio|source|base|meta|form)\b[^>]*>`)
	anyTag = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	hrefRE = regexp.MustCompile(`\b(?:href|src|action|srcset|style)\s*=\s*"([^"]*)"`)
)

// TestHTMLLoadsNothing: hostile text stays text: the page's only
// elements that could load or run something are its own.
func TestHTMLLoadsNothing(t *testing.T) {
	out, _ := writeSeeded(t, "html")
	page := string(out)
	for _, m := range tagRE.FindAllStringSubmatch(page, -1) {
		switch {
		case m[1] == "meta", m[1] == "script" && m[0] == "<script>":
		default:
			t.Errorf("markup from the session: %s", m[0])
		}
	}
	if n := strings.Count(page, "<script>"); n != 1 {
		t.Errorf("%d scripts", n)
	}
	// Text never holds a "<" (it is escaped), so each tag is the page's.
	for _, m := range hrefRE.FindAllStringSubmatch(strings.Join(anyTag.FindAllString(page, -1), "\n"), -1) {
		if !strings.HasPrefix(m[1], "https://example.org/") {
			t.Errorf("link to %q", m[1])
		}
	}
	for _, bad := range []string{"\x1b", "\u202E", "javascript:"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;img src=&#34;http://127.0.0.1:9/u.png&#34;&gt;") && !strings.Contains(page, `&lt;img src="http://127.0.0.1:9/u.png"&gt;`) {
		t.Error("the user's markup is not shown as text")
	}
}

// TestHTMLShowsSession: the page shows what the TUI shows: heading facts,
// the final reply, reasoning and long outputs collapsed, the edit's diff,
// the todos, the failed command.
func TestHTMLShowsSession(t *testing.T) {
	out, _ := writeSeeded(t, "html")
	page := string(out)
	for _, want := range []string{
		finalReply,
		"<dd>claude-code</dd>", "<dd>claude-test-1</dd>", "<dd>~/app</dd>",
		"2026-03-01 09:00:07 – 2026-03-01 09:04:", // time span
		"over 19 replies", "$0.23", // tokens and cost
		`<details class="th"><summary>Thinking`,
		`<span class="de">-cache := old</span><span class="ad">+cache := fresh</span>`,
		`<li class="completed">☑ Fix the cache`,
		`<article class="i t fail"`, "failed, exit 2",
		"<details><summary>Output · 31 lines</summary>", // long: collapsed
		`<article class="i n warning"`,
		`<span class="p">&lt;</span><span class="nt">script</span>`, // highlighted code, escaped
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLEmpty: a session without items is still a whole page.
func TestHTMLEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := writeAll(NewHTMLWriter(&buf, HTMLOptions{}), events.NewTimeline()); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.HasPrefix(s, "<!DOCTYPE html>") || !strings.HasSuffix(s, "</html>\n") {
		t.Errorf("page: %s", s)
	}
}
