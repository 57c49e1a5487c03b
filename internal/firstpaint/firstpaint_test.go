package firstpaint

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/perch-tui/perch/events"
)

func TestHandoverRoundTrip(t *testing.T) {
	for _, h := range []Handover{
		{},
		{Profile: colorprofile.ANSI256, Modes: Modes{Lflag: 0x8b, Iflag: 0x500}},
		{Profile: colorprofile.TrueColor, Modes: Modes{Lflag: 1 << 31}},
	} {
		got, ok := Decode(h.Encode())
		if !ok || got != h {
			t.Errorf("Decode(%q) = %+v, %v; want %+v", h.Encode(), got, ok, h)
		}
	}
}

func TestDecodeRefusesWhatEncodeDidNotWrite(t *testing.T) {
	for _, s := range []string{"", "1", "profile=1", "profile=1;lflag=2", "profile=x;lflag=1;iflag=1",
		"profile=99;lflag=1;iflag=1", "profile=1;lflag=1;iflag=1;more=1", "profile=1;lflag=-1;iflag=1",
		"profile=1;lflag=1;iflag=99999999999"} {
		if h, ok := Decode(s); ok {
			t.Errorf("Decode(%q) = %+v, want refused", s, h)
		}
	}
}

// TestFrame: the alternate screen first, colours converted for the
// profile, no newline after the last line (nothing scrolls).
func TestFrame(t *testing.T) {
	lines := []string{"\x1b[38;2;255;0;0mred\x1b[m", "plain", "last"}
	for _, tt := range []struct {
		p         colorprofile.Profile
		want, not string
		plainOnly bool
	}{
		{p: colorprofile.TrueColor, want: "38;2;255;0;0"},
		{p: colorprofile.ANSI256, want: "38;5;196", not: "38;2;"},
		{p: colorprofile.NoTTY, plainOnly: true},
	} {
		b, err := Frame(lines, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.HasPrefix(s, enter) {
			t.Errorf("%v: the frame does not start on the alternate screen: %q", tt.p, s)
		}
		body := strings.TrimPrefix(s, enter)
		if tt.plainOnly && body != "red\r\nplain\r\nlast" {
			t.Errorf("%v: %q", tt.p, body)
		}
		if tt.want != "" && !strings.Contains(body, tt.want) || tt.not != "" && strings.Contains(body, tt.not) {
			t.Errorf("%v: %q: want %q, not %q", tt.p, body, tt.want, tt.not)
		}
		if !strings.HasSuffix(body, "last") {
			t.Errorf("%v: the frame must end with its last line: %q", tt.p, body)
		}
	}
}

// TestGuard: until the UI takes the screen, the first thing written
// leaves the painted screen, once; Close leaves it when nothing did;
// after Disarm nothing is added.
func TestGuard(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	painted := Handover{Profile: colorprofile.ANSI256}.Encode()

	var term bytes.Buffer
	_, g, ok := TakeOver(env(painted), nil, &term)
	if !ok {
		t.Fatal("not taken over")
	}
	w := g.Writer(&term)
	w.Write([]byte("perch: the daemon went away\n"))
	w.Write([]byte("again\n"))
	g.Close()
	if want := leave + "perch: the daemon went away\nagain\n"; term.String() != want {
		t.Errorf("%q, want %q", term.String(), want)
	}

	term.Reset()
	_, g, _ = TakeOver(env(painted), nil, &term)
	g.Close()
	g.Close()
	if term.String() != leave {
		t.Errorf("Close: %q", term.String())
	}

	term.Reset()
	_, g, _ = TakeOver(env(painted), nil, &term)
	g.Disarm()
	g.Writer(&term).Write([]byte("bye\n"))
	g.Close()
	if term.String() != "bye\n" {
		t.Errorf("after Disarm: %q", term.String())
	}

	term.Reset()
	_, g, ok = TakeOver(env(""), nil, &term)
	g.Writer(&term).Write([]byte("x"))
	g.Close()
	if ok || term.String() != "x" {
		t.Errorf("without a hand-over: ok %v, %q", ok, term.String())
	}
}

func TestTasksRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 7, 0, 0, 123, time.FixedZone("x", 3600))
	ts := []events.Task{
		{ID: "a", Name: "fix \x1b[31mit\x1b[0m\n", Cwd: "/src", Status: events.StatusGenerating, Created: at, Updated: at.Add(time.Minute),
			QueuedMessages: []events.QueuedMessage{{ID: "q", Text: "then", WebSearch: true}}, Model: "m", Port: 9, WebSearch: true},
		{ID: "b"},
	}
	s, ok := EncodeTasks(ts)
	if !ok {
		t.Fatal("not encoded")
	}
	got, ok := DecodeTasks(s)
	if !ok || len(got) != 2 || !got[0].Created.Equal(at) || got[0].Name != ts[0].Name || got[0].QueuedMessages[0] != ts[0].QueuedMessages[0] {
		t.Fatalf("DecodeTasks = %+v, %v", got, ok)
	}
	if got, ok := DecodeTasks(mustEncode(t, []events.Task{})); !ok || got == nil || len(got) != 0 {
		t.Errorf("an empty list is a list: %v, %v", got, ok)
	}
	big := []events.Task{{ID: "x", Name: strings.Repeat("n", MaxTasks)}}
	if _, ok := EncodeTasks(big); ok {
		t.Error("a list over MaxTasks was encoded")
	}
	for _, bad := range []string{"", "null", "{}", "[1]", strings.Repeat(" ", MaxTasks+1)} {
		if got, ok := DecodeTasks(bad); ok {
			t.Errorf("DecodeTasks(%.20q) = %v", bad, got)
		}
	}
}

func mustEncode(t *testing.T, ts []events.Task) string {
	t.Helper()
	s, ok := EncodeTasks(ts)
	if !ok {
		t.Fatal("not encoded")
	}
	return s
}
