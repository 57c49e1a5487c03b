// Package notify renders a desktop notification as the bytes a terminal
// understands: a bell (BEL), OSC 9 (iTerm2, Windows Terminal, kitty,
// WezTerm, foot, Ghostty) and OSC 777 (urxvt, VTE terminals such as GNOME
// Terminal, WezTerm). It does no IO: the caller writes the bytes where the
// terminal will read them (the TUI through its program, a script's tty).
//
// The title and body come from sessions (a session's name, a reply's first
// line) and are untrusted: they are sanitized (no escape sequences, control
// characters or bidi overrides), kept on one line, stripped of the
// separator OSC 777 uses, and bounded, so a notification can never carry a
// sequence of its own to the terminal.
package notify

import (
	"strings"
	"unicode/utf8"

	"github.com/perch-tui/perch/sanitize"
)

// Bounds of what a notification shows: desktop notifications show a
// title and a line or two, and a terminal's OSC buffer is finite.
const (
	MaxTitle = 80  // runes
	MaxBody  = 240 // runes
)

// Notification is one message to the user.
type Notification struct {
	Title string // e.g. "perch: fix-tests needs you"
	Body  string // e.g. "the run failed: provider error 401"
}

// Kinds says which signals to send; each is configurable on its own.
type Kinds struct {
	Bell   bool // BEL: the terminal's bell (audible, or the tab's mark)
	OSC9   bool // ESC ] 9 ; text BEL
	OSC777 bool // ESC ] 777 ; notify ; title ; body BEL
}

// All is every kind.
var All = Kinds{Bell: true, OSC9: true, OSC777: true}

// Options says how the bytes travel.
type Options struct {
	Kinds
	// Tmux wraps each OSC in tmux's passthrough (ESC P tmux; … ESC \) so
	// that it reaches the terminal outside tmux (tmux must allow it:
	// set -g allow-passthrough on). The bell is sent bare: tmux passes it
	// on by itself (and marks the window).
	Tmux bool
}

// InTmux reports whether the process runs inside tmux ($TMUX is set).
func InTmux(getenv func(string) string) bool {
	return getenv != nil && getenv("TMUX") != ""
}

// Bytes renders n for the terminal. An empty title and body render
// nothing but the bell.
func Bytes(n Notification, o Options) []byte {
	title := Clean(n.Title, MaxTitle)
	body := Clean(n.Body, MaxBody)
	var b strings.Builder
	if o.Bell {
		b.WriteByte('\a')
	}
	if title == "" && body == "" {
		return []byte(b.String())
	}
	osc := func(payload string) {
		seq := "\x1b]" + payload + "\a"
		if o.Tmux {
			// Inside the passthrough every ESC is doubled.
			seq = "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
		}
		b.WriteString(seq)
	}
	if o.OSC9 {
		// One text: title and body. It starts with the title (a word),
		// never with digits and ';', which some terminals read as an
		// OSC 9 sub-command (ConEmu's progress, 9;4).
		text := title
		switch {
		case text == "":
			text = "perch: " + body
		case body != "":
			text += ": " + body
		}
		osc("9;" + text)
	}
	if o.OSC777 {
		osc("777;notify;" + title + ";" + body)
	}
	return []byte(b.String())
}

// Clean makes untrusted text fit for a notification: sanitized for the
// terminal, one line (line breaks become spaces), no ';' (OSC 777's
// separator), no control or format characters, spaces collapsed, at most
// max runes (an ellipsis marks a cut).
func Clean(s string, max int) string {
	s = sanitize.Text(s)
	var b strings.Builder
	n := 0
	pendingSpace := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == ' ':
			pendingSpace = b.Len() > 0
			continue
		case r == ';':
			r = ','
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || invisible(r):
			continue
		}
		if pendingSpace {
			if n == max {
				return strings.TrimRight(truncate(b.String()), " ") + "…"
			}
			b.WriteByte(' ')
			n++
			pendingSpace = false
		}
		if n == max {
			return strings.TrimRight(truncate(b.String()), " ") + "…"
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// truncate drops the last rune, to make room for the ellipsis.
func truncate(s string) string {
	_, size := utf8.DecodeLastRuneInString(s)
	return s[:len(s)-size]
}

// invisible: format characters that could disguise text in a desktop
// notification (zero-width, bidi marks, the BOM); sanitize removes the
// bidi embeddings and overrides already.
func invisible(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, // zero-width space … right-to-left mark
		r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x206f,
		r == 0xfeff, r == 0x061c:
		return true
	}
	return false
}
