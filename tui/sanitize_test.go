package tui

import (
	"errors"
	"strings"
	"testing"
)

// Error text from the daemon (an APIError carries its message verbatim)
// must be sanitized before it reaches the terminal.
func TestFlashSanitizesDaemonErrors(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.b.sendErr = errors.New("POST /send: 500: boom\x1b]52;c;ZXZpbA==\x07\x1b[2J\nline2")
	hs.typ("hello")
	hs.key("enter")
	raw := hs.m.View().Content
	if strings.Contains(raw, "\x1b]52") || strings.Contains(raw, "\x1b[2J") {
		t.Fatalf("daemon error reached the terminal unsanitized: %q", raw)
	}
}

func TestStreamErrorSanitized(t *testing.T) {
	hs := attached(t, 80, 24)
	hs.send(streamBatchMsg{Src: srcTask, Gen: hs.m.gen, Ended: true, Err: errors.New("bad\x1b]0;pwned\x07")})
	raw := hs.m.View().Content
	if strings.Contains(raw, "\x1b]0;pwned") {
		t.Fatalf("stream error reached the terminal unsanitized: %q", raw)
	}
}
