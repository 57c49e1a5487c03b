package fakedaemon

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// LongSession describes a synthetic, already finished session of a given
// number of events, shaped like a long real maria session: user turns,
// markdown replies of 0.5–4 KB with code fences, tool calls
// (execute_command, read_file, search_files, list_files) with 1–40 KB
// outputs, messages queued mid-run with their queue snapshots, and one
// Pre/PostConversation per run. It is the load of the end-to-end
// benchmark. About 10,000 events make 50 MB of stream in the head dialect.
type LongSession struct {
	// Events is the exact number of SSE frames in the task's log (queue
	// snapshots included). At least MinLongSessionEvents.
	Events int
	// BigOutput, when positive, makes the last tool call of the session a
	// read_file whose output is about this many bytes.
	BigOutput int
	// LongLine, when positive, adds an execute_command whose output is one
	// line of this many bytes (before the big read_file, if any).
	LongLine int
	// Seed varies the content; the same LongSession always gives the same
	// bytes (with the same daemon seed and dialect).
	Seed uint64
}

// LongSessionInfo describes a task created by AddLongSession.
type LongSessionInfo struct {
	TaskID      string
	Events      int    // frames in the log
	Bytes       int64  // bytes of the whole replay (every frame)
	LastEventID string // envelope id of the final frame (PostConversation)
	FinalReply  string // the text of the session's last assistant reply
}

// MinLongSessionEvents is the smallest LongSession.Events accepted.
const MinLongSessionEvents = 40

// LongSessionMarker ends the last assistant reply of every long session, so
// that a client (or a benchmark watching a terminal) can tell that the
// whole replay has arrived.
const LongSessionMarker = "END-OF-LONG-SESSION"

// LongSessionFirstMarker opens the first user message of every long
// session and occurs nowhere else in it, so that a search for it has
// exactly one match, as far back in the session as can be (the benchmark's
// first-message search).
const LongSessionFirstMarker = "START-OF-LONG-SESSION"

// LongSessionFinalReply is the text of a long session's last reply.
func LongSessionFinalReply(events int) string {
	return fmt.Sprintf("## Wrapping up\n\nThat was the last step of this long session (%d events).\n\n%s", events, LongSessionMarker)
}

// longEpoch is the fixed start of every long session, so that the "created"
// stamps (and thus the bytes) do not depend on the clock.
const longEpoch = 1748854800000 // 2025-06-02T09:00:00Z in Unix milliseconds (longsession_test.go checks)

// introEvents counts the frames before the first run: the daemon's first
// queue snapshot, ModelLoaded, SystemPromptSet and one ToolAdded per tool.
func introEvents() int { return 3 + len(toolDefs()) }

