package suna

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// historyRows reads the messages route oldest first.
func historyRows(t *testing.T, h *harness, tid string) []map[string]any {
	t.Helper()
	code, body := h.get("/threads/"+tid+"/messages?optimized=false&order=asc", "")
	if code != 200 {
		t.Fatalf("messages: %d %s", code, body)
	}
	var m struct{ Messages []map[string]any }
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m.Messages
}

func index(rows []map[string]any, typ string) int {
	for i, r := range rows {
		if r["type"] == typ {
			return i
		}
	}
	return -1
}

// RowsAsMade: a held run's history already holds its rows; without it,
// only the prompt. ToolsDuringReply: the tool row is older than the
// assistant row it names, on the stream and in the history.
func TestRowsAsMadeAndToolsDuringReply(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{Hold: true, FrameDelay: -1}, {Hold: true, FrameDelay: -1, RowsAsMade: true, ToolsDuringReply: true}} {
		h := start(t, opts)
		tid, rid, err := h.s.Start("", "What is in my workspace?")
		if err != nil {
			t.Fatal(err)
		}
		// Held before its last frame: every row is made.
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			h.s.mu.Lock()
			n := len(h.s.runs[rid].pending.rows)
			h.s.mu.Unlock()
			rows := historyRows(t, h, tid)
			if (!opts.RowsAsMade && n >= 8) || (opts.RowsAsMade && index(rows, "llm_response_end") >= 0 && len(rows) >= 9) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%+v: the rows were not made", opts)
			}
		}
		rows := historyRows(t, h, tid)
		if !opts.RowsAsMade {
			if len(rows) != 1 || rows[0]["type"] != "user" {
				t.Errorf("history during the run: %d rows, want the prompt", len(rows))
			}
			h.s.Release()
			waitRun(t, h.s, rid, "completed")
			rows = historyRows(t, h, tid)
		}
		tool, asst := index(rows, "tool"), index(rows, "assistant")
		if tool < 0 || asst < 0 {
			t.Fatalf("%+v: no tool or assistant row", opts)
		}
		meta := rows[tool]["metadata"].(map[string]any)
		if meta["assistant_message_id"] != rows[asst]["message_id"] {
			t.Errorf("the tool row names %v, the assistant row is %v", meta["assistant_message_id"], rows[asst]["message_id"])
		}
		if got := tool < asst; got != opts.ToolsDuringReply {
			t.Errorf("%+v: tool row before the assistant row: %v", opts, got)
		}
		// On the stream: the first tool row against the first complete
		// assistant row.
		h.s.mu.Lock()
		toolAt, completeAt := -1, -1
		for i, f := range h.s.runs[rid].frames {
			d := string(f.data)
			if toolAt < 0 && strings.Contains(d, `"type": "tool"`) {
				toolAt = i
			}
			if completeAt < 0 && strings.Contains(d, `\"stream_status\": \"complete\"`) {
				completeAt = i
			}
		}
		h.s.mu.Unlock()
		if toolAt < 0 || completeAt < 0 || (toolAt < completeAt) != opts.ToolsDuringReply {
			t.Errorf("%+v: stream: tool row at %d, complete row at %d", opts, toolAt, completeAt)
		}
		h.s.Release()
	}
}
