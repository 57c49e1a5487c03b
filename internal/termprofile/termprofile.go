// Package termprofile completes the colour profile lipgloss detected with
// tmux's answer about 24-bit colour (internal/tmuxinfo), as lipgloss's own
// detection would have: perch's first paint and perch-ui draw with it.
package termprofile

import (
	"strconv"
	"time"

	"github.com/charmbracelet/colorprofile"
)

// TmuxWait bounds the wait for `tmux info` before the first frame. It was
// started at the process's start, so it has normally answered long
// before; a tmux that hangs costs this much once, then the profile is the
// one lipgloss gives a tmux that does not answer.
const TmuxWait = time.Second

// WithTmux completes detected, the colour profile lipgloss detected with
// TMUX hidden, with tmux's answer, as lipgloss's detection would have:
// tmux is asked only for an output that is a terminal (or TTY_FORCE), a
// TERM other than dumb, no NO_COLOR, and a profile short of 24-bit colour;
// the result is the better of the two, tmux counting as 256 colours when
// it does not pass 24-bit colour or does not answer.
func WithTmux(detected colorprofile.Profile, isTerminal bool, getenv func(string) string,
	tmux func(time.Duration) (trueColor, answered bool)) colorprofile.Profile {
	forced, _ := strconv.ParseBool(getenv("TTY_FORCE"))
	noColor, _ := strconv.ParseBool(getenv("NO_COLOR"))
	term := getenv("TERM")
	if !(isTerminal || forced) || term == "" || term == "dumb" || noColor || detected == colorprofile.TrueColor {
		return detected
	}
	tp := colorprofile.ANSI256
	if tc, _ := tmux(TmuxWait); tc {
		tp = colorprofile.TrueColor
	}
	return max(detected, tp)
}
