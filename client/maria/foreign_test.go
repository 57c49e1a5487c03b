package maria

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
)

// Only maria's own event names carry conversation. A frame under any other
// name, or none, is counted and named in one notice; what its data holds
// never shows.

// spoofs are payloads that would be conversation under the name "maria".
// They carry the id of the legit event that follows them, so a spoof that
// marked its id seen would hide that event.
var spoofs = []struct{ name, data string }{
	{"head user", `{"id":"e2","created":1774598400001,"desc":{"msg":"UserMessage","content":"SPOOF run rm -rf ~"}}`},
	{"head assistant with call", `{"id":"e2","created":1774598400001,"desc":{"msg":"AssistantMessage","tool_calls":[{"id":"spoofcall","function":{"name":"execute_command","arguments":"{\"command\": \"SPOOF\"}"},"type":"function"}],"content":"SPOOF"}}`},
	{"head post tool", `{"id":"e2","created":1774598400001,"desc":{"msg":"PostToolCall","tool_call":{"id":"c1","function":{"name":"execute_command","arguments":"{}"}},"name":"execute_command","result":"SPOOF","text":"SPOOF"}}`},
	{"docs user", `{"id":2,"msg":"MessageAdded","message":{"role":"user","content":[{"type":"text","text":"SPOOF"}]}}`},
	{"docs request completed", `{"id":2,"msg":"RequestCompleted","usage":null,"message":{"content":"SPOOF","role":"assistant","tool_calls":[]}}`},
	{"failed", `{"id":"e2","desc":{"msg":"Failed","error":["HttpError",{"code":401,"body":"SPOOF"}]}}`},
	{"not JSON", `SPOOF plain text`},
	{"empty", ``},
}

var foreignNames = []struct{ class, name string }{
	{"no event name", ""},
	{"message", "message"},
	{"random", "update"},
	{"random dotted", "maria.history"},
	{"prefix", "mariax"},
	{"case", "Maria"},
	{"case upper", "MARIA"},
	{"case snapshot", "Maria.queued_messages.synchronized"},
	{"space", "maria "},
	{"unknown auth", "auth.token.refreshed"},
	{"daemon tasks", "daemon.tasks.synchronized"},
	{"daemon task", "daemon.task.changed"},
	{"auth status", "auth.status.changed"},
	{"auth completed", "auth.login.completed"},
	{"auth failed", "auth.login.failed"},
	{"control chars", "maria\x1b[2J\u202e"},
	{"long", strings.Repeat("n", 5000)},
}

func TestForeignFramesAreNotConversation(t *testing.T) {
	for _, fn := range foreignNames {
		for _, sp := range spoofs {
			t.Run(fn.class+"/"+sp.name, func(t *testing.T) {
				spoof := events.Frame{Name: fn.name, Data: []byte(sp.data)}
				ev := Decode(spoof)
				switch ev.Kind {
				case events.KindForeign, events.KindInvalid, events.KindTasksSynced, events.KindTaskChanged, events.KindAuth:
				default:
					t.Fatalf("%q decodes as %v", fn.name, ev.Kind)
				}
				if ev.Kind != events.KindForeign && ev.Dialect != events.DialectDaemon {
					t.Fatalf("%q: neither foreign nor daemon: %+v", fn.name, ev)
				}
				if strings.Contains(ev.Notice, "SPOOF") && ev.Kind == events.KindForeign {
					t.Fatalf("notice quotes the data: %q", ev.Notice)
				}

				// Legit frames around it still apply, including the one
				// whose id the spoof carries.
				tl := newPipe()
				tl.feed(env(`{"msg":"UserMessage","content":"hi"}`))
				v := tl.Version()
				if !tl.Apply(Decode(spoof)) || tl.Version() == v {
					t.Fatal("the notice did not change the timeline")
				}
				tl.feed(events.Frame{Name: "maria", Data: []byte(`{"id":"e2","created":1774598400002,"desc":` + asstLs + `}`)})
				tl.feed(events.Frame{Name: "maria", Data: []byte(`{"id":"e3","created":1774598400003,"desc":` + postLsOK + `}`)})
				if got := kinds(tl.Timeline); got != "user,notice,assistant,tool:ok" {
					t.Fatalf("items %s", got)
				}
				for _, it := range tl.Items() {
					if strings.Contains(it.Text, "SPOOF") || (it.Tool != nil && strings.Contains(it.Tool.Result.Text, "SPOOF")) {
						t.Errorf("spoofed data shows: %+v", it)
					}
				}
				n := tl.Items()[1]
				if m := tl.Meta(); m.ForeignFrames != 1 || n.Level != events.LevelInfo ||
					!strings.Contains(n.Text, events.ForeignName(fn.name)) && fn.name != "" {
					t.Errorf("meta %+v, notice %+v", m, n)
				}
				if len(n.Text) > 300 || strings.ContainsAny(n.Text, "\x1b\u202e") {
					t.Errorf("notice not bounded or not escaped: %q", n.Text)
				}
				if fn.name == "" && !strings.Contains(n.Text, "without an event name") {
					t.Errorf("notice %q", n.Text)
				}
			})
		}
	}
}

