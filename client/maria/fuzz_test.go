package maria

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// Seeds that reach the classes the decoder must refuse or keep: foreign
// event names (none, message, case, the daemon stream's) carrying maria
// data, and assistant turns without text that carry tool calls.
const (
	seedCall      = `{"id":"c1","function":{"name":"read_file","arguments":"{\"path\": \"a\"}"},"type":"function"}`
	seedSpoof     = `{"id":"e2","desc":{"msg":"UserMessage","content":"spoof"}}`
	seedEmptyTurn = `{"id":"e1","desc":{"msg":"AssistantMessage","tool_calls":[` + seedCall + `],"content":""}}`
	seedDocsTurn  = `{"id":1,"msg":"MessageAdded","message":{"role":"assistant","content":[],"tool_calls":[` + seedCall + `]}}`
	seedDocsRC    = `{"id":2,"msg":"RequestCompleted","usage":[],"message":{"content":"","role":"assistant","tool_calls":[` + seedCall + `]}}`
)

// seedStreams are whole streams for FuzzTimeline: docs double reports of
// empty-text turns, and foreign frames between maria's.
var seedStreams = []string{
	"event: maria\ndata: " + seedDocsTurn + "\n\nevent: maria\ndata: " + seedDocsRC + "\n\n" +
		"event: maria\ndata: " + strings.ReplaceAll(strings.ReplaceAll(seedDocsTurn, `"id":1`, `"id":3`), "c1", "c2") + "\n\n" +
		"event: maria\ndata: " + strings.ReplaceAll(strings.ReplaceAll(seedDocsRC, `"id":2`, `"id":4`), "c1", "c2") + "\n\n",
	"event: maria\ndata: " + seedEmptyTurn + "\n\ndata: " + seedSpoof + "\n\nevent: message\ndata: " + seedSpoof + "\n\n" +
		"event: Maria\ndata: " + seedSpoof + "\n\nevent: daemon.task.changed\ndata: " + seedSpoof + "\n\n" +
		"event: maria\ndata: " + strings.ReplaceAll(seedSpoof, "spoof", "real") + "\n\n",
}

func corpusFrames(f *testing.F) {
	files, _ := filepath.Glob("testdata/streams/*.sse")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		_ = sse.ReadFrames(bytes.NewReader(data), func(fr events.Frame) error {
			f.Add(fr.Name, fr.Data)
			return nil
		})
	}
	f.Add("maria", []byte(`{"id":1,"msg":"MessageAdded","message":{"role":"user","content":[{"text":"x"}]}}`))
	f.Add("maria", []byte(`{"desc":{"msg":"PreToolCall","tool_call":{"function":{"arguments":"\"\\\"{}\\\"\""}}}}`))
	f.Add("daemon.tasks.synchronized", []byte(`{"tasks":[{"id":"t","created":"x"}]}`))
	f.Add("maria.queued_messages.synchronized", []byte(`[{"id":5,"message":null}]`))
	f.Add("maria", []byte("{\"desc\":{\"msg\":\"UserMessage\",\"content\":\"\xff\x1b[2J\"}}"))
	f.Add("maria", []byte(seedEmptyTurn))
	f.Add("maria", []byte(seedDocsTurn))
	f.Add("maria", []byte(seedDocsRC))
	for _, name := range []string{"", "message", "Maria", "maria ", "daemon.task.changed", "auth.login.failed", "x\x1b[2J\u202e"} {
		f.Add(name, []byte(seedSpoof))
	}
}

// FuzzDecode: any frame decodes without panicking, into valid UTF-8 text and
// bounded notices; a name maria does not send never decodes into anything
// but a foreign frame.
func FuzzDecode(f *testing.F) {
	corpusFrames(f)
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ev := Decode(events.Frame{Name: name, Data: data})
		// A live frame's data is borrowed from the stream's buffer
		// (StreamTaskActivity), which is read into again once Decode
		// returns: the event keeps none of it.
		buf := bytes.Clone(data)
		borrowed := Decode(events.Frame{Name: name, Data: buf})
		for i := range buf {
			buf[i] = '#'
		}
		if !reflect.DeepEqual(borrowed, ev) {
			t.Fatalf("the event keeps bytes of its frame:\n%+v\nwant\n%+v", borrowed, ev)
		}
		if (ev.Kind == events.KindInvalid || ev.Kind == events.KindUnknown) && len(ev.Notice) > 1000 {
			t.Fatalf("notice too long: %d", len(ev.Notice))
		}
		if !utf8.ValidString(ev.Notice) {
			t.Fatal("notice not UTF-8")
		}
		if TaskStreamName(name) || DaemonStreamName(name) {
			if ev.Kind == events.KindForeign {
				t.Fatalf("%q is maria's, decoded as foreign", name)
			}
			return
		}
		if ev.Kind != events.KindForeign || ev.ID != "" || ev.Text != "" || ev.Tool != nil || ev.ToolCalls != nil || len(ev.Notice) > 300 {
			t.Fatalf("foreign name %q: %+v", name, ev)
		}
		if len(data) > 300 && strings.Contains(ev.Notice, string(data)) {
			t.Fatal("notice quotes the data")
		}
	})
}

