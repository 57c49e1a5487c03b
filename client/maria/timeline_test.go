package maria

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// feed applies HEAD-encoded desc bodies with ids e1, e2, …
func feed(tl *pipe, descs ...string) {
	for i, d := range descs {
		tl.feed(events.Frame{Name: "maria", Data: []byte(fmt.Sprintf(`{"id":"e%d","created":%d,"desc":%s}`, i+1, 1000+i, d))})
	}
}

const (
	callLs   = `{"id":"c1","function":{"name":"execute_command","arguments":"{\"command\": \"ls\"}"},"type":"function"}`
	asstLs   = `{"msg":"AssistantMessage","tool_calls":[` + callLs + `],"content":"Listing.","usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":80},"total_tokens":105}}`
	preLs    = `{"msg":"PreToolCall","tool_call":` + callLs + `,"name":"execute_command","args":{"command":"ls"}}`
	postLsOK = `{"msg":"PostToolCall","tool_call":` + callLs + `,"name":"execute_command","result":"Command ls exited with status 0.","text":"Command ls exited with status 0."}`
)

func kinds(tl interface{ Items() []*events.Item }) string {
	var b []string
	for _, it := range tl.Items() {
		s := it.Kind.String()
		if it.Tool != nil {
			s += ":" + it.Tool.Status.String()
		}
		b = append(b, s)
	}
	return strings.Join(b, ",")
}

func TestTimelineFlows(t *testing.T) {
	cases := []struct {
		name      string
		descs     []string
		items     string
		status    events.RunStatus
		checkMore func(t *testing.T, tl *pipe)
	}{
		{"pre then post replaces by call id", []string{`{"msg":"PreConversation"}`, `{"msg":"UserMessage","content":"hi"}`, asstLs, preLs, postLsOK, `{"msg":"PostConversation"}`},
			"user,assistant,tool:ok", events.RunIdle, func(t *testing.T, tl *pipe) {
				m := tl.Meta()
				if m.Totals.InputTokens != 100 || m.Totals.CachedTokens != 80 || m.Totals.OutputTokens != 5 {
					t.Errorf("totals %+v", m.Totals)
				}
			}},
		{"running while generating", []string{`{"msg":"PreConversation"}`, asstLs, preLs},
			"assistant,tool:running", events.RunGenerating, nil},
		{"result without a call is kept", []string{postLsOK}, "tool:ok", events.RunIdle, nil},
		{"cancelled run cancels running tools", []string{`{"msg":"PreConversation"}`, asstLs, preLs, `{"msg":"Cancelled"}`},
			"assistant,tool:cancelled,notice", events.RunIdle, nil},
		{"ended run leaves unknown", []string{`{"msg":"PreConversation"}`, asstLs, preLs, `{"msg":"PostConversation"}`},
			"assistant,tool:unknown", events.RunIdle, nil},
		{"failed run: notice with error", []string{`{"msg":"PreConversation"}`, `{"msg":"Failed","error":["HttpError",{"code":401,"body":"nope"}]}`},
			"notice", events.RunIdle, func(t *testing.T, tl *pipe) {
				it := tl.Items()[0]
				if it.Level != events.LevelError || !strings.Contains(it.Text, "HttpError 401: nope") {
					t.Errorf("notice %+v", it)
				}
			}},
		{"tool error status", []string{asstLs, `{"msg":"PostToolCall","tool_call":` + callLs + `,"name":"execute_command","error":["ToolFailure","bad"],"text":"bad"}`},
			"assistant,tool:error", events.RunIdle, nil},
		{"unknown variant is a notice", []string{`{"msg":"Teleported"}`}, "notice", events.RunIdle, nil},
		{"noise is metadata", []string{`{"msg":"ModelLoaded","name":"m1"}`, `{"msg":"SystemPromptSet","prompt":"abc"}`, `{"msg":"ToolAdded","tool":{"name":"read_file"}}`,
			`{"msg":"ToolAdded","tool":{"name":"todo"}}`, `{"msg":"TokenCounted","token_count":9211}`, `{"msg":"ContextPruned","origin_token_count":9211,"pruned_token_count":9000}`},
			"", events.RunIdle, func(t *testing.T, tl *pipe) {
				m := tl.Meta()
				if m.Model != "m1" || m.SystemPromptLen != 3 || len(m.Tools) != 2 || m.ContextTokens != 9000 {
					t.Errorf("meta %+v", m)
				}
			}},
		{"pruned marks the tool", []string{asstLs, postLsOK, `{"msg":"Pruned","id":"e2"}`}, "assistant,tool:ok", events.RunIdle, func(t *testing.T, tl *pipe) {
			if !tl.Items()[1].Tool.Pruned || tl.Meta().PrunedCount != 1 {
				t.Error("not pruned")
			}
		}},
		{"todo from HEAD text", []string{`{"msg":"PostToolCall","tool_call":{"id":"t1","function":{"name":"todo","arguments":"{\"action\":\"read\"}"}},"name":"todo","result":"=== Current Session Todo List ===\n\n1. ⏳ 🔴 [a1] A","text":"=== Current Session Todo List ===\n\n1. ⏳ 🔴 [a1] A"}`},
			"tool:ok", events.RunIdle, func(t *testing.T, tl *pipe) {
				if len(tl.Todos()) != 1 || tl.Todos()[0].Content != "A" {
					t.Errorf("todos %+v", tl.Todos())
				}
			}},
		{"unknown tool gets no pre/post: becomes unknown at run end", []string{`{"msg":"PreConversation"}`,
			`{"msg":"AssistantMessage","tool_calls":[{"id":"z","function":{"name":"teleport","arguments":""}}],"content":""}`, `{"msg":"PostConversation"}`},
			"assistant,tool:unknown", events.RunIdle, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := newPipe()
			feed(tl, c.descs...)
			if got := kinds(tl); got != c.items {
				t.Errorf("items %q, want %q", got, c.items)
			}
			if tl.Status() != c.status {
				t.Errorf("status %v, want %v", tl.Status(), c.status)
			}
			if c.checkMore != nil {
				c.checkMore(t, tl)
			}
		})
	}
}

