package fakedaemon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// step is one model reply of the script: an AssistantMessage and the tool
// calls it makes, or a provider failure instead of a reply.
type step struct {
	content string
	calls   []call
	fail    any // non-nil: the model request fails with this error JSON
}

// call is one scripted tool call with its precomputed outcome.
type call struct {
	id      string
	name    string
	args    obj
	text    string // HEAD result and "text"
	legacy  any    // structured result of older builds; nil = same as text
	failure string // non-empty: a ToolFailure with this message
	slow    bool
	todos   []todo // non-nil for the todo tool: the list after the call
}

func (c call) toolCall() obj {
	return o("id", c.id, "function", o("name", c.name, "arguments", argString(c.args)), "type", "function")
}

// agent runs one agent run: it works through the message that started the
// run and every message queued meanwhile, then ends the run. Every emit
// checks r.ctx with d.mu held, and cancel happens with d.mu held, so nothing
// is emitted after Cancelled.
func (d *Daemon) agent(t *task, r *run, m queued) {
	defer d.wg.Done()
	for {
		if !d.process(t, r, m) {
			return
		}
		d.mu.Lock()
		if r.ctx.Err() != nil {
			d.mu.Unlock()
			return
		}
		if len(t.queue) == 0 {
			d.emit(t, "PostConversation", nil)
			t.run = nil
			r.cancel()
			d.setStatus(t, statusIdle)
			d.mu.Unlock()
			return
		}
		m = d.consumeLocked(t)
		d.mu.Unlock()
	}
}

// process plays the script for one user message. False means the run ended
// (cancelled, failed or the daemon closed).
func (d *Daemon) process(t *task, r *run, m queued) bool {
	d.mu.Lock()
	steps := d.script(t, m.text())
	d.mu.Unlock()
	for _, s := range steps {
		if !d.pause(r.ctx, modelDelay) {
			return false
		}
		d.mu.Lock()
		if r.ctx.Err() != nil {
			d.mu.Unlock()
			return false
		}
		if s.fail != nil {
			d.emit(t, "Failed", o("error", s.fail))
			t.run = nil
			r.cancel()
			d.setStatus(t, statusIdle)
			d.mu.Unlock()
			return false
		}
		d.emitReply(t, s, d.nowMS())
		d.mu.Unlock()
		for _, c := range s.calls {
			d.mu.Lock()
			if r.ctx.Err() != nil {
				d.mu.Unlock()
				return false
			}
			d.emitPre(t, c, d.nowMS())
			d.mu.Unlock()
			var ok bool
			if c.slow {
				ok = d.slowTool(r.ctx)
			} else {
				ok = d.pause(r.ctx, toolDelay)
			}
			if !ok {
				return false
			}
			d.mu.Lock()
			if r.ctx.Err() != nil {
				d.mu.Unlock()
				return false
			}
			d.applyWrite(t, c)
			d.emitPost(t, c, d.nowMS())
			d.mu.Unlock()
		}
	}
	return true
}

// applyWrite makes a successful write_to_file real, as maria's tool does
// (docs/protocol.md §7.4: existing non-empty content + separator + new content,
// the file created if missing), so that read_file and the task's static
// files see it. Only in a temp cwd this daemon created, never in a
// directory the caller named. Called with d.mu held.
func (d *Daemon) applyWrite(t *task, c call) {
	if c.name != "write_to_file" || c.failure != "" || !slices.Contains(d.tempDirs, t.cwd) {
		return
	}
	arg := func(k string) (string, bool) {
		for _, f := range c.args {
			if f.k == k {
				s, ok := f.v.(string)
				return s, ok
			}
		}
		return "", false
	}
	rel, _ := arg("path")
	content, _ := arg("content")
	sep, ok := arg("separator")
	if !ok {
		sep = "\n"
	}
	p := filepath.Join(t.cwd, filepath.FromSlash(filepath.Clean("/"+rel)))
	old, err := os.ReadFile(p)
	if err == nil && len(old) > 0 {
		content = string(old) + sep + content
	}
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte(content), 0o644)
}

