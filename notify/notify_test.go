package notify

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBytes(t *testing.T) {
	n := Notification{Title: "perch: fix-tests", Body: "the run failed"}
	cases := []struct {
		name string
		n    Notification
		o    Options
		want string
	}{
		{"all", n, Options{Kinds: All},
			"\a\x1b]9;perch: fix-tests: the run failed\a\x1b]777;notify;perch: fix-tests;the run failed\a"},
		{"bell only", n, Options{Kinds: Kinds{Bell: true}}, "\a"},
		{"osc 9 only", n, Options{Kinds: Kinds{OSC9: true}}, "\x1b]9;perch: fix-tests: the run failed\a"},
		{"tmux", n, Options{Kinds: All, Tmux: true},
			"\a\x1bPtmux;\x1b\x1b]9;perch: fix-tests: the run failed\a\x1b\\" +
				"\x1bPtmux;\x1b\x1b]777;notify;perch: fix-tests;the run failed\a\x1b\\"},
		{"no title", Notification{Body: "4;3 done"}, Options{Kinds: Kinds{OSC9: true}}, "\x1b]9;perch: 4,3 done\a"},
		{"empty", Notification{}, Options{Kinds: All}, "\a"},
		{"injection", Notification{
			Title: "evil\x1b]52;c;aGk=\a\x07name\u202e\u200b",
			Body:  "line1\r\nline2\x1b[2J\u009b31m; rm -rf\x1b]777;notify;x;y\x1b\\ end",
		}, Options{Kinds: All},
			"\a\x1b]9;evilname: line1 line2, rm -rf end\a\x1b]777;notify;evilname;line1 line2, rm -rf end\a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(Bytes(c.n, c.o)); got != c.want {
				t.Errorf("Bytes:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// Whatever a session calls itself, the bytes hold exactly the escapes
// perch wrote: one ESC per OSC, one BEL per sequence plus the bell.
func TestBytesOnlyOurEscapes(t *testing.T) {
	hostile := strings.Repeat("\x1b]0;title\a\x1bP+q\x1b\\\u2066\u2069\x00\x7f\u0085x", 1000) // ~20 KB
	b := string(Bytes(Notification{Title: hostile, Body: hostile}, Options{Kinds: All}))
	if n := strings.Count(b, "\x1b"); n != 2 {
		t.Errorf("%d ESC bytes, want 2: %q", n, b)
	}
	if n := strings.Count(b, "\a"); n != 3 {
		t.Errorf("%d BEL bytes, want 3: %q", n, b)
	}
	if len(b) > 4*(MaxTitle+MaxBody)*2 {
		t.Errorf("%d bytes: not bounded", len(b))
	}
}

func TestClean(t *testing.T) {
	long := strings.Repeat("é", 10<<10)
	got := Clean(long, 20)
	if utf8.RuneCountInString(got) != 20 || !strings.HasSuffix(got, "…") {
		t.Errorf("Clean of 10 KB: %q (%d runes), want 20 runes ending in …", got, utf8.RuneCountInString(got))
	}
	if got := Clean("  a \n\n b\t ", 20); got != "a b" {
		t.Errorf("spaces: %q", got)
	}
	if got := Clean("abc def", 4); got != "abc…" {
		t.Errorf("cut at a space: %q", got)
	}
}

func TestInTmux(t *testing.T) {
	env := map[string]string{"TMUX": "/tmp/tmux-1000/default,1,0"}
	if !InTmux(func(k string) string { return env[k] }) || InTmux(func(string) string { return "" }) || InTmux(nil) {
		t.Error("InTmux")
	}
}
