package suna_test

import (
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/suna"
)

// toolAfterItsCall checks a JSON-lines export: every tool line comes after
// the assistant line that calls it, and carries arguments.
func toolAfterItsCall(t *testing.T, what, export string) {
	t.Helper()
	lines := strings.Split(export, "\n")
	tools := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, `{"type":"tool"`) {
			continue
		}
		tools++
		id := l[len(`{"type":"tool","id":`):]
		id = id[:strings.IndexByte(id[1:], '"')+2]
		called := false
		for _, prev := range lines[:i] {
			if strings.HasPrefix(prev, `{"type":"assistant"`) && strings.Contains(prev, `"tool_calls":[{"id":`+id) {
				called = true
			}
		}
		if !called || strings.Contains(l, `"args":null`) {
			t.Errorf("%s: the tool %s is not after its call, or has no arguments:\n%s", what, id, export)
		}
	}
	if tools == 0 {
		t.Errorf("%s: no tool:\n%s", what, export)
	}
}

// Suna's current pipeline runs a tool before the assistant row that calls
// it is written: the stream sends the tool before the reply's complete
// row, and the history holds the tool row first. Live and after the run
// (the history read again), the tool follows its call, with its arguments,
// and the live export equals the import of the history.
func TestLiveToolsDuringReply(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true, ToolsDuringReply: true})
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	for f.srv.Frames(rid) < 10 {
		time.Sleep(time.Millisecond)
	}
	w := follow(t, open(t, f, ""), tid)
	w.waitFor(t, "the answer streamed", func(w *watcher) bool {
		last := w.last()
		return last.Kind == events.ItemAssistant && strings.Contains(last.Text, "café ☕ ready.") && last.StopReason != ""
	})
	toolAfterItsCall(t, "streamed", w.export(t))
	checkLiveGolden(t, "tools_during_reply_streamed", w.export(t))
	f.srv.Release()
	w.waitFor(t, "the run's end", idleAfterRuns(1))
	toolAfterItsCall(t, "after the run", w.export(t))
	finalCheck(t, f, w, "", tid, "tools_during_reply")
}

// waitRowsMade waits until a held run made every row it makes before
// Release (its stream stopped growing).
func waitRowsMade(t *testing.T, f *fakeAPI, rid string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n := -1; ; {
		time.Sleep(100 * time.Millisecond)
		m := f.srv.Frames(rid)
		if m == n && m > 0 {
			return
		}
		n = m
		if time.Now().After(deadline) {
			t.Fatalf("run %s never settled (%d frames)", rid, m)
		}
	}
}

// allButState is a JSON-lines export without its last line (the state).
func allButState(export string) string {
	export = strings.TrimSuffix(export, "\n")
	if i := strings.LastIndexByte(export, '\n'); i >= 0 {
		return export[:i+1]
	}
	return ""
}

// Joined while the run goes on and the history holds what it finalized
// (Suna writes each row as it is made): the first update shows those rows
// (what an export of the thread now keeps) — the import of the history so
// far, generating. The run's stream then takes over without showing
// anything twice, and the end is as always.
func TestLiveJoinKeepsFinalizedRows(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true, RowsAsMade: true})
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	waitRowsMade(t, f, rid)
	w := follow(t, open(t, f, ""), tid)
	w.waitFor(t, "the history", func(w *watcher) bool { return w.synced >= 1 })
	w.mu.Lock()
	first := w.first
	w.mu.Unlock()
	for _, want := range []string{`"text":"Let me look at the workspace first."`, `"name":"execute_command","status":"ok","args":{"command":"ls -la /workspace"`, "café ☕ ready.", `"status":"generating"`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first update lacks %s:\n%s", want, first)
		}
	}
	if imp := importHistory(t, f, "", tid); allButState(imp) != allButState(first) {
		t.Errorf("the first update differs from the import of the history so far:\n%s", diff(imp, first))
	}
	// The stream's catch-up rebuilt it: the same as a join before the
	// rows were written.
	w.waitFor(t, "the stream", func(w *watcher) bool {
		last := w.last()
		return w.resets >= 1 && last.Kind == events.ItemAssistant && strings.Contains(last.Text, "café ☕ ready.") && last.StopReason != ""
	})
	checkLiveGolden(t, "midrun_streamed", w.export(t))
	f.srv.Release()
	w.waitFor(t, "the run's end", idleAfterRuns(2))
	finalCheck(t, f, w, "", tid, "midrun")
}
