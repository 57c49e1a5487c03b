package events

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func corpusFrames(f *testing.F) {
	files, _ := filepath.Glob("testdata/streams/*.sse")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		_ = ReadFrames(bytes.NewReader(data), func(fr Frame) error {
			f.Add(fr.Name, fr.Data)
			return nil
		})
	}
	f.Add("maria", []byte(`{"id":1,"msg":"MessageAdded","message":{"role":"user","content":[{"text":"x"}]}}`))
	f.Add("maria", []byte(`{"desc":{"msg":"PreToolCall","tool_call":{"function":{"arguments":"\"\\\"{}\\\"\""}}}}`))
	f.Add("daemon.tasks.synchronized", []byte(`{"tasks":[{"id":"t","created":"x"}]}`))
	f.Add("maria.queued_messages.synchronized", []byte(`[{"id":5,"message":null}]`))
	f.Add("maria", []byte("{\"desc\":{\"msg\":\"UserMessage\",\"content\":\"\xff\x1b[2J\"}}"))
}

// FuzzDecode: any frame decodes without panicking, into valid UTF-8 text and
// bounded notices.
func FuzzDecode(f *testing.F) {
	corpusFrames(f)
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ev := Decode(Frame{Name: name, Data: data})
		if (ev.Kind == KindInvalid || ev.Kind == KindUnknown) && len(ev.Notice) > 1000 {
			t.Fatalf("notice too long: %d", len(ev.Notice))
		}
		if !utf8.ValidString(ev.Notice) {
			t.Fatal("notice not UTF-8")
		}
	})
}

// FuzzTimeline: any sequence of frames (split from one input) reduces
// without panicking, and replaying it changes nothing.
func FuzzTimeline(f *testing.F) {
	files, _ := filepath.Glob("testdata/streams/*.sse")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		var frames []Frame
		_ = ReadFrames(bytes.NewReader(stream), func(fr Frame) error {
			frames = append(frames, fr)
			return nil
		})
		tl := NewTimeline()
		for _, fr := range frames {
			tl.Apply(Decode(fr))
		}
		n := tl.Len()
		tl.Reconnected()
		for _, fr := range frames {
			tl.Apply(Decode(fr))
		}
		if tl.Len() != n {
			t.Fatalf("replay added items: %d -> %d", n, tl.Len())
		}
	})
}

// FuzzReadFrames: the SSE reader never panics and never returns data past
// an incomplete event.
func FuzzReadFrames(f *testing.F) {
	f.Add([]byte("event: a\ndata: 1\n\n"))
	f.Add([]byte("data: x\r\ndata: y\r\r\n\n: c\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = ReadFrames(bytes.NewReader(in), func(Frame) error { return nil })
	})
}
