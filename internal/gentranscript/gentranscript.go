// Package gentranscript writes big, realistic transcript files of every
// kind perch imports, for the import benchmarks (client/registry's, and
// cmd/perch-bench's end-to-end one): long texts and tool outputs, unique
// ids, no line repeated, the same bytes for the same size every time.
package gentranscript

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The generators below write inputs of every kind's main shape. Each
// writes records until the file holds about size bytes.

// obj is a JSON object whose keys keep their order.
type obj []kv

type kv struct {
	k string
	v any
}

// jsonText is a value already written as JSON.
type jsonText string

// enc writes JSON: compact like Go and JavaScript, or (py) in the style of
// Python's json.dumps: ", " and ": " separators and non-ASCII as \uXXXX.
type enc struct {
	b  []byte
	py bool
}

func (e *enc) value(v any) {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case bool:
		e.b = strconv.AppendBool(e.b, v)
	case int:
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	case float64:
		e.b = strconv.AppendFloat(e.b, v, 'g', -1, 64)
	case string:
		e.str(v)
	case jsonText:
		e.b = append(e.b, v...)
	case obj:
		e.b = append(e.b, '{')
		for i, f := range v {
			if i > 0 {
				e.sep()
			}
			e.str(f.k)
			e.b = append(e.b, ':')
			if e.py {
				e.b = append(e.b, ' ')
			}
			e.value(f.v)
		}
		e.b = append(e.b, '}')
	case []any:
		e.b = append(e.b, '[')
		for i, x := range v {
			if i > 0 {
				e.sep()
			}
			e.value(x)
		}
		e.b = append(e.b, ']')
	case []obj:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = x
		}
		e.value(l)
	default:
		panic(fmt.Sprintf("enc: %T", v))
	}
}

func (e *enc) sep() {
	e.b = append(e.b, ',')
	if e.py {
		e.b = append(e.b, ' ')
	}
}

