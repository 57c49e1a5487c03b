// Package sanitize makes untrusted daemon text safe to put on a terminal.
//
// Everything the daemon sends (model replies, tool output, file names) may
// hold escape sequences, carriage returns or bidi overrides. Left in, they
// can move the cursor, rewrite the window title, write the clipboard (OSC
// 52), overwrite earlier text (lone CR) or visually reorder code ("trojan
// source"). The bubbletea renderer drops some of these but interprets CR, and
// glamour passes ESC through untouched, so every string is
// cleaned here before it reaches glamour, lipgloss or the screen.
package sanitize

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// TabWidth is the distance between tab stops used when expanding tabs.
const TabWidth = 4

// Text returns s made safe for a terminal:
//
//   - invalid UTF-8 becomes U+FFFD;
//   - escape sequences (CSI, OSC, DCS, SOS, PM, APC, nF and single-character
//     escapes, and their 8-bit C1 forms) are removed with their parameters;
//   - CRLF becomes LF and a lone CR is removed;
//   - tabs are expanded to TabWidth-column stops;
//   - every other C0/C1 control and DEL is removed;
//   - bidi embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) are removed.
//
// It is one pass over the input (plus a fast pre-scan), so 10 MB of text
// costs a few tens of milliseconds, and it never panics. Text that is
// already clean is returned as is, without allocating.
//
// Unlike ansi.Strip, a string sequence (OSC, DCS …) that is never terminated
// ends at the next newline: a stray "ESC ]" in a build log must not swallow
// the rest of the output. This is safe because the ESC itself is always
// removed, so what remains is inert text.
func Text(s string) string {
	if clean(s) {
		return s
	}
	return textSlow(s)
}

// Line is Text for single-line contexts (headers, key arguments, list
// rows): line breaks become "⏎" so that a multi-line command stays on one
// row but visibly so, and trailing line breaks are dropped.
func Line(s string) string {
	s = Text(s)
	s = strings.TrimRight(s, "\n")
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\n", "⏎")
}

// clean reports whether s is printable ASCII plus LF, the common case that
// needs no work at all.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n') || c >= 0x7f {
			return false
		}
	}
	return true
}

// escape-sequence parser states.
const (
	stGround = iota
	stEsc    // after ESC
	stEscInt // ESC + intermediate bytes (nF escapes such as ESC ( B)
	stCSI    // CSI parameters / intermediates, waiting for the final byte
	stString // OSC/DCS/SOS/PM/APC body, waiting for BEL or ST
	stStrEsc // ESC seen inside a string: ESC \ ends it
)

func textSlow(s string) string {
	var b strings.Builder
	b.Grow(len(s))

	state := stGround
	// Tab expansion needs the display column. Rather than measuring every
	// rune, remember the column at segStart (a byte offset into the output)
	// and measure only the run since then when a tab arrives, which keeps
	// the whole thing linear.
	segStart, segCol := 0, 0

	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
			// An invalid byte decodes as (RuneError, 1); a real U+FFFD is
			// 3 bytes. Both end up as U+FFFD in the output, and runs of
			// invalid bytes collapse into one replacement like
			// strings.ToValidUTF8 does.
			if r == utf8.RuneError && size == 1 {
				j := i + 1
				for j < len(s) {
					if s[j] < utf8.RuneSelf {
						break
					}
					if rr, sz := utf8.DecodeRuneInString(s[j:]); rr != utf8.RuneError || sz != 1 {
						break
					}
					j++
				}
				size = j - i
			}
		}
		i += size

		switch state {
		case stEsc:
			switch {
			case r == '[':
				state = stCSI
			case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
				state = stString
			case r >= 0x20 && r <= 0x2f:
				state = stEscInt
			case r >= 0x30 && r <= 0x7e:
				state = stGround // two-character escape (ESC 7, ESC M, ESC c …)
			case r == 0x1b:
				// ESC ESC: start over.
			default:
				state = stGround
				i -= size // not an escape after all: reprocess this rune
			}
			continue
		case stEscInt:
			switch {
			case r >= 0x20 && r <= 0x2f:
			case r >= 0x30 && r <= 0x7e:
				state = stGround
			default:
				state = stGround
				i -= size
			}
			continue
		case stCSI:
			switch {
			case r >= 0x20 && r <= 0x3f: // parameters and intermediates
			case r >= 0x40 && r <= 0x7e: // final byte
				state = stGround
			default:
				// Malformed: drop what was consumed and treat this rune as
				// ordinary input (it may be a newline or a new ESC).
				state = stGround
				i -= size
			}
			continue
		case stString:
			switch r {
			case 0x07, 0x9c: // BEL or 8-bit ST
				state = stGround
			case 0x1b:
				state = stStrEsc
			case '\n', 0x18, 0x1a: // newline bounds the damage; CAN/SUB abort
				state = stGround
				i -= size
			}
			continue
		case stStrEsc:
			if r == '\\' {
				state = stGround
				continue
			}
			state = stGround
			i -= size
			continue
		}

		// Ground state.
		switch {
		case r == '\n':
			b.WriteByte('\n')
			segStart, segCol = b.Len(), 0
		case r == '\t':
			col := segCol + width(b.String()[segStart:])
			n := TabWidth - col%TabWidth
			for k := 0; k < n; k++ {
				b.WriteByte(' ')
			}
			segStart, segCol = b.Len(), col+n
		case r == 0x1b:
			state = stEsc
		case r == 0x9b:
			state = stCSI
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
			state = stString // DCS, SOS, OSC, PM, APC
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// CR (lone or in CRLF), BEL, BS, NUL … and the other C1 codes.
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			// Bidi embeddings, overrides and isolates.
		case r == utf8.RuneError:
			b.WriteString("\uFFFD")
		case size == 1:
			b.WriteByte(c)
		default:
			b.WriteString(s[i-size : i])
		}
	}
	return b.String()
}

// width is the display width of already-clean text, with a shortcut for
// ASCII.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
