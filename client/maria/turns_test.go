package maria

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// An assistant turn is never lost: whatever the dialect, the shape of
// usage and the shape of content, every reply is one assistant item that
// carries its tool calls, followed by its tool items.

// turnEncoding writes one assistant reply (content, tool calls, usage) as
// the frames a dialect sends for it, then each call's Pre/PostToolCall.
type turnEncoding struct {
	name string
	// frames returns the reply's frames; n numbers events so ids stay
	// unique, calls are JSON tool-call objects.
	frames func(n *int, content, usage string, calls []string, ids []string) []events.Frame
}

func turnCall(id, path string) string {
	return `{"id":"` + id + `","function":{"name":"read_file","arguments":"{\"path\": \"` + path + `\"}"},"type":"function"}`
}

func headFrame(n *int, desc string) events.Frame {
	*n++
	return events.Frame{Name: "maria", Data: []byte(fmt.Sprintf(`{"id":"e%d","created":%d,"desc":%s}`, *n, 1774598400000+*n, desc))}
}

func docsFrame(n *int, body string) events.Frame {
	*n++
	return events.Frame{Name: "maria", Data: []byte(fmt.Sprintf(`{"id":%d,`, *n) + body[1:])}
}

// field renders `,"key":value`, or nothing for an absent value.
func field(key, value string) string {
	if value == absent {
		return ""
	}
	return `,"` + key + `":` + value
}

const absent = "<absent>"

func headTools(n *int, calls []string, legacy bool) []events.Frame {
	var out []events.Frame
	for _, c := range calls {
		out = append(out, headFrame(n, `{"msg":"PreToolCall","tool_call":`+c+`,"name":"read_file","args":{"path":"f"}}`))
		result := `"File: f (lines 1-1 (1 lines))\n L1 | x"`
		if legacy {
			result = `{"path":"f","content":"x","start_line":1,"end_line":1}`
		}
		out = append(out, headFrame(n, `{"msg":"PostToolCall","tool_call":`+c+`,"name":"read_file","result":`+result+`,"text":"File: f (lines 1-1 (1 lines))\n L1 | x"}`))
	}
	return out
}

func docsTools(n *int, calls, ids []string, toolMessages bool) []events.Frame {
	var out []events.Frame
	for i, c := range calls {
		out = append(out, docsFrame(n, `{"msg":"PreToolCall","tool_call":`+c+`,"name":"read_file","args":{"path":"f"}}`))
		out = append(out, docsFrame(n, `{"msg":"PostToolCall","tool_call":`+c+`,"name":"read_file","result":"x","text":"x"}`))
		if toolMessages {
			out = append(out, docsFrame(n, `{"msg":"MessageAdded","message":{"role":"tool","content":[{"type":"text","text":"x"}],"tool_call_id":"`+ids[i]+`"}}`))
		}
	}
	return out
}

func docsMessageAdded(n *int, content string, calls []string) events.Frame {
	return docsFrame(n, `{"msg":"MessageAdded","message":{"role":"assistant"`+field("content", content)+`,"tool_calls":[`+strings.Join(calls, ",")+`]}}`)
}

func docsRequestCompleted(n *int, content, usage string, calls []string) events.Frame {
	return docsFrame(n, `{"msg":"RequestCompleted"`+field("usage", usage)+`,"message":{`+strings.TrimPrefix(field("content", content), ",")+
		map[bool]string{true: "", false: ","}[content == absent]+`"role":"assistant","tool_calls":[`+strings.Join(calls, ",")+`]}}`)
}

var turnEncodings = []turnEncoding{
	{"head", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{headFrame(n, `{"msg":"AssistantMessage","tool_calls":[`+strings.Join(calls, ",")+`]`+field("content", content)+field("usage", usage)+`}`)},
			headTools(n, calls, false)...)
	}},
	{"legacy", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{headFrame(n, `{"msg":"AssistantMessage","tool_calls":[`+strings.Join(calls, ",")+`]`+field("content", content)+field("usage", usage)+`}`)},
			headTools(n, calls, true)...)
	}},
	{"docs RequestCompleted", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{docsRequestCompleted(n, content, usage, calls)}, docsTools(n, calls, ids, false)...)
	}},
	{"docs MessageAdded", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{docsMessageAdded(n, content, calls)}, docsTools(n, calls, ids, true)...)
	}},
	{"docs MessageAdded+RequestCompleted", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{docsMessageAdded(n, content, calls), docsRequestCompleted(n, content, usage, calls)},
			docsTools(n, calls, ids, true)...)
	}},
	{"docs RequestCompleted+MessageAdded", func(n *int, content, usage string, calls, ids []string) []events.Frame {
		return append([]events.Frame{docsRequestCompleted(n, content, usage, calls), docsMessageAdded(n, content, calls)},
			docsTools(n, calls, ids, true)...)
	}},
}

var usageShapes = []struct{ name, json string }{
	{"object", `{"completion_tokens":7,"prompt_tokens":100,"total_tokens":107}`},
	{"array", `[{"completion_tokens":7,"prompt_tokens":100,"total_tokens":107}]`},
	{"empty array", `[]`},
	{"null", `null`},
	{"absent", absent},
}