func TestTimelineDedupe(t *testing.T) {
	tl := newPipe()
	descs := []string{`{"msg":"UserMessage","content":"hi"}`, asstLs, preLs, postLsOK}
	feed(tl, descs...)
	v := tl.Version()
	feed(tl, descs...) // a reconnect replays everything
	if kinds(tl) != "user,assistant,tool:ok" || tl.Version() != v {
		t.Fatalf("replay changed the timeline: %s", kinds(tl))
	}
	// id-less events (docs dialect without ids) are matched by position.
	tl = newPipe()
	frames := []events.Frame{flat(`{"msg":"MessageAdded","message":{"role":"user","content":"yes"}}`), flat(`{"msg":"MessageAdded","message":{"role":"user","content":"yes"}}`)}
	for round := 0; round < 3; round++ {
		tl.Reconnected()
		for _, f := range frames {
			tl.feed(f)
		}
	}
	if kinds(tl) != "user,user" {
		t.Fatalf("id-less replay: %s", kinds(tl))
	}
}

func TestTimelineQueue(t *testing.T) {
	tl := newPipe()
	// Our POST reply arrives before the stream reports the queued message.
	tl.NoteSent("m2", "Also add a CHANGELOG", true)
	if q := tl.Queue(); len(q) != 1 || q[0].Text != "Also add a CHANGELOG" {
		t.Fatalf("queue after NoteSent %+v", q)
	}
	feed(tl, `{"msg":"MessageQueued","message":{"id":"m2"}}`)
	if len(tl.Queue()) != 1 {
		t.Fatalf("duplicate queue entry %+v", tl.Queue())
	}
	tl.feed(events.Frame{Name: "maria.queued_messages.synchronized", Data: []byte(`[{"id":"m2","message":{"role":"user","content":"Also add a CHANGELOG"}},{"id":"m3","message":{"role":"user","content":"third"}}]`)})
	if len(tl.Queue()) != 2 {
		t.Fatalf("snapshot %+v", tl.Queue())
	}
	tl.feed(events.Frame{Name: "maria", Data: []byte(`{"id":"u1","desc":{"msg":"MessageUnqueued","message":{"id":"m2"}}}`)})
	if q := tl.Queue(); len(q) != 1 || q[0].ID != "m3" {
		t.Fatalf("after unqueue %+v", q)
	}
	// A late POST reply for a message already consumed must not resurrect it.
	tl.NoteSent("m2", "Also add a CHANGELOG", true)
	if len(tl.Queue()) != 1 {
		t.Fatalf("late reply resurrected %+v", tl.Queue())
	}
	// Cancel returns the pending messages: they leave the queue.
	feed(tl, `{"msg":"PreConversation"}`, asstLs, preLs)
	tl.NoteCancelled([]events.QueuedMessage{{ID: "m3", Text: "third"}})
	if len(tl.Queue()) != 0 || tl.Status() != events.RunIdle || tl.Items()[1].Tool.Status != events.ToolCancelled {
		t.Fatalf("after cancel: queue %+v status %v %s", tl.Queue(), tl.Status(), kinds(tl))
	}
	// The MessageQueued placeholder takes its text from our own send.
	tl = newPipe()
	tl.NoteSent("m9", "typed text", false)
	feed(tl, `{"msg":"MessageQueued","message":{"id":"m9"}}`)
	if q := tl.Queue(); len(q) != 1 || q[0].Text != "typed text" {
		t.Fatalf("placeholder text %+v", q)
	}
}

