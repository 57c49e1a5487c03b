package events

// RunEnd is how a session's last run ended, as the board and `perch
// watch` show it.
type RunEnd string

const (
	RunEndUnknown   RunEnd = ""          // the system did not say (or no run ended yet)
	RunEndOK        RunEnd = "ok"        // the run finished
	RunEndFailed    RunEnd = "failed"    // the run failed (a provider error, an agent error)
	RunEndCancelled RunEnd = "cancelled" // the run was stopped
)

// RunSummary is what a session's last run came to: how it ended, why
// when it did not finish, its last reply and what it cost. Its text is
// the server's, untrusted: views sanitize and bound it.
type RunSummary struct {
	End    RunEnd
	Reason string // why it failed or was cancelled, as the system said ("" when it did not)
	// LastReply is the text of the run's last assistant reply that had
	// any ("" when it had none).
	LastReply string
	// Usage is summed over the run's replies; HasUsage says the system
	// reported any.
	Usage    Usage
	HasUsage bool
}

// Tokens is the run's token count: the total the system reported, else
// prompt plus completion.
func (s RunSummary) Tokens() int64 {
	if s.Usage.TotalTokens > 0 {
		return s.Usage.TotalTokens
	}
	return s.Usage.InputTokens + s.Usage.OutputTokens
}

// LastRun summarizes the last run of a session's items (a Timeline's
// Items): the run is what follows the last user message (all the items
// when there is none). It finds the last reply and sums the usage; End
// is set only when the items say it (a turn stopped by an error or a
// cancel), so a backend that knows better sets it itself.
func LastRun(items []*Item) RunSummary {
	start := 0
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Kind == ItemUser {
			start = i + 1
			break
		}
	}
	var s RunSummary
	for _, it := range items[start:] {
		if it.Kind != ItemAssistant {
			continue
		}
		if it.Text != "" {
			s.LastReply = it.Text
		}
		if it.Usage != nil {
			s.Usage.Add(it.Usage)
			s.HasUsage = true
		}
		switch it.StopReason {
		case StopError:
			s.End = RunEndFailed
		case StopCancelled:
			s.End = RunEndCancelled
		case "":
		default:
			s.End = RunEndOK
		}
	}
	return s
}