// AddLongSession creates an idle task whose log already holds the whole
// session. It is served by the normal task stream (replay, then live).
func (d *Daemon) AddLongSession(ls LongSession) (LongSessionInfo, error) {
	if ls.Events < MinLongSessionEvents {
		return LongSessionInfo{}, fmt.Errorf("fakedaemon: a long session needs at least %d events, not %d", MinLongSessionEvents, ls.Events)
	}
	if ls.BigOutput < 0 || ls.LongLine < 0 {
		return LongSessionInfo{}, errors.New("fakedaemon: negative output size")
	}
	dir, err := d.tempDir("perch-long-")
	if err != nil {
		return LongSessionInfo{}, err
	}
	if err := writeProject(dir); err != nil {
		return LongSessionInfo{}, fmt.Errorf("fakedaemon: long session: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return LongSessionInfo{}, errors.New("fakedaemon: daemon closed")
	}
	t := d.newTaskLocked(dir, fmt.Sprintf("Long session (%d events)", ls.Events), true, d.model, false)
	g := &longGen{d: d, t: t, r: rand.New(rand.NewPCG(ls.Seed, 0x6c6f6e67)), at: longEpoch}
	t.created = g.at
	g.run(ls)
	t.updated = g.at
	info := LongSessionInfo{TaskID: t.id, FinalReply: LongSessionFinalReply(ls.Events)}
	frames, _ := t.log.wait(d.ctx, 0)
	info.Events = len(frames)
	for _, f := range frames {
		info.Bytes += int64(len(f))
	}
	if len(frames) > 0 {
		info.LastEventID = frameMetaID(frames[len(frames)-1])
	}
	if info.Events != ls.Events {
		return info, fmt.Errorf("fakedaemon: long session has %d events, want %d", info.Events, ls.Events)
	}
	return info, nil
}

// frameMetaID reads the envelope id of a whole SSE frame ("" if none).
func frameMetaID(f []byte) string {
	s := string(f)
	i := strings.Index(s, "\ndata: ")
	if i < 0 {
		return ""
	}
	s = s[i+len("\ndata: "):]
	const key = `{"id":`
	if !strings.HasPrefix(s, key) {
		return ""
	}
	s = s[len(key):]
	if strings.HasPrefix(s, `"`) {
		if j := strings.IndexByte(s[1:], '"'); j >= 0 {
			return s[1 : j+1]
		}
		return ""
	}
	j := strings.IndexAny(s, ",}")
	if j < 0 {
		return ""
	}
	return s[:j]
}

// longGen writes one long session into a task's log (d.mu held).
type longGen struct {
	d  *Daemon
	t  *task
	r  *rand.Rand // content only; ids come from the task's RNG
	at int64      // the session's clock, in ms
	// opened is set once the first user message, which carries
	// LongSessionFirstMarker, has been written.
	opened bool
}

func (g *longGen) tick(minMS, maxMS int) int64 {
	g.at += int64(minMS + g.r.IntN(maxMS-minMS+1))
	return g.at
}

// lsMsg is one user message of a run and the steps that answer it; the last
// step is the reply without tool calls.
type lsMsg struct {
	text  string
	steps []step
}

func stepEvents(s step) int { return 1 + 2*len(s.calls) }

// runEvents counts the frames of a run: 6 to start it with msgs[0]; for
// each further message 2 while it is queued and 3 when it is taken; the
// steps; and PostConversation.
func runEvents(msgs []lsMsg) int {
	n := 6 + 5*(len(msgs)-1) + 1
	for _, m := range msgs {
		for _, s := range m.steps {
			n += stepEvents(s)
		}
	}
	return n
}

func (g *longGen) run(ls LongSession) {
	d, t := g.d, g.t
	t.log.append(frame(eventSnapshot, snapshotJSON(nil)))
	d.emitAt(t, g.tick(200, 600), "ModelLoaded", o("name", t.model))
	d.emitAt(t, g.at, "SystemPromptSet", o("prompt", systemPrompt))
	for _, td := range toolDefs() {
		d.emitAt(t, g.at, "ToolAdded", o("tool", td))
	}
	t.started = true

	var extra []call
	if ls.LongLine > 0 {
		extra = append(extra, g.longLineCall(ls.LongLine))
	}
	if ls.BigOutput > 0 {
		extra = append(extra, g.bigReadCall(ls.BigOutput))
	}
	// The last run needs 8 frames of its own, 3 per extra call and room for
	// at least 8 more (any count from 8 on is a sum of steps of 3 and 5).
	minLast := 8 + 3*len(extra) + 8
	left := ls.Events - introEvents()
	for {
		msgs := g.planRun()
		n := runEvents(msgs)
		if left-n < minLast {
			break
		}
		g.emitRun(msgs)
		left -= n
	}
	// The last run: one message, filler steps, the extra calls, the known
	// reply.
	fill := left - 8 - 3*len(extra)
	m := lsMsg{text: g.userText()}
	for fill > 0 {
		c := 1
		if g.r.IntN(5) == 0 {
			c = 2
		}
		for _, try := range []int{c, 3 - c, 3} {
			if r := fill - (1 + 2*try); r >= 0 && r != 1 && r != 2 && r != 4 {
				c = try
				break
			}
		}
		m.steps = append(m.steps, g.toolStep(c))
		fill -= 1 + 2*c
	}
	for _, c := range extra {
		m.steps = append(m.steps, step{content: "Let me look at the full output.", calls: []call{c}})
	}
	m.steps = append(m.steps, step{content: LongSessionFinalReply(ls.Events)})
	g.emitRun([]lsMsg{m})
}

// planRun draws one run: one to three user messages (the later ones queued
// while the first is being answered), each answered in 1–8 tool steps and
// a markdown reply.
func (g *longGen) planRun() []lsMsg {
	n := 1
	if p := g.r.IntN(100); p < 20 {
		n = 2
	} else if p < 25 {
		n = 3
	}
	msgs := make([]lsMsg, n)
	for i := range msgs {
		msgs[i].text = g.userText()
		k := 1 + g.r.IntN(8)
		for range k {
			c := 1
			if g.r.IntN(6) == 0 {
				c = 2
			}
			msgs[i].steps = append(msgs[i].steps, g.toolStep(c))
		}
		msgs[i].steps = append(msgs[i].steps, step{content: g.markdownReply()})
	}
	return msgs
}

// emitRun writes a run as postLocked, consumeLocked and the agent would.
func (g *longGen) emitRun(msgs []lsMsg) {
	d, t := g.d, g.t
	ids := make([]string, len(msgs))
	for i := range ids {
		ids[i] = t.uuid()
	}
	if !g.opened {
		// Marked here, not where messages are drawn: a drawn run may not
		// be written (the last run is drawn apart), and the marker takes
		// nothing from the RNG, so the rest of the session stays the same.
		msgs[0].text = LongSessionFirstMarker + " " + msgs[0].text
		g.opened = true
	}
	var queue []queued
	g.tick(30_000, 600_000) // the user's pause between runs
	d.emitAt(t, g.at, "MessageQueued", o("message", o("id", ids[0])))
	t.log.append(frame(eventSnapshot, snapshotJSON(nil)))
	d.emitAt(t, g.at, "PreConversation", nil)
	d.emitAt(t, g.at, "MessageUnqueued", o("message", o("id", ids[0])))
	t.log.append(frame(eventSnapshot, snapshotJSON(nil)))
	d.emitAt(t, g.at, "UserMessage", o("content", msgs[0].text))

	// The later messages are queued while the first one is answered, each
	// after a step drawn at random.
	queueAfter := map[int][]int{}
	for i := 1; i < len(msgs); i++ {
		s := g.r.IntN(len(msgs[0].steps))
		queueAfter[s] = append(queueAfter[s], i)
	}
	for i, m := range msgs {
		if i > 0 {
			q := queue[0]
			queue = queue[1:]
			d.emitAt(t, g.tick(5, 40), "MessageUnqueued", o("message", o("id", q.id)))
			t.log.append(frame(eventSnapshot, snapshotJSON(queue)))
			d.emitAt(t, g.at, "UserMessage", o("content", q.text()))
		}
		for si, s := range m.steps {
			d.emitReply(t, s, g.tick(2_000, 25_000))
			for _, c := range s.calls {
				d.emitPre(t, c, g.tick(5, 40))
				d.emitPost(t, c, g.tick(50, 8_000))
			}
			if i == 0 {
				for _, qi := range queueAfter[si] {
					q := queued{id: ids[qi], role: "user", parts: []string{msgs[qi].text}}
					queue = append(queue, q)
					d.emitAt(t, g.tick(100, 3_000), "MessageQueued", o("message", o("id", q.id)))
					t.log.append(frame(eventSnapshot, snapshotJSON(queue)))
				}
			}
		}
	}
	d.emitAt(t, g.tick(5, 40), "PostConversation", nil)
}

// ---- content ----

var (
	lsPkgs  = []string{"internal/store", "internal/api", "cmd/server", "pkg/render", "internal/auth", "pkg/cache", "internal/queue", "pkg/wire", "internal/billing", "pkg/httpx"}
	lsFiles = []string{"handler", "store", "cache", "session", "router", "config", "metrics", "retry", "codec", "limits", "worker", "schema"}
	lsTypes = []string{"Store", "Server", "Session", "Cache", "Router", "Invoice", "Token", "Worker", "Queue", "Codec"}
	lsFuncs = []string{"Open", "Close", "Get", "Put", "Delete", "Flush", "Refresh", "Validate", "Encode", "Decode", "Retry", "Handle", "Lookup", "Expire"}
	lsVars  = []string{"ctx", "req", "resp", "buf", "key", "val", "err", "n", "items", "cfg", "deadline", "entry", "id", "limit"}
	lsWords = []string{
		"the", "a", "cache", "request", "handler", "session", "token", "queue", "retry", "budget",
		"timeout", "limit", "worker", "store", "invoice", "schema", "value", "key", "error", "path",
		"config", "metric", "lock", "entry", "index", "batch", "stream", "client", "server", "response",
		"field", "record", "update", "check", "returns", "uses", "keeps", "drops", "reads", "writes",
		"expires", "refreshes", "validates", "encodes", "decodes", "handles", "retries", "flushes",
		"counts", "waits", "now", "again", "first", "later", "only", "still", "already", "quickly",
		"safely", "twice",
	}
	lsAsks = []string{
		"Can you look into why %s is slow under load?",
		"The tests in %s fail on CI but pass locally. Please investigate.",
		"Refactor %s so that the retry logic lives in one place.",
		"Add metrics for cache hits and misses in %s.",
		"Why does %s leak goroutines when the client disconnects?",
		"Please review the error handling in %s and fix what you find.",
		"Write table-driven tests for %s.",
		"Rename the Token type in %s to Credential everywhere.",
		"Make %s configurable through the environment.",
		"Find every caller of Flush in %s and check it handles errors.",
	}
)

func (g *longGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *longGen) path() string { return g.pick(lsPkgs) + "/" + g.pick(lsFiles) + ".go" }

func (g *longGen) sentence(words int) string {
	var b strings.Builder
	for i := range words {
		w := g.pick(lsWords)
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteByte('.')
	return b.String()
}

func (g *longGen) userText() string {
	s := fmt.Sprintf(g.pick(lsAsks), g.path())
	if g.r.IntN(4) == 0 {
		s += "\n\nHere is what I see:\n\n" + g.goLine(0) + "\n" + g.goLine(1)
	}
	if g.r.IntN(3) == 0 {
		s += " " + g.sentence(6+g.r.IntN(12))
	}
	return s
}

// goLine draws one line of Go-looking source.
func (g *longGen) goLine(indent int) string {
	tab := strings.Repeat("\t", indent)
	switch g.r.IntN(9) {
	case 0:
		return fmt.Sprintf("func (s *%s) %s(ctx context.Context, %s string) error {", g.pick(lsTypes), g.pick(lsFuncs), g.pick(lsVars))
	case 1:
		return fmt.Sprintf("%sif err := s.%s(%s); err != nil {", tab, g.pick(lsFuncs), g.pick(lsVars))
	case 2:
		return fmt.Sprintf("%s\treturn fmt.Errorf(\"%s %s: %%w\", err)", tab, strings.ToLower(g.pick(lsFuncs)), g.pick(lsWords))
	case 3:
		return tab + "}"
	case 4:
		return fmt.Sprintf("%s%s := make([]%s, 0, len(%s))", tab, g.pick(lsVars), g.pick(lsTypes), g.pick(lsVars))
	case 5:
		return fmt.Sprintf("%s// %s", tab, g.sentence(5+g.r.IntN(8)))
	case 6:
		return ""
	case 7:
		return fmt.Sprintf("%s%s, err := s.%s.%s(ctx, %s)", tab, g.pick(lsVars), strings.ToLower(g.pick(lsTypes)), g.pick(lsFuncs), g.pick(lsVars))
	default:
		return fmt.Sprintf("%sfor _, %s := range %s {", tab, g.pick(lsVars), g.pick(lsVars))
	}
}

// outputSize draws a tool output size between 1 and 40 KB, most of them
// small (log-uniform, skewed further towards small ones: 10,000 events
// make about 50 MB).
func (g *longGen) outputSize() int {
	return int(1024 * math.Pow(40, math.Pow(g.r.Float64(), 1.4)))
}

// toolStep is an intermediate reply (often with a sentence, sometimes
// without text) with c tool calls.
func (g *longGen) toolStep(c int) step {
	s := step{}
	if g.r.IntN(4) != 0 {
		s.content = g.sentence(6 + g.r.IntN(14))
	}
	for range c {
		s.calls = append(s.calls, g.toolCall())
	}
	return s
}

func (g *longGen) toolCall() call {
	t := g.t
	size := g.outputSize()
	c := call{id: t.toolCallID()}
	switch p := g.r.IntN(100); {
	case p < 45:
		c.name = "execute_command"
		cmd := g.pick([]string{"go test ./", "go vet ./", "go build ./", "golangci-lint run ./", "go test -race ./"}) + g.pick(lsPkgs) + "/..."
		status, stdout, stderr := 0, g.testOutput(size), ""
		if g.r.IntN(5) == 0 {
			status, stderr = 1, g.testOutput(min(size, 4096))
		}
		c.args = o("command", cmd, "timeout", 600000)
		c.text = commandText(cmd, status, stdout, stderr)
		c.legacy = commandLegacy(cmd, status, stdout, stderr)
	case p < 75:
		c.name = "read_file"
		path := g.path()
		content := g.source(size)
		c.args = o("path", path)
		c.text, c.legacy = readText(path, content), readLegacy(path, content)
	case p < 90:
		c.name = "search_files"
		re := g.pick(lsFuncs) + "\\("
		hits := g.searchHits(size)
		c.args = o("path", ".", "regex", re, "kind", "regex", "file_pattern", "*.go", "context_lines", 1)
		c.text, c.legacy = searchText(hits), searchLegacy(re, hits)
	default:
		c.name = "list_files"
		dir := g.pick(lsPkgs)
		entries := g.listing(size)
		c.args = o("path", dir)
		c.text, c.legacy = listText(dir, entries), listLegacy(dir, entries)
	}
	return c
}

func (g *longGen) source(size int) string {
	var b strings.Builder
	b.Grow(size + 128)
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n", g.pick(lsFiles))
	indent, lines := 0, 0
	// read_file numbers every line, so the content is sized to leave room.
	for b.Len()+lines*numberWidth(lines) < size {
		lines++
		l := g.goLine(indent)
		switch {
		case strings.HasSuffix(l, "{"):
			indent = min(indent+1, 3)
		case strings.TrimSpace(l) == "}":
			indent = max(indent-1, 0)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (g *longGen) testOutput(size int) string {
	var b strings.Builder
	b.Grow(size + 128)
	for b.Len() < size {
		name := "Test" + g.pick(lsTypes) + g.pick(lsFuncs)
		switch g.r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "ok  \tgithub.com/acme/shop/%s\t%d.%03ds\n", g.pick(lsPkgs), g.r.IntN(9), g.r.IntN(1000))
		case 1:
			fmt.Fprintf(&b, "    %s_test.go:%d: %s\n", g.pick(lsFiles), 10+g.r.IntN(400), g.sentence(4+g.r.IntN(8)))
		case 2:
			fmt.Fprintf(&b, "2025-06-02T09:%02d:%02dZ INFO %s %s=%d\n", g.r.IntN(60), g.r.IntN(60), g.sentence(3), g.pick(lsVars), g.r.IntN(100000))
		default:
			fmt.Fprintf(&b, "=== RUN   %s\n--- PASS: %s (0.%02ds)\n", name, name, g.r.IntN(100))
		}
	}
	return b.String()
}

func (g *longGen) searchHits(size int) []searchHit {
	var hits []searchHit
	for n := 0; n < size; {
		h := searchHit{path: g.path(), line: 2 + g.r.IntN(500)}
		h.match = g.goLine(1)
		h.context = []string{g.goLine(1), h.match, g.goLine(2)}
		for _, l := range h.context {
			n += len(l) + 6
		}
		n += len(h.path) + 6
		hits = append(hits, h)
	}
	return hits
}

func (g *longGen) listing(size int) []listEntry {
	var es []listEntry
	for n := 0; n < size; {
		e := listEntry{name: g.pick(lsFiles) + fmt.Sprintf("_%04d", g.r.IntN(10000))}
		if g.r.IntN(6) == 0 {
			e.dir = true
		} else {
			e.name += g.pick([]string{".go", "_test.go", ".md", ".json", ".yaml"})
		}
		n += len(e.name) + 6
		es = append(es, e)
	}
	return es
}

// markdownReply draws a final reply of 0.5–4 KB: a heading, paragraphs, a
// list, a fenced code block and sometimes a table.
func (g *longGen) markdownReply() string {
	size := 512 + g.r.IntN(3584)
	var b strings.Builder
	b.Grow(size + 512)
	fmt.Fprintf(&b, "## %s\n\n", g.pick([]string{"Summary", "What I found", "Changes", "Results", "Next steps"}))
	for b.Len() < size {
		switch g.r.IntN(4) {
		case 0:
			for range 2 + g.r.IntN(3) {
				fmt.Fprintf(&b, "- `%s`: %s\n", g.path(), g.sentence(5+g.r.IntN(10)))
			}
			b.WriteByte('\n')
		case 1:
			lang := g.pick([]string{"go", "go", "sh", "diff"})
			b.WriteString("```" + lang + "\n")
			for i := range 3 + g.r.IntN(12) {
				l := g.goLine(i % 3)
				switch lang {
				case "sh":
					l = "go test ./" + g.pick(lsPkgs) + "/... -run " + g.pick(lsTypes)
				case "diff":
					l = g.pick([]string{"-", "+", " "}) + l
				}
				b.WriteString(l + "\n")
			}
			b.WriteString("```\n\n")
		case 2:
			b.WriteString("| File | Change |\n| --- | --- |\n")
			for range 2 + g.r.IntN(4) {
				fmt.Fprintf(&b, "| `%s` | %s |\n", g.path(), g.sentence(3+g.r.IntN(5)))
			}
			b.WriteByte('\n')
		default:
			for range 2 + g.r.IntN(4) {
				b.WriteString(g.sentence(8+g.r.IntN(16)) + " ")
			}
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// numberWidth is what readText adds to each of n lines: " L%0*d | " less
// the newline the content already has.
func numberWidth(n int) int {
	w := 6
	for ; n >= 10; n /= 10 {
		w++
	}
	return w
}

// bigReadCall is a read_file of a huge generated source file.
func (g *longGen) bigReadCall(size int) call {
	path := "internal/generated/tables.go"
	var b strings.Builder
	b.Grow(size)
	lines := 0
	for b.Len()+lines*numberWidth(lines) < size {
		b.WriteString(g.goLine(1 + g.r.IntN(2)))
		b.WriteByte('\n')
		lines++
	}
	content := strings.TrimSuffix(b.String(), "\n")
	c := call{id: g.t.toolCallID(), name: "read_file", args: o("path", path)}
	c.text, c.legacy = readText(path, content), readLegacy(path, content)
	return c
}

// longLineCall is an execute_command whose output is one line of size
// bytes (a minified bundle).
func (g *longGen) longLineCall(size int) call {
	cmd := "cat web/dist/app.min.js"
	var b strings.Builder
	b.Grow(size + 64)
	for b.Len() < size {
		fmt.Fprintf(&b, "function %s%d(%s){return %s.%s(%s)||%d};", strings.ToLower(g.pick(lsFuncs)), g.r.IntN(1000),
			g.pick(lsVars), g.pick(lsVars), strings.ToLower(g.pick(lsFuncs)), g.pick(lsVars), g.r.IntN(100))
	}
	out := b.String()[:size]
	c := call{id: g.t.toolCallID(), name: "execute_command", args: o("command", cmd, "timeout", 600000)}
	c.text, c.legacy = commandText(cmd, 0, out, ""), commandLegacy(cmd, 0, out, "")
	return c
}