func TestTimelineStoppedTask(t *testing.T) {
	tl := newPipe()
	tl.SetTask(events.Task{ID: "t", Status: events.StatusStopped})
	// A stopped replay: a run that never ended on disk.
	feed(tl, `{"msg":"PreConversation"}`, `{"msg":"UserMessage","content":"hi"}`, asstLs, preLs)
	if tl.Status() != events.RunStopped || kinds(tl) != "user,assistant,tool:unknown" {
		t.Fatalf("stopped replay: %v %s", tl.Status(), kinds(tl))
	}
	// Resume: the daemon appends a fresh snapshot and ModelLoaded.
	tl.feed(events.Frame{Name: "maria", Data: []byte(`{"id":"r1","desc":{"msg":"ModelLoaded","name":"m"}}`)})
	if tl.Status() != events.RunIdle {
		t.Fatalf("after resume %v", tl.Status())
	}
	tl.SetTask(events.Task{Status: events.StatusGenerating})
	if tl.Status() != events.RunGenerating {
		t.Fatal("task changed ignored")
	}
}

func TestTimelineDocsDoubleReport(t *testing.T) {
	tl := newPipe()
	for _, f := range []events.Frame{
		flat(`{"id":1,"msg":"MessageAdded","message":{"role":"user","content":"hi"}}`),
		flat(`{"id":2,"msg":"MessageAdded","message":{"role":"assistant","content":"Let me look.","tool_calls":[` + callLs + `]}}`),
		flat(`{"id":3,"msg":"RequestCompleted","usage":[{"prompt_tokens":10,"completion_tokens":1}],"message":{"role":"assistant","content":"Let me look.","tool_calls":[` + callLs + `]}}`),
		flat(`{"id":4,"msg":"PostToolCall","tool_call":` + callLs + `,"name":"execute_command","result":"out","text":"out"}`),
		flat(`{"id":5,"msg":"MessageAdded","message":{"role":"tool","content":[{"type":"text","text":"out"}],"tool_call_id":"c1"}}`),
	} {
		tl.feed(f)
	}
	if kinds(tl) != "user,assistant,tool:ok" || tl.Items()[1].Usage == nil {
		t.Fatalf("docs double report: %s", kinds(tl))
	}
}

func TestTimelineBadDataIsANotice(t *testing.T) {
	tl := newPipe()
	tl.feed(flat(`{"desc":{"msg":"UserMessage","content":"x"`))
	tl.feed(flat(`{"id":"a","desc":{"msg":"UserMessage","content":"still here"}}`))
	if kinds(tl) != "notice,user" || tl.Items()[0].Level != events.LevelWarning {
		t.Fatalf("%s", kinds(tl))
	}
}

// pipe is maria's decoder feeding a timeline, as a task stream does.
type pipe struct {
	d *Decoder
	*events.Timeline
}

func newPipe() *pipe { return &pipe{NewDecoder(), events.NewTimeline()} }

// feed decodes one frame and applies what comes of it.
func (p *pipe) feed(f events.Frame) bool {
	changed := false
	for _, ev := range p.d.Decode(f) {
		changed = p.Apply(ev) || changed
	}
	return changed
}

// Reconnected: a new connection replays the log.
func (p *pipe) Reconnected() { p.d.Reconnected() }

// Seen reports whether the decoder already passed an event id on.
func (p *pipe) Seen(id string) bool { return p.d.seen.Has(id) }
