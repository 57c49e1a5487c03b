package events

import (
	"strings"
	"time"
)

// What the timeline does with the kinds that systems other than maria
// bring: streamed turns, streamed tool output, notices and run states.

// applyNormalized handles the kinds the maria switch does not; it reports
// whether anything visible changed.
func (t *Timeline) applyNormalized(ev Event) bool {
	switch ev.Kind {
	case KindTextDelta, KindThinkingDelta:
		it := t.openTurn(ev)
		if !it.Open {
			return false // the turn's final form is in: a late delta changes nothing
		}
		if ev.Kind == KindTextDelta {
			it.Text = appendTo(&it.extra().textBuf, it.Text, ev.Text)
		} else {
			it.Thinking = appendTo(&it.extra().thinkBuf, it.Thinking, ev.Thinking)
		}
		it.Version++
	case KindToolOutputDelta:
		if ev.Tool == nil {
			return false
		}
		it := t.tool(ev.Tool.Call, ev.Tool.Name, ev)
		if it.Tool.Status != ToolRunning && it.Tool.Result != nil && !it.Tool.Result.streaming {
			return false // the final result is in; a late chunk changes nothing
		}
		if it.Tool.Result == nil {
			it.Tool.Result = &ToolResult{streaming: true}
		}
		r := it.Tool.Result
		r.Text = appendTo(&r.outBuf, r.Text, ev.Text)
		it.Version++
	case KindNotice:
		t.add(&Item{Kind: ItemNotice, ID: ev.ID, Created: ev.Created, Level: ev.Level,
			NoticeKind: ev.NoticeKind, Text: ev.Text})
		if ev.Usage != nil {
			// A run's usage the source reports apart from its replies
			// (Claude Code's result line when no reply said its own).
			t.addUsage(ev.Usage)
		}
	case KindRunState:
		before := t.status
		if ev.RunStatus == StatusGenerating && before != RunGenerating {
			t.meta.RunEnd = RunEndUnknown
		}
		if ev.RunStatus != StatusGenerating {
			// The run is over: calls still without a result never get one.
			t.endRunningTools(ToolUnknown)
			t.markBoundary()
		}
		t.SetTask(Task{Status: ev.RunStatus})
		return t.status != before
	case KindEndOfInput:
		t.EndOfInput()
	default:
		// Daemon-wide events belong to the task list, not a transcript.
		return false
	}
	return true
}

// appendTo appends s to a builder that holds cur (made on first use) and
// returns the whole text, in amortized linear time.
func appendTo(b **strings.Builder, cur, s string) string {
	if *b == nil {
		*b = &strings.Builder{}
		(*b).WriteString(cur)
	}
	(*b).WriteString(s)
	return (*b).String()
}

// openTurn finds the assistant turn a delta belongs to, or opens it.
func (t *Timeline) openTurn(ev Event) *Item {
	if it := t.turns[ev.ID]; it != nil {
		return it
	}

	it := &Item{Kind: ItemAssistant, ID: ev.ID, Created: ev.Created, Open: true}
	t.add(it)
	t.turns[ev.ID] = it
	return it
}

// finishTurn applies the final form of a turn that deltas opened (or a
// second report of the same turn): what it carries replaces what was built.
func (t *Timeline) finishTurn(it *Item, ev Event) {
	// The final text is the truth; an empty one keeps what streamed (some
	// sources send the reasoning only as deltas).
	if ev.Text != "" {
		it.setText(ev.Text)
	}
	if ev.Thinking != "" {
		it.setThinking(ev.Thinking)
	}
	if len(ev.ToolCalls) > 0 {
		it.ToolCalls = ev.ToolCalls
	}
	if ev.Usage != nil {
		// A later report's usage is the turn's truth; the totals follow.
		inRun := t.runTurns[it]
		if it.Usage != nil {
			t.meta.Totals.Sub(it.Usage)
			if inRun {
				t.meta.Run.Sub(it.Usage)
			}
		}
		it.Usage = ev.Usage
		t.addUsage(ev.Usage)
		if inRun {
			t.meta.Run.Add(ev.Usage)
		}
	}
	if ev.StopReason != "" {
		it.StopReason = ev.StopReason
		switch ev.StopReason {
		case StopError:
			t.meta.RunEnd = RunEndFailed
		case StopCancelled:
			t.meta.RunEnd = RunEndCancelled
		}
	}
	it.Open = false
	if it.x != nil {
		it.x.textBuf, it.x.thinkBuf = nil, nil
	}
	it.Incomplete = ev.Incomplete
	it.Version++
	t.spillItem(it)
	t.callTools(ev)
}

// EndOfInput settles a timeline read from a file: nothing more will come,
// so calls without a result will never get one, a run still shown as
// generating is over (idle), and a file has no live queue.
func (t *Timeline) EndOfInput() {
	t.endRunningTools(ToolUnknown)
	if t.status == RunGenerating {
		t.status = RunIdle
	}
	t.queue = nil
	t.meta.RunStarted = time.Time{}
	t.markBoundary()
	t.version++
}
