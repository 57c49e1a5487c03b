package suna

import (
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// bare handles the flat events of the stream: keep-alives, run status,
// the UX events the web UI shows while a run prepares, tool output as it
// is produced, and the boundaries of LLM calls.
func (d *Decoder) bare(pos, typ string, r normalize.Object, data []byte) {
	msg := normalize.StrField(r, "message")
	switch typ {
	case "ping", "llm_ttft", "timing":
		// Operational: nothing to show (the model is worth knowing).
		d.setModel(normalize.StrField(r, "model"))
	case "status":
		d.runStatus(normalize.StrField(r, "status"), r)
	case "ack", "thinking":
		// "thinking" is the UI's "AI is processing…", not model reasoning.
		d.progress(msg)
	case "estimate":
		if msg == "" {
			if s, ok := normalize.Float(r["estimated_seconds"]); ok {
				msg = "This should take about " + strconv.Itoa(int(s)) + " seconds"
			}
		}
		d.progress(msg)
	case "prep_stage":
		t := normalize.FirstStr(r, "detail", "stage")
		if p, ok := normalize.Int(r["progress"]); ok && t != "" {
			t += " (" + strconv.FormatInt(p, 10) + "%)"
		}
		d.progress(t)
	case "degradation":
		t := msg
		if c := normalize.StrField(r, "component"); c != "" {
			t = c + ": " + t
		}
		if ui := normalize.StrField(r, "user_impact"); ui != "" {
			t += " (" + ui + ")"
		}
		d.notice(events.LevelWarning, events.NoticeSystem, t)
	case "error":
		d.closeTurn(true)
		t := normalize.FirstStr(r, "error", "message")
		if t == "" {
			t = "an error occurred"
		}
		if code := normalize.StrField(r, "error_code"); code != "" {
			t += " (" + code + ")"
		}
		d.notice(events.LevelError, events.NoticeError, t)
	case "context_usage":
		if n, ok := normalize.Int(r["current_tokens"]); ok {
			d.emit(events.Event{Kind: events.KindTokenCounted, TokenCount: n})
			if compressed, _ := normalize.Bool(r["compressed"]); compressed {
				d.notice(events.LevelInfo, events.NoticeContext,
					"Context compressed: "+strconv.FormatInt(n, 10)+" tokens")
			}
		}
	case "summarizing context":
		t := "Summarizing context"
		if st := normalize.StrField(r, "status"); st != "" {
			t += ": " + st
		}
		before, okB := normalize.Int(r["tokens_before"])
		after, okA := normalize.Int(r["tokens_after"])
		switch {
		case okB && okA:
			t += " (" + strconv.FormatInt(before, 10) + " → " + strconv.FormatInt(after, 10) + " tokens)"
		case okB:
			t += " (" + strconv.FormatInt(before, 10) + " tokens)"
		}
		d.notice(events.LevelInfo, events.NoticeContext, t)
	case "tool_output_stream":
		out := normalize.StrField(r, "output")
		if out == "" {
			return // is_final's empty chunk; the result row follows
		}
		id := normalize.StrField(r, "tool_call_id")
		name := normalize.StrField(r, "tool_name")
		d.emit(events.Event{Kind: events.KindToolOutputDelta, Text: out,
			Tool: &events.ToolEvent{Call: events.ToolCall{ID: id, Name: name}, Name: name}})
	case "llm_response_start":
		d.responseStart(normalize.StrField(r, "llm_response_id"), r)
	case "llm_response_end":
		d.responseEnd(r, nil)
	case "":
		d.notice(events.LevelInfo, events.NoticeInfo, pos+": event without a type: "+events.Excerpt(data, 120))
	default:
		d.notice(events.LevelInfo, events.NoticeInfo,
			pos+": unknown event "+strconv.Quote(typ)+": "+events.Excerpt(data, 120))
	}
}

func (d *Decoder) progress(t string) {
	if strings.TrimSpace(t) != "" {
		d.notice(events.LevelInfo, events.NoticeProgress, t)
	}
}

// endsRun: the statuses of {"type":"status","status":…} after which the
// run is over, as runStatus below reads them (the follower's mayEnd uses
// it; TestMayEndAgreesWithTheDecoder holds the two together).
func endsRun(st string) bool {
	switch st {
	case "completed", "agent_not_running", "stopped", "failed", "error":
		return true
	}
	return false
}

// runStatus handles {"type":"status","status":…}: completed, failed,
// stopped and error end the run (the stream closes after them); the rest
// report progress.
func (d *Decoder) runStatus(st string, r normalize.Object) {
	msg := normalize.StrField(r, "message")
	switch st {
	case "completed", "agent_not_running":
		d.closeTurn(true)
		d.running = false
		d.emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	case "stopped":
		d.closeTurn(true)
		d.running = false
		d.emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusStopped})
	case "failed", "error":
		d.closeTurn(true)
		d.running = false
		t := "Run failed"
		if msg != "" {
			t += ": " + msg
		}
		if et := normalize.StrField(r, "error_type"); et != "" {
			t += " (" + et + ")"
		}
		d.notice(events.LevelError, events.NoticeError, t)
		d.emit(events.Event{Kind: events.KindRunState, RunStatus: events.StatusIdle})
	case "llm_streaming":
		// "First token received": operational, like llm_ttft.
		d.setRunning(true)
	case "initializing":
		d.setRunning(true)
		d.progress(msg)
	default:
		if msg == "" {
			msg = st
		}
		d.progress(msg)
	}
}
