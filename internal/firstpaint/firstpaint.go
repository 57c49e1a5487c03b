// Package firstpaint lets perch draw the UI's first frame before perch-ui
// has started, and hands the terminal over to perch-ui in a state it can
// take from there.
//
// perch-ui links the markdown renderer, whose package initialisation alone
// (chroma's lexers and styles) takes longer than perch's whole way to the
// task list: perch, which starts fast, already has the list from its probe
// of the server. So perch draws the task list exactly as perch-ui's first
// frame will (tui/chrome draws both), on the alternate screen, and then
// replaces itself with perch-ui, which draws the same frame over it and
// goes on. Keys typed meanwhile wait in the terminal: perch turns off echo
// (they would print over the frame), line editing and signal keys (a
// ctrl+c would kill perch-ui before it could leave the alternate screen)
// and tells perch-ui which of those flags it turned off, in the
// environment (Env), with the colour profile it drew with; the same for
// the input translations that would change typed keys. perch-ui puts
// the flags back first thing, so that Bubble Tea saves and restores the
// user's own settings, reads the typed keys as keys, and draws with the
// same profile.
package firstpaint

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"

	"github.com/perch-tui/perch/events"
)

// Env carries the hand-over from perch to perch-ui:
// "profile=N;lflag=N;iflag=N".
const Env = "PERCH_UI_PAINTED"

const (
	// enter: the alternate screen, the cursor hidden, cleared, at home.
	enter = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
	// leave undoes enter.
	leave = "\x1b[?25h\x1b[?1049l"
)

// Handover is what perch tells perch-ui about the frame it drew.
type Handover struct {
	Profile colorprofile.Profile // the colour profile the frame was drawn with
	Modes   Modes                // what perch turned off, to be turned on again
}

// Modes are terminal mode flags perch turned off (Quiet): local modes
// (echo, canonical input, signal keys) and input translations.
type Modes struct {
	Lflag, Iflag uint32
}

// Encode is h as Env's value.
func (h Handover) Encode() string {
	return "profile=" + strconv.Itoa(int(h.Profile)) + ";lflag=" + strconv.FormatUint(uint64(h.Modes.Lflag), 10) +
		";iflag=" + strconv.FormatUint(uint64(h.Modes.Iflag), 10)
}

// Decode reads Env's value; ok is false when it is empty or not one
// Encode wrote (then perch-ui behaves as if nothing was drawn).
func Decode(s string) (h Handover, ok bool) {
	if s == "" {
		return Handover{}, false
	}
	seen := 0
	for part := range strings.SplitSeq(s, ";") {
		k, v, found := strings.Cut(part, "=")
		if !found {
			return Handover{}, false
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return Handover{}, false
		}
		switch k {
		case "profile":
			if n > uint64(colorprofile.TrueColor) {
				return Handover{}, false
			}
			h.Profile = colorprofile.Profile(n)
		case "lflag":
			h.Modes.Lflag = uint32(n)
		case "iflag":
			h.Modes.Iflag = uint32(n)
		default:
			return Handover{}, false
		}
		seen++
	}
	return h, seen == 3
}

// Frame is the bytes that draw lines on the alternate screen with profile:
// colours are converted as Bubble Tea's renderer converts them, and the
// last line ends without a newline, so that nothing scrolls.
func Frame(lines []string, profile colorprofile.Profile) ([]byte, error) {
	var b strings.Builder
	b.WriteString(enter)
	w := &colorprofile.Writer{Forward: &b, Profile: profile}
	if _, err := io.WriteString(w, strings.Join(lines, "\r\n")); err != nil {
		return nil, fmt.Errorf("draw the first frame: %w", err)
	}
	return []byte(b.String()), nil
}

// EnvTasks carries the task list perch drew, as JSON, so that perch-ui
// shows it without asking the server again (perch also names the system
// that answered, so perch-ui does not probe): the UI answers keys that much
// sooner. A list longer than MaxTasks bytes is not handed over (perch-ui
// asks for it, as it would have).
const EnvTasks = "PERCH_UI_TASKS"

// MaxTasks bounds EnvTasks' value (Linux refuses an environment string
// over 128 KiB).
const MaxTasks = 96 << 10

// EncodeTasks is ts as EnvTasks' value; ok is false when it is too long.
func EncodeTasks(ts []events.Task) (string, bool) {
	b, err := json.Marshal(ts)
	if err != nil || len(b) > MaxTasks {
		return "", false
	}
	return string(b), true
}

// DecodeTasks reads EnvTasks' value; ok is false when it is empty or not
// a task list (then perch-ui asks the server).
func DecodeTasks(s string) ([]events.Task, bool) {
	if s == "" || len(s) > MaxTasks {
		return nil, false
	}
	var ts []events.Task
	if err := json.Unmarshal([]byte(s), &ts); err != nil || ts == nil {
		return nil, false
	}
	return ts, true
}