// emitReply emits the AssistantMessage of a step with usage that grows like
// a real conversation's (cached tokens on all but the first reply).
func (d *Daemon) emitReply(t *task, s step, at int64) {
	calls := make([]obj, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c.toolCall())
	}
	completion := 18 + len(s.content)/4 + 40*len(s.calls) + t.rng.IntN(20)
	usage := o("completion_tokens", completion)
	if t.replies == 0 {
		t.promptTokens = 9180 + t.rng.IntN(60)
		usage = usage.with("prompt_tokens", t.promptTokens)
	} else {
		cached := t.promptTokens - t.rng.IntN(120)
		t.promptTokens += 150 + t.rng.IntN(250)
		usage = usage.with("prompt_tokens", t.promptTokens, "prompt_tokens_details", o("cached_tokens", cached))
	}
	usage = usage.with("total_tokens", t.promptTokens+completion)
	t.replies++
	d.emitAt(t, at, "AssistantMessage", o("tool_calls", calls, "content", s.content, "usage", usage))
}

func (d *Daemon) emitPre(t *task, c call, at int64) {
	d.emitAt(t, at, "PreToolCall", o("tool_call", c.toolCall(), "name", c.name, "args", c.args))
}

func (d *Daemon) emitPost(t *task, c call, at int64) {
	fields := o("tool_call", c.toolCall(), "name", c.name)
	switch {
	case t.disabled[c.name]:
		msg := fmt.Sprintf("Tool '%s' is disabled.", c.name)
		fields = fields.with("error", []any{"ToolFailure", msg}, "text", msg)
	case c.failure != "":
		fields = fields.with("error", []any{"ToolFailure", c.failure}, "text", c.failure)
	case d.dialect == DialectLegacy && c.legacy != nil:
		fields = fields.with("result", c.legacy, "text", c.text)
	default:
		fields = fields.with("result", c.text, "text", c.text)
	}
	d.emitAt(t, at, "PostToolCall", fields)
	if d.dialect == DialectDocs && c.todos != nil && !t.disabled[c.name] {
		now := todoTime(time.UnixMilli(at))
		created := now
		if len(c.todos) > 0 {
			created = c.todos[0].created
		}
		d.emitAt(t, at, "TodoUpdated", o("todos", todosJSON(c.todos), "created_at", created, "updated_at", now))
	}
}

func todoTime(tm time.Time) string { return tm.UTC().Format("2006-01-02T15:04:05") }

// ---- the script ----

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func (t *task) toolCallID() string {
	b := []byte("toolu_01")
	for range 22 {
		b = append(b, base62[t.rng.IntN(len(base62))])
	}
	return string(b)
}

// answer collects what the final markdown reply reports.
type answer struct {
	bullets []string
	rows    [][3]string // step, tool, outcome
	code    string      // a fenced block
}

