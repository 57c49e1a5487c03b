package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/backend"
	mariab "github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
	"github.com/perch-tui/perch/transcript"
)

// withForeign is streamA with two frames maria does not send, the second
// one well after the first: the timeline's notice about them, written
// ahead after the first, changes with the second.
func withForeign(t *testing.T) []byte {
	t.Helper()
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	frames := bytes.SplitAfter(log, []byte("\n\n"))
	if len(frames) < 10 {
		t.Fatalf("stream A has %d frames", len(frames))
	}
	foreign := []byte("event: bogus\ndata: {\"x\":1}\n\n")
	var out []byte
	for i, f := range frames {
		out = append(out, f...)
		if i == 2 || i == 7 {
			out = append(out, foreign...)
		}
	}
	return out
}

// aheadTarget is a regular file that already holds a line, positioned at
// its end, as a shell's > after another command's output would leave it.
func aheadTarget(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString("before\n"); err != nil {
		t.Fatal(err)
	}
	return f
}

// finishAhead finishes a with tl and checks that f holds what it held
// before and then what writing tl whole gives, which it returns.
func finishAhead(t *testing.T, a *aheadFile, f *os.File, tl *events.Timeline) string {
	t.Helper()
	if err := a.finish(tl); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := transcript.WriteJSONL(&want, tl); err != nil {
		t.Fatal(err)
	}
	if got := fileText(t, f); got != "before\n"+want.String() {
		t.Fatalf("file:\n%s\nwant:\nbefore\n%s", got, want.String())
	}
	return want.String()
}

func fileText(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAheadFileTakesBackChanges: items written ahead that change later (a
// notice updated, a timeline replaced by a reset) are taken back, nothing
// is written while more is on its way, running
// tools are not written until they end, and the file ends as writing the
// finished timeline would leave it, after what it held before.
func TestAheadFileTakesBackChanges(t *testing.T) {
	f := aheadTarget(t)
	a := newAheadFile(f)
	if a == nil {
		t.Fatal("a regular file is not written ahead")
	}
	none := backend.Update{Backlog: backend.BacklogNone}
	follow := func(log []byte, tl *events.Timeline) (rewritten bool) {
		dec := mariab.NewDecoder()
		err := sse.ReadFrames(bytes.NewReader(log), func(fr events.Frame) error {
			for _, ev := range dec.Accept(mariab.Decode(fr)) {
				tl.Apply(ev)
			}
			// An update that says more is on its way writes nothing.
			before := len(a.items)
			a.step(liveStep{tl: tl, u: backend.Update{Backlog: backend.BacklogMore}})
			if len(a.items) != before {
				t.Fatal("written ahead while more was on its way")
			}
			// The notice written ahead, then changed: taken back.
			for _, w := range a.items {
				if w.version != w.it.Version {
					rewritten = true
				}
			}
			a.step(liveStep{tl: tl, u: none})
			for _, w := range a.items {
				if w.it.Kind == events.ItemTool && w.it.Tool.Status == events.ToolRunning {
					t.Fatal("a running tool was written ahead")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return rewritten
	}
	// A first timeline, its notice taken back, then replaced (a reset) by
	// a second one without it.
	first := events.NewTimeline()
	if !follow(withForeign(t), first) {
		t.Error("no item changed after it was written")
	}
	log, err := os.ReadFile(streamA)
	if err != nil {
		t.Fatal(err)
	}
	tl := events.NewTimeline()
	follow(log, tl)
	finishAhead(t, a, f, tl)
}

// TestAheadFileRewritesAChangedItem: an item written ahead that changes
// (the notice of foreign frames) is rewritten in place, with everything
// after it.
func TestAheadFileRewritesAChangedItem(t *testing.T) {
	f := aheadTarget(t)
	a := newAheadFile(f)
	tl := events.NewTimeline()
	dec := mariab.NewDecoder()
	changed := false
	err := sse.ReadFrames(bytes.NewReader(withForeign(t)), func(fr events.Frame) error {
		for _, ev := range dec.Accept(mariab.Decode(fr)) {
			tl.Apply(ev)
		}
		for _, w := range a.items {
			changed = changed || w.version != w.it.Version
		}
		a.step(liveStep{tl: tl, u: backend.Update{Backlog: backend.BacklogNone}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("the test saw no item change after it was written")
	}
	want := finishAhead(t, a, f, tl)
	if !strings.Contains(want, "Ignored 2 frames") {
		t.Fatalf("the notice does not count both frames:\n%s", want)
	}
}

// TestAheadFileAbandon: a failed export leaves the file as it was.
func TestAheadFileAbandon(t *testing.T) {
	f := aheadTarget(t)
	a := newAheadFile(f)
	tl := events.NewTimeline()
	tl.Apply(events.Event{Kind: events.KindUserMessage, ID: "u1", Text: "hello"})
	a.step(liveStep{tl: tl, u: backend.Update{Backlog: backend.BacklogNone}})
	if err := a.j.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := fileText(t, f); !strings.Contains(got, "hello") {
		t.Fatalf("nothing written ahead: %q", got)
	}
	a.abandon()
	if got := fileText(t, f); got != "before\n" {
		t.Fatalf("after a failure the file holds %q", got)
	}
}

// TestAheadFileOnlyForFiles: a pipe, a buffer and a file opened for
// appending are written once the timeline is complete, as before.
func TestAheadFileOnlyForFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	app, err := os.OpenFile(filepath.Join(t.TempDir(), "a"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	for name, out := range map[string]io.Writer{"pipe": w, "buffer": &bytes.Buffer{}, "append": app} {
		if newAheadFile(out) != nil {
			t.Errorf("%s: written ahead", name)
		}
	}
}

// TestExportToAFile: perch export --format jsonl into a regular file, from
// a daemon that pauses after every frame (so the file is written ahead at
// each pause, and its notice taken back), holds what the export to a pipe
// holds, after what the file held before.
func TestExportToAFile(t *testing.T) {
	t.Parallel()
	log := withForeign(t)
	const id = "3f2b0000-0000-4000-8000-0000000000a1"
	var at []int
	for i := 0; ; {
		j := bytes.Index(log[i:], []byte("\n\n"))
		if j < 0 || i+j+2 >= len(log) {
			break
		}
		i += j + 2
		at = append(at, i)
	}
	s := &taskServer{id: id, log: log, pauses: at, pauseFor: 15 * time.Millisecond, status: func() string { return "idle" }}
	base := s.start(t)
	want := must(t, run(t, "", "export", id, "--url", base, "--backend", "maria", "--format", "jsonl")).stdout
	if !strings.Contains(want, "Ignored 2 frames") {
		t.Fatalf("the export does not count both foreign frames:\n%s", want)
	}
	f := aheadTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runEnv(ctx, t, func(e *Env) { e.Stdout = f }, "", "export", id, "--url", base, "--backend", "maria", "--format", "jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := fileText(t, f); got != "before\n"+want {
		t.Fatalf("file:\n%s\nwant:\nbefore\n%s", got, want)
	}
}