// FuzzTimeline: any sequence of frames (split from one input) reduces
// without panicking, and replaying it adds nothing. The frames picked by
// mask (bit i%64 for frame i) are renamed to name: when that is not a task
// stream name, the timeline must be the one without those frames, plus one
// notice that counts them. And no assistant reply is lost: each applied
// HEAD reply is an item, each docs item holds at most two reports.
func FuzzTimeline(f *testing.F) {
	files, _ := filepath.Glob("testdata/streams/*.sse")
	for i, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data, "", uint64(0))
		f.Add(data, []string{"", "message", "Maria", "daemon.task.changed", "foo"}[i%5], uint64(0x9249249249249249)>>(i%3))
	}
	for _, s := range seedStreams {
		f.Add([]byte(s), "", uint64(0))
		f.Add([]byte(s), "message", uint64(0b1010))
	}
	f.Fuzz(func(t *testing.T, stream []byte, name string, mask uint64) {
		var frames, kept []events.Frame
		_ = sse.ReadFrames(bytes.NewReader(stream), func(fr events.Frame) error {
			if mask&(1<<(len(frames)%64)) != 0 {
				fr.Name = name
			}
			frames = append(frames, fr)
			if TaskStreamName(fr.Name) {
				kept = append(kept, fr)
			}
			return nil
		})
		tl := newPipe()
		head, docs := 0, 0
		for _, fr := range frames {
			for _, ev := range tl.d.Decode(fr) {
				if ev.Kind == events.KindAssistantMessage {
					if ev.Variant == "AssistantMessage" {
						head++
					} else {
						docs++
					}
				}
				tl.Apply(ev)
			}
		}
		n := tl.Len()
		asst := 0
		for _, it := range tl.Items() {
			if it.Kind == events.ItemAssistant {
				asst++
			}
		}
		if asst < head+(docs+1)/2 || asst > head+docs {
			t.Fatalf("%d assistant items for %d HEAD and %d docs replies", asst, head, docs)
		}

		// Foreign frames change nothing but the one notice.
		clean := newPipe()
		for _, fr := range kept {
			clean.feed(fr)
		}
		want := itemsText(clean.Timeline, "")
		got := itemsText(tl.Timeline, "Ignored ")
		if got != want {
			t.Fatalf("foreign frames changed the transcript:\n%s\nwithout them:\n%s", got, want)
		}
		foreign := len(frames) - len(kept)
		if m := tl.Meta(); m.ForeignFrames != foreign {
			t.Fatalf("%d foreign frames counted as %d", foreign, m.ForeignFrames)
		}

		tl.Reconnected()
		for _, fr := range frames {
			tl.feed(fr)
		}
		if tl.Len() != n {
			t.Fatalf("replay added items: %d -> %d", n, tl.Len())
		}

		// The end of input settles every running tool.
		tl.Apply(events.Event{Kind: events.KindEndOfInput})
		for _, it := range tl.Items() {
			if it.Tool != nil && it.Tool.Status == events.ToolRunning {
				t.Fatalf("tool %s still running after the end of input", it.ID)
			}
		}
	})
}

// itemsText renders the items for comparison, without the foreign-frames
// notice (its text starts with skip).
func itemsText(tl *events.Timeline, skip string) string {
	var b strings.Builder
	for _, it := range tl.Items() {
		if skip != "" && it.Kind == events.ItemNotice && strings.HasPrefix(it.Text, skip) {
			continue
		}
		b.WriteString(it.Kind.String() + "|" + it.ID + "|" + it.Text)
		if it.Tool != nil {
			b.WriteString("|" + it.Tool.Status.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzReadFrames: the SSE reader never panics and never returns data past
// an incomplete event; a frame it reads under a name maria does not send
// (or none) decodes as foreign.
func FuzzReadFrames(f *testing.F) {
	f.Add([]byte("event: a\ndata: 1\n\n"))
	f.Add([]byte("data: x\r\ndata: y\r\r\n\n: c\n"))
	for _, s := range seedStreams {
		f.Add([]byte(s))
	}
	f.Add([]byte("event:maria\ndata:" + seedSpoof + "\n\nevent: maria\nevent: foo\ndata: " + seedSpoof + "\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = sse.ReadFrames(bytes.NewReader(in), func(fr events.Frame) error {
			if strings.ContainsAny(fr.Name, "\r\n") {
				t.Fatalf("name %q holds a line end", fr.Name)
			}
			if !TaskStreamName(fr.Name) && !DaemonStreamName(fr.Name) && Decode(fr).Kind != events.KindForeign {
				t.Fatalf("frame %q is not foreign", fr.Name)
			}
			return nil
		})
	})
}
