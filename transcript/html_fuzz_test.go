package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// FuzzHTMLPage: whatever a session's texts hold, the page holds no
// element that loads or runs something but its own script, links only to
// web and mail addresses, and is written without a panic.
func FuzzHTMLPage(f *testing.F) {
	f.Add(hostile, hostileMD)
	f.Add("<svg onload=alert(1)>", "[x](JaVaScRiPt:alert(1)) <a href='//x'>y</a> ![a](data:image/png;base64,AA)")
	f.Add("\x00\x1b[31m", "```js\n</script><script>alert(1)</script>\n```\n")
	f.Fuzz(func(t *testing.T, text, md string) {
		tl := events.NewTimeline()
		args, _ := json.Marshal(map[string]string{"command": text, "file_path": text, "old_string": text, "new_string": md})
		call := events.ToolCall{ID: "c1", Name: "Edit", Args: args}
		tl.Apply(events.Event{Kind: events.KindUserMessage, ID: "u", Text: text})
		tl.Apply(events.Event{Kind: events.KindAssistantMessage, ID: "a", Text: md, Thinking: text, ToolCalls: []events.ToolCall{call}})
		tl.Apply(events.Event{Kind: events.KindPostToolCall, Tool: &events.ToolEvent{Call: call, Name: "Edit", Result: &events.ToolResult{Text: text + md}}})
		tl.Apply(events.Event{Kind: events.KindNotice, Text: text})
		var buf bytes.Buffer
		if err := writeAll(NewHTMLWriter(&buf, HTMLOptions{Title: text, System: text, Cwd: text}), tl); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, m := range tagRE.FindAllStringSubmatch(page, -1) {
			if m[1] != "meta" && m[0] != "<script>" {
				t.Fatalf("markup from the session: %s", m[0])
			}
		}
		if n := strings.Count(page, "<script"); n != 1 {
			t.Fatalf("%d scripts", n)
		}
		for _, m := range hrefRE.FindAllStringSubmatch(strings.Join(anyTag.FindAllString(page, -1), "\n"), -1) {
			if !safeURL([]byte(m[1])) {
				t.Fatalf("link to %q", m[1])
			}
		}
	})
}
