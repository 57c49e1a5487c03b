package anthropic

import (
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
)

// checkEvents fails when a string of evs is not valid UTF-8, and applies
// them to a timeline (which must not panic).
func checkEvents(t testing.TB, evs []events.Event) {
	t.Helper()
	bad := func(what, s string) {
		if !utf8.ValidString(s) {
			t.Fatalf("%s is not valid UTF-8: %q", what, s)
		}
	}
	call := func(c events.ToolCall) {
		bad("call id", c.ID)
		bad("call name", c.Name)
		bad("call args", string(c.Args))
		bad("call raw args", c.ArgsRaw)
		bad("call args error", c.ArgsErr)
	}
	tl := events.NewTimeline()
	for _, ev := range evs {
		bad("id", ev.ID)
		bad("text", ev.Text)
		bad("thinking", ev.Thinking)
		bad("notice", ev.Notice)
		for _, c := range ev.ToolCalls {
			call(c)
		}
		if ev.Tool != nil {
			call(ev.Tool.Call)
			bad("tool name", ev.Tool.Name)
			if r := ev.Tool.Result; r != nil {
				bad("result", r.Text)
				bad("result error", r.ErrorText)
			}
		}
		for _, td := range ev.Todos {
			bad("todo", td.Content)
		}
		tl.Apply(ev)
	}
	tl.EndOfInput()
}
