package normalize

import (
	"strings"

	"github.com/perch-tui/perch/events"
)

// Stop maps a stop or finish reason of any system to perch's set (the
// events.Stop* constants). "" and null mean the source did not say; an
// unknown reason is "other".
func Stop(raw string) string {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "":
		return ""
	case "stop", "end_turn", "end", "completed", "complete", "success", "finished":
		return events.StopEndTurn
	case "tool_use", "tool_calls", "function_call", "tool_call":
		return events.StopToolUse
	case "length", "max_tokens", "model_context_window_exceeded", "max_output_tokens":
		return events.StopMaxTokens
	case "stop_sequence":
		return events.StopSequence
	case "content_filter", "filtered", "safety":
		return events.StopFiltered
	case "refusal":
		return events.StopRefusal
	case "pause_turn", "paused":
		return events.StopPaused
	case "agent_terminated", "terminated", "error_max_turns", "max_turns":
		return events.StopTerminated
	case "cancelled", "canceled", "interrupted", "aborted", "stopped":
		return events.StopCancelled
	case "error", "failed", "error_during_execution":
		return events.StopError
	}
	return events.StopOther
}
