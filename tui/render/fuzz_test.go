package render

import (
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// FuzzItem feeds arbitrary daemon text through every renderer: it must not
// panic, and lines must fit and be clean.
func FuzzItem(f *testing.F) {
	for _, it := range fixtures() {
		if it.Tool != nil && it.Tool.Result != nil {
			f.Add(it.Tool.Name, it.Tool.Result.Text, 40)
		} else {
			f.Add("", it.Text, 80)
		}
	}
	r := newTestRenderer(styles.Dark)
	f.Fuzz(func(t *testing.T, name, text string, w int) {
		w = w%200 + 1
		if w < 1 {
			w += 200
		}
		items := []*events.Item{
			{Kind: events.ItemUser, Text: text},
			{Kind: events.ItemNotice, Text: text, Level: events.LevelError},
			{Kind: events.ItemTool, Tool: &events.ToolItem{Name: name, Status: events.ToolOK,
				Call: events.ToolCall{ArgsRaw: text}, Result: &events.ToolResult{Text: text}}},
			{Kind: events.ItemTool, Tool: &events.ToolItem{Name: name, Status: events.ToolError,
				Result: &events.ToolResult{IsError: true, ErrorText: text}}},
		}
		if len(text) < 4096 {
			items = append(items, &events.Item{Kind: events.ItemAssistant, Text: text})
		}
		for _, it := range items {
			for _, exp := range []bool{false, true} {
				checkLines(t, name, r.Item(it, Options{Width: w, Expanded: exp}), w)
			}
		}
		_ = PlainText(items[2])
		_ = HighlightLine(text, name, r.st.Search.Match)
	})
}