// script decides, from keywords in the message, which tools the agent calls
// and what it finally answers (d.mu held: it draws ids from the task's RNG).
func (d *Daemon) script(t *task, text string) []step {
	low := strings.ToLower(text)
	// A keyword must start a word ("tests" matches "test", "explain" does
	// not match "plan").
	has := func(words ...string) bool {
		for _, w := range words {
			for i := 0; ; {
				j := strings.Index(low[i:], w)
				if j < 0 {
					break
				}
				if at := i + j; at == 0 || !isWordByte(low[at-1]) {
					return true
				}
				i += j + 1
			}
		}
		return false
	}
	if has("provider error") {
		return []step{{fail: []any{"HttpError", o("code", 401, "body", `{"error":{"message":"No auth credentials found","code":401}}`)}}}
	}
	var steps []step
	var a answer
	mk := func(name string, args obj) call { return call{id: t.toolCallID(), name: name, args: args} }
	cmd := func(command string, status int, stdout, stderr string) call {
		c := mk("execute_command", o("command", command, "timeout", 600000))
		c.text = commandText(command, status, stdout, stderr)
		c.legacy = commandLegacy(command, status, stdout, stderr)
		return c
	}
	if has("readme", "what does") {
		ls := mk("list_files", o("path", "."))
		ls.text, ls.legacy = listText(".", rootListing), listLegacy(".", rootListing)
		rd := mk("read_file", o("path", "README.md"))
		rd.text, rd.legacy = readText("README.md", readmeText), readLegacy("README.md", readmeText)
		steps = append(steps, step{content: "I'll start by looking at the project structure.", calls: []call{ls}},
			step{calls: []call{rd}})
		a.bullets = append(a.bullets, "**wordfreq** is a small Go CLI that counts word frequencies in text files and prints the top N words.")
		a.rows = append(a.rows, [3]string{"Listed the project root", "`list_files`", fmt.Sprintf("%d entries", len(rootListing))},
			[3]string{"Read the README", "`read_file`", fmt.Sprintf("%d lines", len(strings.Split(readmeText, "\n")))})
		a.code = "```sh\nwordfreq -n 10 book.txt\n```"
	}
	if has("test", "run") {
		out := "?   \tgithub.com/example/wordfreq\t[no test files]\nok  \tgithub.com/example/wordfreq/internal/count\t0.008s\n"
		steps = append(steps, step{content: "Running the test suite now.", calls: []call{cmd("go test ./...", 0, out, "")}})
		a.bullets = append(a.bullets, "All tests pass: `go test ./...` exited with status 0.")
		a.rows = append(a.rows, [3]string{"Ran the tests", "`execute_command`", "✅ exit 0"})
		if a.code == "" {
			a.code = "```text\nok  \tgithub.com/example/wordfreq/internal/count\t0.008s\n```"
		}
	}
	if has("build", "fail") {
		stderr := "go build -o bin/wordfreq .\n# github.com/example/wordfreq/internal/count\ninternal/count/count.go:12:9: undefined: lenght\nmake: *** [Makefile:2: build] Error 1\n"
		rd := mk("read_file", o("path", "src/parser.go"))
		rd.failure = "Error reading file: File not found: src/parser.go"
		steps = append(steps, step{content: "Let me try a build.", calls: []call{cmd("make build", 1, "", stderr)}},
			step{content: "The build fails with an undefined identifier. Let me check the parser as well.", calls: []call{rd}})
		a.bullets = append(a.bullets, "`make build` fails: `internal/count/count.go:12` calls `lenght`, a typo for `len`. (There is no `src/parser.go`.)")
		a.rows = append(a.rows, [3]string{"Built the project", "`execute_command`", "❌ exit 1"},
			[3]string{"Looked for the parser", "`read_file`", "not found"})
		a.code = "```go\n// internal/count/count.go\nfunc Len(words []string) int {\n\treturn len(words)\n}\n```"
	}
	if has("slow", "bench") {
		out := "goos: linux\ngoarch: amd64\npkg: github.com/example/wordfreq/internal/count\nBenchmarkWords-8   \t  523184\t      2231 ns/op\nPASS\nok  \tgithub.com/example/wordfreq/internal/count\t6.012s\n"
		c := cmd("go test -bench .", 0, out, "")
		c.slow = true
		steps = append(steps, step{content: "Running the benchmarks; this takes a few seconds.", calls: []call{c}})
		a.bullets = append(a.bullets, "`BenchmarkWords` runs at about 2.2 µs per call.")
		a.rows = append(a.rows, [3]string{"Ran the benchmarks", "`execute_command`", "2231 ns/op"})
	}
	var markLater *call
	if has("todo", "plan") {
		items := []string{"Fix the typo in internal/count", "Add a test for count.Len", "Document the -n flag in the README"}
		now := todoTime(d.clock())
		ts := make([]todo, 0, len(items))
		for _, it := range items {
			ts = append(ts, todo{id: t.uuid()[:8], content: it, priority: "Medium", status: "Pending", created: now, updated: now})
		}
		t.todos = ts
		msg := fmt.Sprintf("Created %d new todo items", len(ts))
		c := mk("todo", o("action", "create", "content", "- "+strings.Join(items, "\n- ")))
		c.text, c.legacy, c.todos = todoWriteText(msg, ts, ts, true), todoLegacy(msg, ts, ts, true), ts
		steps = append(steps, step{content: "Let me write down a plan first.", calls: []call{c}})

		after := append([]todo(nil), ts...)
		after[0].status, after[0].updated = "InProgress", now
		t.todos = after
		msg2 := "Marked task as in progress: " + after[0].content
		m := mk("todo", o("action", "mark_progress", "task_id", after[0].id))
		m.text, m.legacy, m.todos = todoWriteText(msg2, after, after[:1], false), todoLegacy(msg2, after, after[:1], false), after
		markLater = &m
		a.bullets = append(a.bullets, fmt.Sprintf("Planned %d steps; the first one is in progress.", len(items)))
		a.rows = append(a.rows, [3]string{"Planned the work", "`todo`", "3 items"})
	}
	if has("write", "changelog") {
		content := "## Unreleased\n\n- Fix word counting in `internal/count`.\n"
		c := mk("write_to_file", o("path", "CHANGELOG.md", "content", content))
		abs := filepath.Join(t.cwd, "CHANGELOG.md")
		c.text, c.legacy = "Content written to file at path: "+abs, o("path", abs)
		steps = append(steps, step{calls: []call{c}})
		a.bullets = append(a.bullets, "Added a CHANGELOG entry.")
		a.rows = append(a.rows, [3]string{"Wrote CHANGELOG.md", "`write_to_file`", "appended"})
		if a.code == "" {
			a.code = "```markdown\n" + content + "```"
		}
	}
	if has("diff", "patch") {
		out := "diff --git a/internal/count/count.go b/internal/count/count.go\nindex 3b18e51..a1f0c2d 100644\n--- a/internal/count/count.go\n+++ b/internal/count/count.go\n@@ -9,5 +9,5 @@ func Words(text string) []string {\n \n // Len returns how many words text has.\n func Len(words []string) int {\n-\treturn lenght(words)\n+\treturn len(words)\n }\n"
		steps = append(steps, step{content: "Here is the current diff.", calls: []call{cmd("git diff", 0, out, "")}})
		a.bullets = append(a.bullets, "The working tree has one change: the `lenght` → `len` fix.")
		a.rows = append(a.rows, [3]string{"Showed the diff", "`execute_command`", "1 file, +1 −1"})
		a.code = "```diff\n-\treturn lenght(words)\n+\treturn len(words)\n```"
	}
	if has("search", "grep") {
		hits := []searchHit{
			{path: "internal/count/count.go", line: 6, match: "func Words(text string) []string {",
				context: []string{"// Words splits text into lower-case words.", "func Words(text string) []string {", "\treturn strings.Fields(strings.ToLower(text))"}},
			{path: "internal/count/count.go", line: 11, match: "func Len(words []string) int {",
				context: []string{"// Len returns how many words text has.", "func Len(words []string) int {", "\treturn lenght(words)"}},
		}
		c := mk("search_files", o("path", ".", "regex", "^func ", "kind", "regex", "file_pattern", "*.go", "context_lines", 1))
		c.text, c.legacy = searchText(hits), searchLegacy("^func ", hits)
		steps = append(steps, step{content: "Searching for the exported functions.", calls: []call{c}})
		a.bullets = append(a.bullets, fmt.Sprintf("Found %d function declarations in `internal/count`.", len(hits)))
		a.rows = append(a.rows, [3]string{"Searched the code", "`search_files`", fmt.Sprintf("%d matches", len(hits))})
	}
	if markLater != nil {
		steps = append(steps, step{calls: []call{*markLater}})
	}
	steps = append(steps, step{content: finalAnswer(t.replies+len(steps), text, a)})
	return steps
}

