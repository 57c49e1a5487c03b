package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/sanitize"
)

// bigText is about n bytes of random-ish lines: words, multi-byte UTF-8,
// and on some lines a tab, quote, backslash, control character or escape
// sequence (sparse, as in real output, so that maria's two copies of a
// 30 MB output fit in an event).
func bigText(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	words := []string{"a", "bx", "Zed", "0", " ", " ", "_", "func", "return ", "lorem ", "ok  ", "FAIL ",
		"ipsum ", "main.go:12", "{", "}", "()", "é", "ß", "中", "😀", "<", "&", "/"}
	special := []string{"\t", "\"", "\\", "\x01", "\x1b[31m", "\u2028", "\r"}
	pool := make([]string, 2048)
	for i := range pool {
		var l strings.Builder
		for k := r.Intn(40); k > 0; k-- {
			l.WriteString(words[r.Intn(len(words))])
		}
		if r.Intn(3) == 0 {
			l.WriteString(special[r.Intn(len(special))])
		}
		pool[i] = l.String() + "\n"
	}
	var b strings.Builder
	b.Grow(n + 200)
	for b.Len() < n {
		b.WriteString(pool[r.Intn(len(pool))])
	}
	return b.String()
}

// quoteJSON is s as a JSON string with the fewest escapes, as maria writes.
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8 + 2)
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
	return b.String()
}

// bigStream is a recorded run in dialect whose one tool call (tool) has an
// output of about size bytes; it returns the SSE bytes and the output text
// perch must export.
func bigStream(dialect, tool string, size int) ([]byte, string) {
	body := bigText(size, 7)
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var text, args, structured string
	switch tool {
	case "read_file":
		var b strings.Builder
		w := len(strconv.Itoa(len(lines)))
		fmt.Fprintf(&b, "File: big.txt (lines 1-%d (%d lines))", len(lines), len(lines))
		for i, l := range lines {
			num := strconv.Itoa(i + 1)
			b.WriteString("\n L" + strings.Repeat("0", w-len(num)) + num + " | " + l)
		}
		text = b.String()
		structured = fmt.Sprintf(`{"path":"big.txt","content":%s,"start_line":1,"end_line":%d}`, quoteJSON(body), len(lines))
		args = `{\"path\": \"big.txt\"}`
	case "execute_command":
		text = fmt.Sprintf("Command cat big.txt exited with status 0.\n=== STDOUT (%d lines) ===\n%s", len(lines)+1, body)
		structured = `["Completed",{"command":"cat big.txt","status":0,"stdout":` + quoteJSON(body) + `,"stderr":"","max_output_lines":100}]`
		args = `{\"command\": \"cat big.txt\"}`
	}
	var out bytes.Buffer
	n := 0
	emit := func(desc string) {
		n++
		if dialect == "docs" {
			fmt.Fprintf(&out, "event: maria\ndata: {\"id\":%d,%s}\n\n", n, desc)
			return
		}
		fmt.Fprintf(&out, "event: maria\ndata: {\"id\":\"00000000-0000-4000-8000-%012d\",\"created\":%d,\"desc\":{%s}}\n\n", n, 1774598400000+n, desc)
	}
	call := `{"id":"toolu_big","function":{"name":"` + tool + `","arguments":"` + args + `"},"type":"function"}`
	qt := quoteJSON(text)
	result := qt
	if dialect == "legacy" {
		result = structured
	}
	out.WriteString("event: maria.queued_messages.synchronized\ndata: []\n\n")
	emit(`"msg":"PreConversation"`)
	emit(`"msg":"UserMessage","content":"show me the big file"`)
	emit(`"msg":"AssistantMessage","content":"","tool_calls":[` + call + `]`)
	emit(`"msg":"PreToolCall","tool_call":` + call + `,"name":"` + tool + `"`)
	emit(`"msg":"PostToolCall","tool_call":` + call + `,"name":"` + tool + `","result":` + result + `,"text":` + qt)
	emit(`"msg":"AssistantMessage","content":"That was big.","tool_calls":[]`)
	emit(`"msg":"PostConversation"`)
	return out.Bytes(), text
}

// runUntil runs perch until its output holds stop (or 30 s pass).
func runUntil(t *testing.T, stop string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out watchWriter
	out.stop, out.cancel = stop, cancel
	var errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
	code := Main(ctx, env, args)
	return result{code, out.String(), errb.String()}
}

// watchWriter cancels once what was written holds stop.
type watchWriter struct {
	bytes.Buffer
	stop   string
	cancel func()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if bytes.Contains(w.Bytes()[max(0, w.Len()-len(p)-len(w.stop)):], []byte(w.stop)) {
		w.cancel()
	}
	return n, err
}

// toolOutputs returns the output of every finished tool record of a jsonl
// export, in order.
func toolOutputs(t *testing.T, jsonl string) []string {
	t.Helper()
	var outs []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var r struct {
			Type, Status string
			Output       *string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %v: %.200s", err, line)
		}
		if r.Type == "tool" && r.Status == "ok" && r.Output != nil {
			outs = append(outs, *r.Output)
		}
	}
	return outs
}

