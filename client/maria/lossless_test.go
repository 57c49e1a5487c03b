package maria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/perch-tui/perch/events"
)

// randomText is n bytes or so of random-ish lines: ASCII, multi-byte UTF-8
// (2, 3 and 4 bytes), tabs, quotes, backslashes, control characters, an
// escape sequence, U+2028 and HTML-ish characters, so every kind of JSON
// escape and every UTF-8 length is exercised. Lines are drawn from a pool,
// so that tens of megabytes take little time.
func randomText(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	alphabet := []string{"a", "b", "c", "x", "Z", "0", "7", " ", " ", " ", "_", ".", "(", ")",
		"func", "return", "lorem ", "ipsum ", "if err != nil {", "}", "ok  ", "FAIL ", "0.42s",
		"é", "ß", "中", "文", "😀", "\t", "\"", "\\", "/", "<", ">", "&", "\x01", "\x1b[31m", "\u2028", "\r"}
	pool := make([]string, 4096)
	for i := range pool {
		var l strings.Builder
		for k := r.Intn(100); k > 0; k-- {
			l.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		pool[i] = l.String() + "\n"
	}
	var b strings.Builder
	b.Grow(n + 500)
	for b.Len() < n {
		b.WriteString(pool[r.Intn(len(pool))])
	}
	return b.String()
}

func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as maria writes
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// quoteJSON is s as a JSON string, escaped as little as JSON allows (as
// maria does), and much faster than encoding/json on tens of megabytes.
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
		default:
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
	return b.String()
}

// bigPost is the PostToolCall of tool with output body in a dialect, and
// the text perch must keep and export.
func bigPost(dialect, tool, body string) (events.Frame, string) {
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var text, args, structured string
	switch tool {
	case "read_file":
		var b strings.Builder
		b.Grow(len(body) + 16*len(lines))
		w := len(strconv.Itoa(len(lines)))
		fmt.Fprintf(&b, "File: big.txt (lines 1-%d (%d lines))", len(lines), len(lines))
		for i, l := range lines {
			num := strconv.Itoa(i + 1)
			b.WriteString("\n L")
			b.WriteString(strings.Repeat("0", w-len(num)))
			b.WriteString(num)
			b.WriteString(" | ")
			b.WriteString(l)
		}
		text = b.String()
		structured = fmt.Sprintf(`{"path":"big.txt","content":%s,"start_line":1,"end_line":%d}`, quoteJSON(body), len(lines))
		args = `{"path": "big.txt"}`
	case "execute_command":
		text = fmt.Sprintf("Command cat big.txt exited with status 0.\n=== STDOUT (%d lines) ===\n%s", len(lines)+1, body)
		structured = `["Completed",{"command":"cat big.txt","status":0,"stdout":` + quoteJSON(body) + `,"stderr":"","max_output_lines":100}]`
		args = `{"command": "cat big.txt"}`
	}
	call := `{"id":"toolu_big","function":{"name":"` + tool + `","arguments":` + string(marshal(args)) + `},"type":"function"}`
	qt := quoteJSON(text)
	result := qt
	if dialect == "legacy" {
		result = structured
	}
	desc := `"msg":"PostToolCall","tool_call":` + call + `,"name":"` + tool + `","result":` + result + `,"text":` + qt
	data := `{"id":"e-big","created":1774598400003,"desc":{` + desc + `}}`
	if dialect == "docs" {
		data = `{"id":7,` + desc + `}`
	}
	return events.Frame{Name: "maria", Data: []byte(data)}, text
}

// inMemory reports whether sub lies inside s's memory (a slice, not a copy).
func inMemory(s, sub string) bool {
	if len(sub) == 0 {
		return true
	}
	p, q := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return q >= p && q+uintptr(len(sub)) <= p+uintptr(len(s))
}