var contentShapes = []struct{ name, json, text string }{
	{"string", `"Let me read it."`, "Let me read it."},
	{"empty string", `""`, ""},
	{"parts", `[{"type":"text","text":"Let me read it."}]`, "Let me read it."},
	{"empty parts", `[]`, ""},
	{"empty text part", `[{"type":"text","text":""}]`, ""},
	{"null", `null`, ""},
	{"absent", absent, ""},
}

// checkTurns asserts the items are, in order, one assistant item per turn
// (with that turn's call ids) followed by that turn's tool items, finished.
func checkTurns(t *testing.T, tl *pipe, texts []string, turns [][]string) {
	t.Helper()
	var want, got []string
	for i, ids := range turns {
		want = append(want, fmt.Sprintf("assistant%q%v", texts[i], ids))
		for _, id := range ids {
			want = append(want, "tool:"+id+":ok")
		}
	}
	for _, it := range tl.Items() {
		switch it.Kind {
		case events.ItemAssistant:
			var ids []string
			for _, c := range it.ToolCalls {
				ids = append(ids, c.ID)
			}
			got = append(got, fmt.Sprintf("assistant%q%v", it.Text, ids))
		case events.ItemTool:
			got = append(got, "tool:"+it.Tool.CallID+":"+it.Tool.Status.String())
		default:
			got = append(got, it.Kind.String()+":"+it.Text)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEveryTurnIsAnItem is the full cross product dialect × usage shape ×
// content shape, for one turn and for two consecutive turns of the same
// shape (distinct calls): each turn is exactly one assistant item with its
// calls, and each call one tool item.
func TestEveryTurnIsAnItem(t *testing.T) {
	for _, enc := range turnEncodings {
		for _, u := range usageShapes {
			for _, c := range contentShapes {
				t.Run(enc.name+"/usage "+u.name+"/content "+c.name, func(t *testing.T) {
					n := 0
					var frames []events.Frame
					frames = append(frames, enc.frames(&n, c.json, u.json, []string{turnCall("c1", "a")}, []string{"c1"})...)
					tl := newPipe()
					for _, f := range frames {
						tl.feed(f)
					}
					checkTurns(t, tl, []string{c.text}, [][]string{{"c1"}})

					// Two consecutive turns of the same shape, then a
					// third with two calls.
					frames = append(frames, enc.frames(&n, c.json, u.json, []string{turnCall("c2", "b")}, []string{"c2"})...)
					frames = append(frames, enc.frames(&n, c.json, u.json, []string{turnCall("c3", "c"), turnCall("c4", "d")}, []string{"c3", "c4"})...)
					tl = newPipe()
					for _, f := range frames {
						tl.feed(f)
					}
					checkTurns(t, tl, []string{c.text, c.text, c.text}, [][]string{{"c1"}, {"c2"}, {"c3", "c4"}})

					// A reconnect replays it all: nothing changes.
					v := tl.Version()
					tl.Reconnected()
					for _, f := range frames {
						tl.feed(f)
					}
					if tl.Version() != v {
						t.Errorf("replay changed the timeline")
					}
				})
			}
		}
	}
}

// TestDocsDoubleReportOnce: the docs dialect reports a reply twice
// (MessageAdded and RequestCompleted, either order); the pair is one item,
// with the usage, however empty its text.
func TestDocsDoubleReportOnce(t *testing.T) {
	for _, c := range contentShapes {
		for _, order := range []string{"MA,RC", "RC,MA"} {
			t.Run(c.name+"/"+order, func(t *testing.T) {
				n := 0
				calls := []string{turnCall("c1", "a")}
				ma := docsMessageAdded(&n, c.json, calls)
				rc := docsRequestCompleted(&n, c.json, `[{"prompt_tokens":10,"completion_tokens":2}]`, calls)
				pair := []events.Frame{ma, rc}
				if order == "RC,MA" {
					pair = []events.Frame{rc, ma}
				}
				tl := newPipe()
				for _, f := range pair {
					tl.feed(f)
				}
				if kinds(tl) != "assistant,tool:running" {
					t.Fatalf("items %s", kinds(tl))
				}
				a := tl.Items()[0]
				if a.Usage == nil || a.Usage.InputTokens != 10 || len(a.ToolCalls) != 1 {
					t.Errorf("merged item %+v", a)
				}
				if m := tl.Meta(); m.Totals.InputTokens != 10 {
					t.Errorf("usage counted %d times", m.Totals.InputTokens/10)
				}
			})
		}
	}
	// Replies without tool calls and the same text, with a user turn
	// between them, are two replies too.
	tl := newPipe()
	n := 0
	for _, f := range []events.Frame{
		docsMessageAdded(&n, `"ok"`, nil), docsRequestCompleted(&n, `"ok"`, absent, nil),
		docsFrame(&n, `{"msg":"MessageAdded","message":{"role":"user","content":"again"}}`),
		docsMessageAdded(&n, `"ok"`, nil), docsRequestCompleted(&n, `"ok"`, absent, nil),
	} {
		tl.feed(f)
	}
	if kinds(tl) != "assistant,user,assistant" {
		t.Fatalf("items %s", kinds(tl))
	}
}
