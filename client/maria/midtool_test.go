package maria

import (
	"github.com/perch-tui/perch/events"
	"testing"
)

// TestQueuedMessageMidTool: maria's queued follow-up that arrives while a
// tool runs (queued, unqueued, then its UserMessage, in either place
// around the tool's result) leaves the result on its call: maria pairs by
// call id, so a user message between a call and its result changes
// nothing.
func TestQueuedMessageMidTool(t *testing.T) {
	const (
		queued   = `{"msg":"MessageQueued","message":{"id":"m2","role":"user","content":"also the tests"}}`
		unqueued = `{"msg":"MessageUnqueued","message":{"id":"m2"}}`
		user     = `{"msg":"UserMessage","content":"also the tests"}`
		reply    = `{"msg":"AssistantMessage","content":"Done."}`
	)
	for _, tc := range []struct {
		name  string
		after []string // what follows the running call
		items string
	}{
		{"user message before the result", []string{queued, unqueued, user, postLsOK, reply}, "user,assistant,tool:ok,user,assistant"},
		{"user message after the result", []string{queued, postLsOK, unqueued, user, reply}, "user,assistant,tool:ok,user,assistant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newPipe()
			feed(tl, `{"msg":"PreConversation"}`, `{"msg":"UserMessage","content":"hi"}`, asstLs, preLs, queued)
			if q := tl.Queue(); len(q) != 1 || q[0].ID != "m2" {
				t.Fatalf("queue while the tool runs: %+v", q)
			}
			if got := kinds(tl); got != "user,assistant,tool:running" {
				t.Fatalf("while the tool runs: %s", got)
			}
			descs := append([]string{`{"msg":"PreConversation"}`, `{"msg":"UserMessage","content":"hi"}`, asstLs, preLs}, tc.after...)
			descs = append(descs, `{"msg":"PostConversation"}`)
			tl = newPipe()
			feed(tl, descs...)
			if got := kinds(tl); got != tc.items {
				t.Errorf("items %s, want %s", got, tc.items)
			}
			if q := tl.Queue(); len(q) != 0 {
				t.Errorf("queue after the run: %+v", q)
			}
			for _, it := range tl.Items() {
				if it.Kind == events.ItemTool && (it.ID != "c1" || it.Tool.Result == nil || it.Tool.Result.Text == "") {
					t.Errorf("tool %s: result %+v", it.ID, it.Tool.Result)
				}
			}
		})
	}
}
