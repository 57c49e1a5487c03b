package events

import "github.com/perch-tui/perch/tools"

// Outcome is how a tool call ended as every view marks it: the terminal
// UI's status icon, the mark tail and replay print, the status markdown
// writes. It is the call's own status, refined for a shell command by how
// the command exited: a command that ran and exited non-zero is a failure
// even though the tool call itself worked. One rule, here, so that no
// view says "✓ … exit 1" while another says failed.
type Outcome uint8

const (
	OutcomeRunning Outcome = iota
	// OutcomeOK: the call worked (a command exited 0, or did not say).
	OutcomeOK
	// OutcomeError: the tool call itself failed (an error result).
	OutcomeError
	// OutcomeFailed: a command ran and exited non-zero.
	OutcomeFailed
	// OutcomeTimedOut: a command was stopped at its time limit.
	OutcomeTimedOut
	OutcomeCancelled
	// OutcomeUnknown: the run ended without a result.
	OutcomeUnknown
)

func (o Outcome) String() string {
	switch o {
	case OutcomeRunning:
		return "running"
	case OutcomeOK:
		return "ok"
	case OutcomeError:
		return "error"
	case OutcomeFailed:
		return "failed"
	case OutcomeTimedOut:
		return "timed out"
	case OutcomeCancelled:
		return "cancelled"
	}
	return "unknown"
}

// Failed is whether the outcome is a failure of any kind: the call's own
// error, a non-zero exit, a timeout.
func (o Outcome) Failed() bool {
	return o == OutcomeError || o == OutcomeFailed || o == OutcomeTimedOut
}

// ToolOutcome is the outcome of a call with status s whose command result
// (Command) is cr; cr is nil for a tool that is not a command, or a
// command whose result does not say how it exited.
func ToolOutcome(s ToolStatus, cr *CommandResult) Outcome {
	switch s {
	case ToolRunning:
		return OutcomeRunning
	case ToolCancelled:
		return OutcomeCancelled
	case ToolUnknown:
		return OutcomeUnknown
	}
	if cr != nil {
		switch {
		case cr.TimedOut:
			return OutcomeTimedOut
		case cr.ExitCode != nil && *cr.ExitCode == 0:
			return OutcomeOK
		case cr.ExitCode != nil:
			return OutcomeFailed
		}
	}
	if s == ToolError {
		return OutcomeError
	}
	return OutcomeOK
}

// Outcome is how t ended (ToolOutcome of its status and Command).
func (t *ToolItem) Outcome() Outcome {
	if t.spill != nil {
		// What Command would say of the exit, kept when the text went to
		// the store: no read back for a header.
		var cr *CommandResult
		if sp := t.spill; sp.isCmd {
			cr = &CommandResult{ExitCode: sp.exit, TimedOut: sp.timedOut}
		}
		return ToolOutcome(t.Status, cr)
	}
	return ToolOutcome(t.Status, t.Command())
}

// Command is what a shell command's result says (exit status, timeout,
// stdout and stderr) as the views show it: parsed from the result's text
// when the source sent no details, or the exit status a source reported
// beside the output. nil when t is not a command, has no result yet, or
// failed without an exit status (its error is what there is to show).
func (t *ToolItem) Command() *CommandResult {
	r := t.Result
	if t.spill != nil {
		r = t.Output()
	}
	if r == nil {
		return nil
	}
	name := t.Name
	if name == "" {
		name = t.Call.Name
	}
	if tools.KindOf(name) != tools.Command {
		return nil
	}
	if (r.IsError || t.Status == ToolError) && r.Exit() == nil {
		return nil
	}
	if cr := WithDetails(r, tools.FormatCommand, t.Call).Command; cr != nil {
		return cr
	}
	if code := r.Exit(); code != nil {
		return &CommandResult{ExitCode: code, Stdout: tools.OutputMember(r.Text)}
	}
	return nil
}
