package render

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// On wide terminals a message is laid out at the prose column, once for
// every width past it; a tool's output keeps the whole width.
func TestProseKeepsAReadableWidth(t *testing.T) {
	r := newTestRenderer(styles.Dark)
	msg := &events.Item{Kind: events.ItemAssistant, Text: strings.Repeat("a readable column of prose ", 20)}
	wide := r.Item(msg, Options{Width: 200})
	for _, l := range wide {
		if w := ansi.StringWidth(l); w > MaxTextWidth+gutterWidth {
			t.Fatalf("a line of %d cells at width 200: %q", w, ansi.Strip(l))
		}
	}
	before := r.Stats()
	wider := r.Item(msg, Options{Width: 300})
	if s := r.Stats(); s.Hits != before.Hits+1 || s.Misses != before.Misses {
		t.Errorf("width 300 laid the message out again (hits %d→%d, misses %d→%d)", before.Hits, s.Hits, before.Misses, s.Misses)
	}
	if strings.Join(wider, "\n") != strings.Join(wide, "\n") {
		t.Error("the message differs between widths 200 and 300")
	}

	long := strings.Repeat("x", 180)
	tool := &events.Item{Kind: events.ItemTool, Tool: &events.ToolItem{Name: "execute_command", Status: events.ToolOK,
		Result: &events.ToolResult{Text: long}}}
	if out := strings.Join(r.Item(tool, Options{Width: 200, Expanded: true}), "\n"); !strings.Contains(out, long) {
		t.Errorf("the tool's 180-cell line was wrapped at width 200:\n%s", ansi.Strip(out))
	}
}
