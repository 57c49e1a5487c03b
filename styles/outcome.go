package styles

import "github.com/perch-tui/perch/events"

// OutcomeIcon is the mark of a tool call's outcome, the same in every view
// (the terminal UI's headers, tail and replay): one glyph per meaning.
func OutcomeIcon(o events.Outcome) string {
	switch o {
	case events.OutcomeRunning:
		return IconRunning
	case events.OutcomeOK:
		return IconOK
	case events.OutcomeFailed:
		return IconFailed
	case events.OutcomeTimedOut:
		return IconTimedOut
	case events.OutcomeError:
		return IconError
	case events.OutcomeCancelled:
		return IconCancelled
	}
	return IconUnknown
}

// NoticeIcon is the mark of a notice of level l.
func NoticeIcon(l events.NoticeLevel) string {
	switch l {
	case events.LevelWarning:
		return IconWarning
	case events.LevelError:
		return IconNotice
	}
	return IconInfo
}