// finalAnswer renders the closing markdown reply: heading, list, fenced
// code block and table, varied by which scripts ran.
func finalAnswer(n int, text string, a answer) string {
	if len(a.bullets) == 0 {
		quoted := "> " + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n> ")
		return fmt.Sprintf("### Noted\n\nYou wrote:\n\n%s\n\n- I did not need any tools for this.\n- Ask me to *run the tests*, *build*, *plan* or *show the diff*.\n\n```text\n%d characters received\n```\n\n| Field | Value |\n| --- | --- |\n| Words | %d |\n| Tools used | 0 |",
			quoted, len([]rune(text)), len(strings.Fields(text)))
	}
	headings := []string{"## Summary", "## What I found", "## Results", "## Done"}
	var b strings.Builder
	b.WriteString(headings[n%len(headings)] + "\n\n")
	for _, l := range a.bullets {
		b.WriteString("- " + l + "\n")
	}
	if a.code != "" {
		b.WriteString("\n" + a.code + "\n")
	}
	b.WriteString("\n| Step | Tool | Outcome |\n| --- | --- | --- |\n")
	for i, r := range a.rows {
		fmt.Fprintf(&b, "| %d. %s | %s | %s |", i+1, r[0], r[1], r[2])
		if i < len(a.rows)-1 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}