// TestLargeOutputsKeptWhole: tool outputs larger than anything perch used
// to keep come out of the decoder byte for byte in every dialect, and their
// details are slices of the text rather than copies.
func TestLargeOutputsKeptWhole(t *testing.T) {
	body := randomText(5<<20, 1) // more than the 4 MiB perch used to keep
	for _, dialect := range []string{"head", "legacy", "docs"} {
		for _, tool := range []string{"read_file", "execute_command"} {
			t.Run(dialect+"/"+tool, func(t *testing.T) {
				f, text := bigPost(dialect, tool, body)
				ev := Decode(f)
				if ev.Kind != events.KindPostToolCall {
					t.Fatalf("kind %v: %s", ev.Kind, ev.Notice)
				}
				r := ev.Tool.Result
				if r.Text != text {
					t.Fatalf("text differs: %d bytes, want %d", len(r.Text), len(text))
				}
				switch tool {
				case "read_file":
					if r.File == nil || r.File.Plain() != strings.TrimSuffix(body, "\n") {
						t.Fatalf("file content differs")
					}
					if !r.File.Numbered || !inMemory(r.Text, r.File.Content) {
						t.Errorf("file content is a copy, not a slice of the text")
					}
				case "execute_command":
					if r.Command == nil || strings.TrimSuffix(r.Command.Stdout, "\n") != strings.TrimSuffix(body, "\n") {
						t.Fatalf("stdout differs")
					}
					if !inMemory(r.Text, r.Command.Stdout) {
						t.Errorf("stdout is a copy, not a slice of the text")
					}
				}
			})
		}
	}
}

// TestLargeTextsKeptWhole: message texts, arguments and queued messages are
// not cut either.
func TestLargeTextsKeptWhole(t *testing.T) {
	big := randomText(5<<20, 2)
	s := string(marshal(big))
	ev := Decode(env(`{"msg":"AssistantMessage","content":[{"type":"text","text":` + s + `}],"tool_calls":[{"id":"c1","function":{"name":"write_to_file","arguments":` + string(marshal(string(marshal(map[string]string{"path": "a", "content": big})))) + `}}]}`))
	if ev.Text != big {
		t.Errorf("assistant text cut: %d of %d bytes", len(ev.Text), len(big))
	}
	var args struct{ Content string }
	if len(ev.ToolCalls) != 1 || json.Unmarshal(ev.ToolCalls[0].Args, &args) != nil || args.Content != big {
		t.Errorf("arguments cut")
	}
	ev = Decode(events.Frame{Name: "maria.queued_messages.synchronized", Data: []byte(`[{"id":"m1","message":{"role":"user","content":` + s + `}}]`)})
	if len(ev.Queue) != 1 || ev.Queue[0].Text != big {
		t.Errorf("queued text cut")
	}
	ev = Decode(flat(`{"id":3,"msg":"MessageAdded","message":{"role":"tool","tool_call_id":"c","name":"read_file","content":` + s + `}}`))
	if ev.Kind != events.KindToolMessage || ev.Tool.Result.Text != big {
		t.Errorf("docs tool message cut")
	}
}

// TestDecodeMemory: decoding a 30 MB output allocates about one copy of it,
// and keeps nothing of the frame. At HEAD the output is in the frame twice
// (result and text); a decoder that copied both raw values, or unquoted
// into a buffer and then into a string, would allocate three to five times
// the output.
func TestDecodeMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("30 MB: slow under -race or -short")
	}
	body := randomText(30<<20, 3)
	cases := []struct {
		dialect, tool string
		allocs        float64 // bytes allocated while decoding, per byte of output
	}{
		{"head", "execute_command", 1.1},
		{"head", "read_file", 1.1},
		{"legacy", "read_file", 1.1},
		{"legacy", "execute_command", 2.1}, // stdout is decoded, then found in the text
	}
	for _, c := range cases {
		t.Run(c.dialect+"/"+c.tool, func(t *testing.T) {
			f, text := bigPost(c.dialect, c.tool, body)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ev := Decode(f)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			frameLen := len(f.Data)
			f.Data = nil
			runtime.GC()
			var kept runtime.MemStats
			runtime.ReadMemStats(&kept)
			if ev.Tool == nil || ev.Tool.Result.Text != text {
				t.Fatal("output not kept whole")
			}
			if limit := c.allocs*float64(len(text)) + 1<<20; float64(alloc) > limit {
				t.Errorf("decoding allocated %d MB for a %d MB output (limit %.0f MB)", alloc>>20, len(text)>>20, limit/(1<<20))
			}
			// What stays is the text (and what it shares), not the frame.
			want := int64(before.HeapInuse) - int64(frameLen) + int64(len(text))*115/100 + 1<<20
			if int64(kept.HeapInuse) > want {
				t.Errorf("the decoded event holds %d MB more than its %d MB text", (int64(kept.HeapInuse)-want)>>20, len(text)>>20)
			}
			runtime.KeepAlive(ev)
		})
	}
}