func sameOutput(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("%s: %d finished tool records, want 1", what, len(got))
	}
	if got[0] != want {
		i := 0
		for i < len(got[0]) && i < len(want) && got[0][i] == want[i] {
			i++
		}
		t.Fatalf("%s: output differs from byte %d on (%d bytes, want %d)", what, i, len(got[0]), len(want))
	}
}

// TestExportKeepsLargeOutputsWhole: a 30 MB read_file or execute_command
// output comes out of export (jsonl and json), replay and tail byte for
// byte, in every dialect; Markdown cuts it with a marker unless --full.
// Under -race (ten times slower) or -short, only the HEAD read_file case
// runs, with 5 MB: still more than the 4 MiB perch used to keep.
func TestExportKeepsLargeOutputsWhole(t *testing.T) {
	t.Parallel()
	size := 30 << 20
	cases := []struct{ dialect, tool string }{
		{"head", "read_file"}, {"head", "execute_command"}, {"legacy", "read_file"},
		{"legacy", "execute_command"}, {"docs", "read_file"}, {"docs", "execute_command"},
	}
	if raceEnabled || testing.Short() {
		size, cases = 5<<20+5<<20/16, cases[:1]
	}
	for _, c := range cases {
		t.Run(c.dialect+"/"+c.tool, func(t *testing.T) {
			body := size
			if c.tool == "read_file" {
				body = size * 13 / 16 // + the " L123 | " row prefixes
			}
			sse, text := bigStream(c.dialect, c.tool, body)
			if len(text) < size*7/8 {
				t.Fatalf("the output is only %d bytes", len(text))
			}
			// The recorded run, served as it is by a daemon that says
			// the task is idle.
			const id = "3f2b0000-0000-4000-8000-0000000000b1"
			base := (&taskServer{id: id, log: sse, status: func() string { return "idle" }}).start(t)
			// --until-idle: what is tested here is what comes out, not
			// when the replay counts as complete on a loaded machine.
			r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle"))
			sameOutput(t, "export jsonl", toolOutputs(t, r.stdout), text)
			if c.dialect != "head" || c.tool != "read_file" {
				return // the other forms read the same timeline
			}
			var doc struct {
				Items []struct {
					Type, Status string
					Output       string
				}
			}
			r = must(t, run(t, "", "export", id, "--url", base, "--until-idle", "--format", "json"))
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			var outs []string
			for _, it := range doc.Items {
				if it.Type == "tool" && it.Status == "ok" {
					outs = append(outs, it.Output)
				}
			}
			sameOutput(t, "export json", outs, text)

			file := filepath.Join(t.TempDir(), "big.sse")
			if err := os.WriteFile(file, sse, 0o644); err != nil {
				t.Fatal(err)
			}
			r = must(t, run(t, "", "replay", file, "--format", "jsonl"))
			sameOutput(t, "replay jsonl", toolOutputs(t, r.stdout), text)

			r = runUntil(t, "That was big.", "tail", id, "--url", base, "--jsonl")
			sameOutput(t, "tail --jsonl", toolOutputs(t, r.stdout), text)

			r = must(t, run(t, "", "export", id, "--url", base, "--until-idle", "--format", "md"))
			if len(r.stdout) > 64<<10 || !strings.Contains(r.stdout, "more bytes; --full shows everything") {
				t.Errorf("md: %d bytes, marker missing", len(r.stdout))
			}
			r = must(t, run(t, "", "export", id, "--url", base, "--until-idle", "--format", "md", "--full"))
			if !strings.Contains(r.stdout, sanitize.Text(text)) || strings.Contains(r.stdout, "more bytes") {
				t.Errorf("md --full: the output is not whole (%d bytes)", len(r.stdout))
			}
		})
	}
}

// TestTextViewOfLargeOutput: tail and replay's text view of an output over
// 1 MB reads only its first and last lines, and shows what the whole would.
func TestTextViewOfLargeOutput(t *testing.T) {
	var lines strings.Builder
	for i := 0; lines.Len() < 3<<20; i++ {
		fmt.Fprintf(&lines, "line %d \x1b[1mbold\x1b[0m\tend\n", i)
	}
	for name, s := range map[string]string{
		"many lines":     lines.String(),
		"one huge line":  strings.Repeat("é中x", 1<<20),
		"few huge lines": strings.Repeat(strings.Repeat("y", 300<<10)+"\n", 12),
		"eleven lines":   strings.Repeat(strings.Repeat("z", 200<<10)+"\n", 10) + "last",
	} {
		want := indent(headTail(sanitize.Text(s), 6, 3), "  │ ")
		got := indent(headTail(sanitize.Text(headTailRaw(s, 6, 3)), 6, 3), "  │ ")
		if got != want {
			t.Errorf("%s: differs:\n%.600s\nvs\n%.600s", name, got, want)
		}
	}
}