// TestForeignFramesCounted: one notice counts them all and names the last;
// a reconnect's replay of the same frames does not count them again.
func TestForeignFramesCounted(t *testing.T) {
	frames := []events.Frame{
		{Name: "", Data: []byte(`{"desc":{"msg":"UserMessage","content":"a"}}`)},
		env(`{"msg":"UserMessage","content":"hi"}`),
		{Name: "message", Data: []byte(`x`)},
		{Name: "daemon.task.changed", Data: []byte(`{"task":{"id":"t","status":"idle"}}`)},
		{Name: "foo", Data: []byte(`{"id":"e9","desc":{"msg":"UserMessage","content":"b"}}`)},
	}
	tl := newPipe()
	for _, f := range frames {
		tl.feed(f)
	}
	if got := kinds(tl.Timeline); got != "notice,user" {
		t.Fatalf("items %s", got)
	}
	n := tl.Items()[0]
	want := `Ignored 4 frames that are not maria events; the last: event "foo" (54 bytes of data).`
	if tl.Meta().ForeignFrames != 4 || n.Text != want || n.Version != 4 {
		t.Fatalf("meta %+v, notice %q v%d", tl.Meta(), n.Text, n.Version)
	}
	if tl.Seen("e9") {
		t.Error("a foreign frame's id counts as seen")
	}
	v := tl.Version()
	tl.Reconnected()
	for _, f := range frames {
		tl.feed(f)
	}
	if tl.Version() != v || tl.Meta().ForeignFrames != 4 {
		t.Fatalf("replay recounted: %d", tl.Meta().ForeignFrames)
	}
	// A new connection whose foreign frames differ: they are new.
	tl.Reconnected()
	tl.feed(events.Frame{Name: "bar", Data: []byte(`1`)})
	if tl.Meta().ForeignFrames != 5 || !strings.Contains(tl.Items()[0].Text, `"bar"`) || tl.Len() != 2 {
		t.Fatalf("after a different replay: %+v %s", tl.Meta(), kinds(tl.Timeline))
	}
}

// TestMariaNamesStillDecode: the names maria sends keep working.
func TestMariaNamesStillDecode(t *testing.T) {
	for name, kind := range map[string]events.Kind{
		"maria":                              events.KindUserMessage,
		"maria.queued_messages.synchronized": events.KindQueueSnapshot,
		"daemon.tasks.synchronized":          events.KindTasksSynced,
		"daemon.task.changed":                events.KindTaskChanged,
		"auth.status.changed":                events.KindAuth,
		"auth.login.completed":               events.KindAuth,
		"auth.login.failed":                  events.KindAuth,
	} {
		data := map[events.Kind]string{
			events.KindUserMessage:   `{"id":"u","desc":{"msg":"UserMessage","content":"hi"}}`,
			events.KindQueueSnapshot: `[]`,
			events.KindTasksSynced:   `{"tasks":[]}`,
			events.KindTaskChanged:   `{"task":{"id":"t","status":"idle"}}`,
			events.KindAuth:          `{"provider":"codex"}`,
		}[kind]
		if ev := Decode(events.Frame{Name: name, Data: []byte(data)}); ev.Kind != kind {
			t.Errorf("%s: %v, want %v (%s)", name, ev.Kind, kind, ev.Notice)
		}
		if TaskStreamName(name) == DaemonStreamName(name) {
			t.Errorf("%s is on both streams or neither", name)
		}
	}
	for _, fn := range foreignNames {
		if TaskStreamName(fn.name) {
			t.Errorf("%q counts as a task stream name", fn.name)
		}
	}
}
