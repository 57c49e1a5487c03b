package termprofile

import (
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
)

func TestWithTmuxCompletesTheProfileAsLipglossWould(t *testing.T) {
	tmuxTC := func(time.Duration) (bool, bool) { return true, true }
	tmux256 := func(time.Duration) (bool, bool) { return false, true }
	tmuxLate := func(time.Duration) (bool, bool) { return false, false }
	tests := []struct {
		name     string
		detected colorprofile.Profile
		tty      bool
		env      map[string]string
		tmux     func(time.Duration) (bool, bool)
		want     colorprofile.Profile
		asked    bool
	}{
		{"tmux passes 24-bit colour", colorprofile.ANSI256, true, map[string]string{"TERM": "tmux-256color"}, tmuxTC, colorprofile.TrueColor, true},
		{"tmux does not", colorprofile.ANSI256, true, map[string]string{"TERM": "tmux-256color"}, tmux256, colorprofile.ANSI256, true},
		{"a 16-colour terminal in tmux counts as 256", colorprofile.ANSI, true, map[string]string{"TERM": "screen"}, tmux256, colorprofile.ANSI256, true},
		{"tmux did not answer", colorprofile.ANSI, true, map[string]string{"TERM": "screen"}, tmuxLate, colorprofile.ANSI256, true},
		{"already 24-bit: tmux not asked", colorprofile.TrueColor, true, map[string]string{"TERM": "xterm-kitty"}, nil, colorprofile.TrueColor, false},
		{"not a terminal", colorprofile.NoTTY, false, map[string]string{"TERM": "tmux-256color"}, nil, colorprofile.NoTTY, false},
		{"not a terminal, colour forced", colorprofile.ANSI256, false, map[string]string{"TERM": "tmux-256color", "CLICOLOR_FORCE": "1"}, nil, colorprofile.ANSI256, false},
		{"TTY_FORCE counts as a terminal", colorprofile.ANSI256, false, map[string]string{"TERM": "tmux-256color", "TTY_FORCE": "1"}, tmuxTC, colorprofile.TrueColor, true},
		{"NO_COLOR", colorprofile.ASCII, true, map[string]string{"TERM": "tmux-256color", "NO_COLOR": "1"}, nil, colorprofile.ASCII, false},
		{"dumb", colorprofile.NoTTY, true, map[string]string{"TERM": "dumb"}, nil, colorprofile.NoTTY, false},
		{"no TERM", colorprofile.NoTTY, true, map[string]string{}, nil, colorprofile.NoTTY, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			tmux := func(d time.Duration) (bool, bool) {
				asked = true
				if d <= 0 {
					t.Errorf("tmux asked with timeout %v", d)
				}
				if tt.tmux == nil {
					t.Fatal("tmux asked where lipgloss would not have asked it")
				}
				return tt.tmux(d)
			}
			got := WithTmux(tt.detected, tt.tty, func(k string) string { return tt.env[k] }, tmux)
			if got != tt.want || asked != tt.asked {
				t.Errorf("WithTmux = %v (tmux asked: %v), want %v (asked: %v)", got, asked, tt.want, tt.asked)
			}
		})
	}
}