func (e *enc) str(s string) {
	const hex = "0123456789abcdef"
	e.b = append(e.b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			e.b = append(e.b, '\\', byte(r))
		case r == '\n':
			e.b = append(e.b, '\\', 'n')
		case r == '\t':
			e.b = append(e.b, '\\', 't')
		case r == '\r':
			e.b = append(e.b, '\\', 'r')
		case r < 0x20:
			e.b = append(e.b, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
		case r < utf8.RuneSelf || !e.py:
			e.b = utf8.AppendRune(e.b, r)
		default:
			units := []rune{r}
			if r > 0xffff {
				a, b := utf16.EncodeRune(r)
				units = []rune{a, b}
			}
			for _, u := range units {
				e.b = append(e.b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
			}
		}
	}
	e.b = append(e.b, '"')
}

// js is v as compact JSON; py is v as Python writes it.
func js(v any) string { e := enc{}; e.value(v); return string(e.b) }
func py(v any) string { e := enc{py: true}; e.value(v); return string(e.b) }

// text makes prose and tool output from a seeded source.
type text struct{ r *rand.Rand }

func newText(seed uint64) text { return text{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

var words = strings.Fields(`the a an of to in is it that for on with as this be are by not or
from at which but have has was if then else when return func error nil value file files test
tests build module package import Now Note In It If Info None NaN Infinity Next I'll Let me
check run the failing case because handler request response context cancel timeout buffer
stream decoder parser config option flag README Makefile go.mod main.go cart.ts checkout total
discount tax price items sum index length count slice map string bytes reader writer server
client session token usage cache prompt model tool call result output input argument naïve café
résumé — → ✓ über 日本語 emoji 🚀 "quoted" path/to/file.go:42 x<y a&b \backslash`)

func title(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func (t text) word() string { return words[t.r.IntN(len(words))] }

// prose is about n bytes of sentences and paragraphs.
func (t text) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		k := 6 + t.r.IntN(14)
		for i := 0; i < k; i++ {
			w := t.word()
			if i == 0 {
				w = title(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		switch t.r.IntN(10) {
		case 0:
			b.WriteString(".\n\n")
		case 1:
			fmt.Fprintf(&b, ": `%s(%d)`. ", t.word(), t.r.IntN(1000))
		default:
			b.WriteString(". ")
		}
	}
	return b.String()
}

// output is about n bytes of what commands print: test results, listings,
// compiler errors, code.
func (t text) output(n int) string {
	var b strings.Builder
	for b.Len() < n {
		switch t.r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/%s/pkg%d\t0.%03ds\n", t.word(), t.r.IntN(500), t.r.IntN(1000))
		case 1:
			fmt.Fprintf(&b, "--- FAIL: Test%s%d (0.%02ds)\n    %s_test.go:%d: got %d, want %d\n", title(t.word()), t.r.IntN(99), t.r.IntN(100), t.word(), t.r.IntN(400), t.r.IntN(100), t.r.IntN(100))
		case 2:
			fmt.Fprintf(&b, "-rw-r--r--  1 dev staff %7d Mar %2d 10:%02d %s.go\n", t.r.IntN(1e6), 1+t.r.IntN(28), t.r.IntN(60), t.word())
		case 3:
			fmt.Fprintf(&b, "\tif err := %s.%s(ctx, \"%s\"); err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}\n", t.word(), title(t.word()), t.word(), t.word())
		case 4:
			fmt.Fprintf(&b, "src/%s/%s.ts:%d:%d - error TS2345: Argument of type '%s' is not assignable.\n", t.word(), t.word(), t.r.IntN(900), t.r.IntN(80), t.word())
		default:
			fmt.Fprintf(&b, "%s\n", t.prose(40+t.r.IntN(80)))
		}
	}
	return b.String()
}

// around is n ± 50 %.
func (t text) around(n int) int { return n/2 + t.r.IntN(n+1) }

func (t text) id(prefix string) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte(prefix)
	for i := 0; i < 24; i++ {
		b = append(b, alnum[t.r.IntN(len(alnum))])
	}
	return string(b)
}

func (t text) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", t.r.Uint32(), t.r.IntN(1<<16), t.r.IntN(1<<12), t.r.IntN(1<<12), t.r.Uint64()&(1<<48-1))
}

// command is a shell command a model might run.
func (t text) command() string {
	switch t.r.IntN(4) {
	case 0:
		return "go test ./" + t.word() + "/..."
	case 1:
		return "npm test -- " + t.word()
	case 2:
		return "grep -rn \"" + t.word() + "\" src/"
	}
	return "ls -la " + t.word()
}

// chunks cuts s into pieces of a few to a few hundred bytes, on rune
// boundaries, as streams send text.
func (t text) chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := 4 + t.r.IntN(120)
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// writer counts what it writes.
type writer struct {
	*bufio.Writer
	n int
}

func (w *writer) line(s string) { w.n += len(s) + 1; w.WriteString(s); w.WriteByte('\n') }
func (w *writer) raw(s string)  { w.n += len(s); w.WriteString(s) }

// Gen is one benchmark input: a kind's main shape.
type Gen struct {
	// Name names the input ("suna-stream"), Kind the importer that reads
	// it ("suna").
	Name, Kind string
	// Shape is how a JSON baseline reads it: "jsonl", "sse" or "json".
	Shape string
	fill  func(w *writer, size int)
}

// All lists an input of every kind's main shape.
func All() []Gen {
	return []Gen{
		{"maria", "maria", "jsonl", genMaria},
		{"suna-history", "suna", "json", genSunaHistory},
		{"suna-stream", "suna", "sse", genSunaStream},
		{"pynchy-stream", "pynchy", "sse", genPynchy},
		{"attocode-session", "attocode", "jsonl", genAttocode},
		{"anthropic-stream", "anthropic", "sse", genAnthropicStream},
		{"anthropic-log", "anthropic", "json", genAnthropicLog},
		{"claude-code", "claude-code", "jsonl", genClaudeCode},
		{"openai-stream", "openai", "sse", genOpenAIStream},
		{"openai-log", "openai", "jsonl", genOpenAILog},
		{"codex", "codex", "jsonl", genCodex},
	}
}

// Write writes the input of about size bytes to path.
func (g Gen) Write(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := &writer{Writer: bufio.NewWriterSize(f, 1<<20)}
	g.fill(w, size)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func genMaria(w *writer, size int) {
	t := newText(1)
	created := 1774598400000
	ev := func(desc obj) {
		created += 1 + t.r.IntN(3000)
		w.line(js(obj{{"id", t.uuid()}, {"created", created}, {"desc", desc}}))
	}
	for w.n < size {
		ev(obj{{"msg", "MessageAdded"}, {"message", obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", t.prose(t.around(300))}}}}}}})
		for k := 1 + t.r.IntN(3); k > 0 && w.n < size; k-- {
			id := t.id("toolu_")
			cmd := t.command()
			args := js(obj{{"command", cmd}})
			call := obj{{"id", id}, {"function", obj{{"name", "execute_command"}, {"arguments", args}}}, {"type", "function"}}
			ev(obj{{"msg", "RequestCompleted"}, {"usage", obj{{"completion_tokens", t.r.IntN(900)}, {"prompt_tokens", 10000 + t.r.IntN(90000)}, {"prompt_tokens_details", obj{{"cached_tokens", t.r.IntN(9000)}}}, {"total_tokens", t.r.IntN(100000)}}},
				{"message", obj{{"content", t.prose(t.around(2000))}, {"role", "assistant"}, {"tool_calls", []any{call}}}}})
			ev(obj{{"msg", "PreToolCall"}, {"tool_call", call}, {"name", "execute_command"}, {"args", jsonText(args)}})
			out := fmt.Sprintf("Command %s exited with status %d.\n=== STDOUT (%d lines) ===\n", cmd, t.r.IntN(2), 40+t.r.IntN(100)) + t.output(t.around(6000))
			ev(obj{{"msg", "PostToolCall"}, {"tool_call", call}, {"name", "execute_command"}, {"args", jsonText(args)}, {"result", out}, {"text", out}})
		}
		ev(obj{{"msg", "RequestCompleted"}, {"usage", obj{{"completion_tokens", t.r.IntN(900)}, {"prompt_tokens", 10000 + t.r.IntN(90000)}, {"total_tokens", t.r.IntN(100000)}}},
			{"message", obj{{"content", t.prose(t.around(1500))}, {"role", "assistant"}}}})
		ev(obj{{"msg", "PostConversation"}})
	}
}

// sunaRows calls row for each row of a Suna thread: user, reasoning-free
// assistant turns with native tool calls, tool results, finish statuses
// and LLM call bounds, oldest first.
func sunaRows(t text, size int, w *writer, row func(o obj)) {
	thread := t.uuid()
	run := t.uuid()
	at := 0
	seq := 0
	base := func(typ string, llm bool, content, metadata string) obj {
		at += 1 + t.r.IntN(3000)
		seq++
		ts := fmt.Sprintf("2026-03-%02dT%02d:%02d:%02d.%06d+00:00", 1+at/86400000%28, at/3600000%24, at/60000%60, at/1000%60, at%1000*1000)
		return obj{{"message_id", t.uuid()}, {"thread_id", thread}, {"type", typ}, {"is_llm_message", llm},
			{"content", content}, {"metadata", metadata}, {"created_at", ts}, {"updated_at", ts}, {"sequence", seq}, {"agent_id", "ag-1"}}
	}
	for w.n < size {
		row(base("user", true, py(obj{{"role", "user"}, {"content", t.prose(t.around(400))}}), "{}"))
		for k := 1 + t.r.IntN(3); k > 0 && w.n < size; k-- {
			resp := t.uuid()
			row(base("llm_response_start", false, py(obj{{"llm_response_id", resp}, {"auto_continue_count", 0}, {"model", "anthropic/claude-sonnet-4"}}), py(obj{{"thread_run_id", run}, {"llm_response_id", resp}})))
			id := t.id("toolu_")
			cmd := t.command()
			argText := py(obj{{"command", cmd}, {"timeout", 60}})
			prose := t.prose(t.around(2000))
			msg := base("assistant", true,
				py(obj{{"role", "assistant"}, {"content", prose}, {"tool_calls", []any{obj{{"id", id}, {"type", "function"}, {"function", obj{{"name", "execute_command"}, {"arguments", argText}}}}}}}),
				py(obj{{"thread_run_id", run}, {"stream_status", "complete"}, {"tool_calls", []any{obj{{"source", "native"}, {"arguments", obj{{"command", cmd}, {"timeout", 60}}}, {"tool_call_id", id}, {"function_name", "execute_command"}}}}}))
			row(msg)
			row(base("status", false, py(obj{{"status_type", "finish"}, {"finish_reason", "tool_calls"}, {"tools_executed", true}}), py(obj{{"thread_run_id", run}})))
			row(base("llm_response_end", false, py(obj{{"llm_response_id", resp}, {"model", "anthropic/claude-sonnet-4"}, {"usage", obj{{"prompt_tokens", 10000 + t.r.IntN(90000)}, {"completion_tokens", t.r.IntN(900)}, {"total_tokens", 0}, {"cache_read_input_tokens", t.r.IntN(9000)}}}}), py(obj{{"thread_run_id", run}, {"llm_response_id", resp}})))
			out := t.output(t.around(6000))
			inner := py(obj{{"output", out}, {"cwd", "/workspace"}, {"exit_code", t.r.IntN(2)}})
			row(base("tool", true, py(obj{{"name", "execute_command"}, {"role", "tool"}, {"content", inner}, {"tool_call_id", id}}),
				py(obj{{"result", obj{{"error", nil}, {"output", obj{{"output", out}, {"cwd", "/workspace"}, {"exit_code", 0}}}, {"success", true}}}, {"tool_call_id", id}, {"function_name", "execute_command"}, {"return_format", "native"}})))
		}
		row(base("assistant", true, py(obj{{"role", "assistant"}, {"content", t.prose(t.around(1500))}}), py(obj{{"thread_run_id", run}, {"stream_status", "complete"}})))
		row(base("status", false, py(obj{{"status_type", "finish"}, {"finish_reason", "stop"}}), py(obj{{"thread_run_id", run}})))
	}
}

func genSunaHistory(w *writer, size int) {
	t := newText(2)
	w.raw(`{"messages":[`)
	first := true
	sunaRows(t, size, w, func(o obj) {
		if !first {
			w.raw(",")
		}
		first = false
		w.raw(js(o))
	})
	w.raw("]}\n")
}

func genSunaStream(w *writer, size int) {
	t := newText(3)
	ev := 1741176000000
	frame := func(o obj) {
		ev += 7
		o = append(o, kv{"_event_id", fmt.Sprintf("%d-0", ev)})
		w.raw("data: " + py(o) + "\n\n")
	}
	frame(obj{{"type", "status"}, {"status", "initializing"}, {"message", "Starting execution..."}})
	thread := t.uuid()
	run := t.uuid()
	seq := 0
	row := func(typ, content, metadata string, id any) obj {
		seq++
		return obj{{"sequence", seq}, {"message_id", id}, {"thread_id", thread}, {"type", typ}, {"is_llm_message", true},
			{"content", content}, {"metadata", metadata}, {"created_at", "2026-03-05T12:00:00.000000+00:00"}, {"updated_at", "2026-03-05T12:00:00.000000+00:00"}}
	}
	for w.n < size {
		frame(obj{{"type", "llm_response_start"}, {"timestamp", "2026-03-05T12:00:00.000000+00:00"}, {"thread_run_id", run}})
		prose := t.prose(t.around(2000))
		for _, c := range t.chunks(prose) {
			frame(row("assistant", py(obj{{"role", "assistant"}, {"content", c}}), py(obj{{"thread_run_id", run}, {"stream_status", "chunk"}}), nil))
		}
		id := t.id("toolu_")
		cmd := t.command()
		argText := py(obj{{"command", cmd}})
		for i, c := range t.chunks(argText) {
			cid := id
			if i == 0 {
				cid = "streaming_tool_0"
			}
			frame(row("assistant", py(obj{{"role", "assistant"}, {"content", ""}}), py(obj{{"thread_run_id", run}, {"stream_status", "tool_call_chunk"},
				{"tool_calls", []any{obj{{"tool_call_id", cid}, {"function_name", "execute_command"}, {"arguments_delta", c}, {"is_delta", true}, {"source", "native"}}}}}), nil))
		}
		mid := t.uuid()
		frame(row("assistant",
			py(obj{{"role", "assistant"}, {"content", prose}, {"tool_calls", []any{obj{{"id", id}, {"type", "function"}, {"function", obj{{"name", "execute_command"}, {"arguments", argText}}}}}}}),
			py(obj{{"text_content", prose}, {"thread_run_id", run}, {"stream_status", "complete"}, {"tool_calls", []any{obj{{"source", "native"}, {"arguments", obj{{"command", cmd}}}, {"tool_call_id", id}, {"function_name", "execute_command"}}}}}), mid))
		frame(obj{{"type", "llm_response_end"}, {"timestamp", "2026-03-05T12:00:00.000000+00:00"}, {"thread_run_id", run}})
		out := t.output(t.around(6000))
		for _, c := range t.chunks(out[:len(out)/3]) {
			frame(obj{{"type", "tool_output_stream"}, {"tool_call_id", id}, {"tool_name", "execute_command"}, {"output", c}, {"is_final", false}})
		}
		inner := py(obj{{"output", out}, {"cwd", "/workspace"}, {"exit_code", 0}})
		frame(row("tool", py(obj{{"name", "execute_command"}, {"role", "tool"}, {"content", inner}, {"tool_call_id", id}}),
			py(obj{{"result", obj{{"error", nil}, {"output", obj{{"output", out}, {"cwd", "/workspace"}, {"exit_code", 0}}}, {"success", true}}}, {"tool_call_id", id}, {"function_name", "execute_command"}, {"return_format", "native"}, {"assistant_message_id", mid}}), t.uuid()))
	}
	frame(obj{{"type", "status"}, {"status", "completed"}, {"message", "Agent run completed successfully"}})
}

func genPynchy(w *writer, size int) {
	t := newText(4)
	const jid = "tg:100"
	frame := func(o obj) { w.raw("data: " + py(o) + "\n\n") }
	trace := func(typ string, rest ...kv) {
		frame(append(obj{{"type", "agent_trace"}, {"chat_jid", jid}, {"trace_type", typ}}, rest...))
	}
	at := 0
	stamp := func() string {
		at += 1 + t.r.IntN(5000)
		return fmt.Sprintf("2026-02-28T%02d:%02d:%02d.%06d+00:00", at/3600000%24, at/60000%60, at/1000%60, at%1000*1000)
	}
	for w.n < size {
		ask := t.prose(t.around(300))
		frame(obj{{"type", "message"}, {"chat_jid", jid}, {"sender_name", "You"}, {"content", ask}, {"timestamp", stamp()}, {"is_bot", false}})
		frame(obj{{"type", "agent_activity"}, {"chat_jid", jid}, {"active", true}})
		trace("user_input", kv{"sender_name", "You"}, kv{"content", ask}, kv{"source", "user"})
		trace("system", kv{"subtype", "init"}, kv{"data", obj{{"session_id", t.uuid()}, {"model", "claude-sonnet-4-5"}}})
		var last string
		for k := 1 + t.r.IntN(3); k > 0; k-- {
			trace("thinking", kv{"thinking", t.prose(t.around(600))})
			trace("text", kv{"text", t.prose(t.around(1000))})
			trace("tool_use", kv{"tool_name", "Bash"}, kv{"tool_input", obj{{"command", t.command()}}})
			blocks := py([]any{obj{{"type", "text"}, {"text", t.output(t.around(6000))}}})
			trace("tool_result", kv{"tool_use_id", t.id("toolu_")}, kv{"content", blocks}, kv{"is_error", false})
		}
		last = t.prose(t.around(1500))
		trace("text", kv{"text", last})
		trace("result_meta", kv{"subtype", "success"}, kv{"duration_ms", t.r.IntN(90000)}, kv{"is_error", false}, kv{"num_turns", 3}, kv{"session_id", t.uuid()},
			kv{"total_cost_usd", float64(t.r.IntN(10000)) / 1e4}, kv{"usage", obj{{"input_tokens", t.r.IntN(100)}, {"cache_read_input_tokens", t.r.IntN(90000)}, {"output_tokens", t.r.IntN(900)}}})
		frame(obj{{"type", "message"}, {"chat_jid", jid}, {"sender_name", "pynchy"}, {"content", last}, {"timestamp", stamp()}, {"is_bot", true}})
		frame(obj{{"type", "agent_activity"}, {"chat_jid", jid}, {"active", false}})
	}
}

func genAttocode(w *writer, size int) {
	t := newText(5)
	at := 0
	entry := func(typ string, data obj) {
		at += 1 + t.r.IntN(5000)
		w.line(js(obj{{"type", typ}, {"data", data}, {"timestamp", fmt.Sprintf("2026-02-10T%02d:%02d:%02d.%03dZ", at/3600000%24, at/60000%60, at/1000%60, at%1000)}}))
	}
	entry("metadata", obj{{"workspacePath", "/home/ana/shop"}, {"model", "claude-sonnet-4-20250514"}, {"provider", "anthropic"}})
	entry("message", obj{{"role", "system"}, {"content", t.prose(2000)}})
	for w.n < size {
		entry("message", obj{{"role", "user"}, {"content", t.prose(t.around(300))}})
		for k := 1 + t.r.IntN(3); k > 0 && w.n < size; k-- {
			id := t.id("call_")
			args := obj{{"command", t.command()}}
			entry("message", obj{{"role", "assistant"}, {"content", t.prose(t.around(2000))}, {"toolCalls", []any{obj{{"id", id}, {"name", "bash"}, {"arguments", args}}}},
				{"metadata", obj{{"thinking", t.prose(t.around(500))}}},
				{"usage", obj{{"inputTokens", t.r.IntN(9000)}, {"outputTokens", t.r.IntN(900)}, {"cacheReadTokens", t.r.IntN(9000)}, {"cost", float64(t.r.IntN(1000)) / 1e4}}}})
			entry("tool_call", obj{{"id", id}, {"name", "bash"}, {"arguments", args}})
			res := obj{{"success", true}, {"output", t.output(t.around(6000))}, {"metadata", obj{{"exitCode", 0}, {"truncated", false}}}}
			entry("tool_result", obj{{"callId", id}, {"result", res}})
		}
		entry("message", obj{{"role", "assistant"}, {"content", t.prose(t.around(1500))}, {"usage", obj{{"inputTokens", t.r.IntN(9000)}, {"outputTokens", t.r.IntN(900)}}}})
	}
}

func genAnthropicStream(w *writer, size int) {
	t := newText(6)
	ev := func(name string, o obj) { w.raw("event: " + name + "\ndata: " + js(o) + "\n\n") }
	for w.n < size {
		ev("message_start", obj{{"type", "message_start"}, {"message", obj{{"id", t.id("msg_")}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-5-20250929"},
			{"content", []any{}}, {"stop_reason", nil}, {"stop_sequence", nil}, {"usage", obj{{"input_tokens", t.r.IntN(100)}, {"cache_read_input_tokens", t.r.IntN(90000)}, {"output_tokens", 1}}}}}})
		idx := 0
		block := func(start obj, deltaType, field string, s string) {
			ev("content_block_start", obj{{"type", "content_block_start"}, {"index", idx}, {"content_block", start}})
			for _, c := range t.chunks(s) {
				ev("content_block_delta", obj{{"type", "content_block_delta"}, {"index", idx}, {"delta", obj{{"type", deltaType}, {field, c}}}})
			}
			ev("content_block_stop", obj{{"type", "content_block_stop"}, {"index", idx}})
			idx++
		}
		block(obj{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, "thinking_delta", "thinking", t.prose(t.around(600)))
		block(obj{{"type", "text"}, {"text", ""}}, "text_delta", "text", t.prose(t.around(2000)))
		if t.r.IntN(3) > 0 {
			input := js(obj{{"command", t.command()}, {"description", t.prose(60)}})
			block(obj{{"type", "tool_use"}, {"id", t.id("toolu_")}, {"name", "bash"}, {"input", obj{}}}, "input_json_delta", "partial_json", input)
			ev("message_delta", obj{{"type", "message_delta"}, {"delta", obj{{"stop_reason", "tool_use"}, {"stop_sequence", nil}}}, {"usage", obj{{"output_tokens", t.r.IntN(900)}}}})
		} else {
			ev("message_delta", obj{{"type", "message_delta"}, {"delta", obj{{"stop_reason", "end_turn"}, {"stop_sequence", nil}}}, {"usage", obj{{"output_tokens", t.r.IntN(900)}}}})
		}
		ev("message_stop", obj{{"type", "message_stop"}})
	}
}

func genAnthropicLog(w *writer, size int) {
	t := newText(7)
	w.raw("[\n")
	first := true
	put := func(o obj) {
		if !first {
			w.raw(",\n")
		}
		first = false
		w.raw(js(o))
	}
	for w.n < size {
		system := t.prose(t.around(1500))
		var msgs []any
		msgs = append(msgs, obj{{"role", "user"}, {"content", t.prose(t.around(300))}})
		for turn := 0; turn < 8 && w.n < size; turn++ {
			put(obj{{"model", "claude-opus-4-1"}, {"max_tokens", 4096}, {"system", system}, {"messages", msgs}})
			content := []any{
				obj{{"type", "thinking"}, {"thinking", t.prose(t.around(500))}, {"signature", t.id("sig")}},
				obj{{"type", "text"}, {"text", t.prose(t.around(1500))}},
			}
			var id string
			if turn < 7 {
				id = t.id("toolu_")
				content = append(content, obj{{"type", "tool_use"}, {"id", id}, {"name", "bash"}, {"input", obj{{"command", t.command()}}}})
			}
			put(obj{{"id", t.id("msg_")}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-opus-4-1"}, {"content", content},
				{"stop_reason", "tool_use"}, {"usage", obj{{"input_tokens", t.r.IntN(100)}, {"output_tokens", t.r.IntN(900)}, {"cache_creation_input_tokens", t.r.IntN(2000)}, {"cache_read_input_tokens", t.r.IntN(90000)}}}})
			msgs = append(msgs, obj{{"role", "assistant"}, {"content", content[1:]}})
			if id == "" {
				break
			}
			msgs = append(msgs, obj{{"role", "user"}, {"content", []any{obj{{"type", "tool_result"}, {"tool_use_id", id}, {"content", t.output(t.around(4000))}}}}})
		}
	}
	w.raw("\n]\n")
}

func genClaudeCode(w *writer, size int) {
	t := newText(8)
	session := t.uuid()
	w.line(js(obj{{"type", "system"}, {"subtype", "init"}, {"cwd", "/home/dev/shop"}, {"session_id", session}, {"tools", []any{"Bash", "Read", "Edit"}},
		{"mcp_servers", []any{}}, {"model", "claude-sonnet-4-5-20250929"}, {"permissionMode", "default"}, {"uuid", t.uuid()}}))
	usage := func() obj {
		return obj{{"input_tokens", 4}, {"cache_creation_input_tokens", t.r.IntN(5000)}, {"cache_read_input_tokens", t.r.IntN(90000)}, {"output_tokens", t.r.IntN(900)}, {"service_tier", "standard"}}
	}
	assistant := func(id string, block obj) {
		w.line(js(obj{{"type", "assistant"}, {"message", obj{{"model", "claude-sonnet-4-5-20250929"}, {"id", id}, {"type", "message"}, {"role", "assistant"},
			{"content", []any{block}}, {"stop_reason", nil}, {"stop_sequence", nil}, {"usage", usage()}}}, {"parent_tool_use_id", nil}, {"session_id", session}, {"uuid", t.uuid()}}))
	}
	turns := 0
	for w.n < size {
		turns++
		id := t.id("msg_")
		assistant(id, obj{{"type", "text"}, {"text", t.prose(t.around(2000))}})
		call := t.id("toolu_")
		assistant(id, obj{{"type", "tool_use"}, {"id", call}, {"name", "Bash"}, {"input", obj{{"command", t.command()}, {"description", t.prose(40)}}}})
		w.line(js(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", []any{obj{{"tool_use_id", call}, {"type", "tool_result"}, {"content", t.output(t.around(6000))}, {"is_error", false}}}}}},
			{"parent_tool_use_id", nil}, {"session_id", session}, {"uuid", t.uuid()}}))
	}
	w.line(js(obj{{"type", "result"}, {"subtype", "success"}, {"is_error", false}, {"duration_ms", 123456}, {"num_turns", turns}, {"result", t.prose(500)},
		{"session_id", session}, {"total_cost_usd", 12.5}, {"usage", usage()}, {"uuid", t.uuid()}}))
}

func genOpenAIStream(w *writer, size int) {
	t := newText(9)
	for w.n < size {
		id := t.id("chatcmpl-")
		chunk := func(delta obj, finish any) {
			w.raw("data: " + js(obj{{"id", id}, {"object", "chat.completion.chunk"}, {"created", 1747000000}, {"model", "o4-mini"}, {"system_fingerprint", "fp_1"},
				{"choices", []any{obj{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}}) + "\n\n")
		}
		chunk(obj{{"role", "assistant"}, {"content", ""}}, nil)
		for _, c := range t.chunks(t.prose(t.around(600))) {
			chunk(obj{{"reasoning_content", c}}, nil)
		}
		for _, c := range t.chunks(t.prose(t.around(2000))) {
			chunk(obj{{"content", c}}, nil)
		}
		finish := "stop"
		if t.r.IntN(3) > 0 {
			finish = "tool_calls"
			args := js(obj{{"path", "src/" + t.word() + ".go"}, {"pattern", t.word()}})
			for i, c := range t.chunks(args) {
				fn := obj{{"arguments", c}}
				call := obj{{"index", 0}, {"function", fn}}
				if i == 0 {
					call = obj{{"index", 0}, {"id", t.id("call_")}, {"type", "function"}, {"function", obj{{"arguments", c}, {"name", "grep"}}}}
				}
				chunk(obj{{"tool_calls", []any{call}}}, nil)
			}
		}
		chunk(obj{}, finish)
		w.raw("data: " + js(obj{{"id", id}, {"object", "chat.completion.chunk"}, {"created", 1747000000}, {"model", "o4-mini"}, {"choices", []any{}},
			{"usage", obj{{"prompt_tokens", t.r.IntN(90000)}, {"completion_tokens", t.r.IntN(900)}, {"total_tokens", 0}}}}) + "\n\n")
		w.raw("data: [DONE]\n\n")
	}
}

func genOpenAILog(w *writer, size int) {
	t := newText(10)
	for w.n < size {
		msgs := []any{obj{{"role", "system"}, {"content", t.prose(t.around(1500))}}, obj{{"role", "user"}, {"content", t.prose(t.around(300))}}}
		for turn := 0; turn < 8 && w.n < size; turn++ {
			msg := obj{{"role", "assistant"}, {"content", t.prose(t.around(1500))}}
			var id string
			finish := "stop"
			if turn < 7 {
				id = t.id("call_")
				finish = "tool_calls"
				msg = append(msg, kv{"tool_calls", []any{obj{{"id", id}, {"type", "function"}, {"function", obj{{"name", "run"}, {"arguments", js(obj{{"command", t.command()}})}}}}}})
			}
			resp := obj{{"id", t.id("chatcmpl-")}, {"object", "chat.completion"}, {"created", 1741570283}, {"model", "gpt-4o"},
				{"choices", []any{obj{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", finish}}}},
				{"usage", obj{{"prompt_tokens", t.r.IntN(90000)}, {"completion_tokens", t.r.IntN(900)}, {"total_tokens", 0}}}}
			w.line(js(obj{{"request", obj{{"model", "gpt-4o"}, {"messages", msgs}}}, {"response", resp}}))
			msgs = append(msgs, msg)
			if id == "" {
				break
			}
			msgs = append(msgs, obj{{"role", "tool"}, {"tool_call_id", id}, {"content", t.output(t.around(4000))}})
		}
	}
}

func genCodex(w *writer, size int) {
	t := newText(11)
	w.line(js(obj{{"type", "thread.started"}, {"thread_id", t.uuid()}}))
	n := 0
	item := func(ev string, o obj) { w.line(js(obj{{"type", ev}, {"item", o}})) }
	for w.n < size {
		w.line(`{"type":"turn.started"}`)
		for k := 1 + t.r.IntN(3); k > 0; k-- {
			n++
			item("item.completed", obj{{"id", fmt.Sprintf("item_%d", n)}, {"type", "reasoning"}, {"text", "**" + t.prose(30) + "**\n\n" + t.prose(t.around(500))}})
			n++
			item("item.completed", obj{{"id", fmt.Sprintf("item_%d", n)}, {"type", "agent_message"}, {"text", t.prose(t.around(1500))}})
			n++
			id := fmt.Sprintf("item_%d", n)
			cmd := "bash -lc '" + t.command() + "'"
			out := t.output(t.around(6000))
			item("item.started", obj{{"id", id}, {"type", "command_execution"}, {"command", cmd}, {"aggregated_output", ""}, {"exit_code", nil}, {"status", "in_progress"}})
			item("item.completed", obj{{"id", id}, {"type", "command_execution"}, {"command", cmd}, {"aggregated_output", out}, {"exit_code", 0}, {"status", "completed"}})
		}
		n++
		item("item.completed", obj{{"id", fmt.Sprintf("item_%d", n)}, {"type", "agent_message"}, {"text", t.prose(t.around(1500))}})
		w.line(js(obj{{"type", "turn.completed"}, {"usage", obj{{"input_tokens", t.r.IntN(90000)}, {"cached_input_tokens", t.r.IntN(90000)}, {"output_tokens", t.r.IntN(900)}}}}))
	}
}
