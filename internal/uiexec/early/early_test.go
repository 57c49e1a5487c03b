package early

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/firstpaint"
)

func TestOpensUI(t *testing.T) {
	for _, c := range []struct {
		args string
		want bool
	}{
		{"", true},
		{"--url http://x/v1", true},
		{"--url=http://x/v1 --theme dark --model m --backend suna --token T --header A:b", true},
		{"attach 3f2b", true},
		{"attach 3f2b --url http://x/v1", true},
		{"--url http://x/v1 attach 3f2b", true},
		{"--url=http://x/v1 --backend maria attach 3f2b", true},
		{"demo", true},
		{"demo --backend suna --speed 3", true},
		// Help, version and everything else: the command line decides.
		{"--help", false},
		{"-h", false},
		{"--version", false},
		{"attach --help", false},
		{"demo -h", false},
		{"demo -help", false},
		{"help attach", false},
		{"tasks", false},
		{"send 3f2b hi", false},
		{"replay s.sse", false},
		{"--url http://x/v1 tasks", false},
		{"--url", false},
		{"--url http://x/v1 --theme", false},
		{"--speed 3", false},
		{"--theme dark attach 3f2b", false}, // not a connection flag: no command after it
		{"unknown", false},
		{"-test.v", false},
	} {
		if got := OpensUI(strings.Fields(c.args)); got != c.want {
			t.Errorf("OpensUI(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestMayPaintFirst: bare perch at a URL it must probe, on a terminal,
// waits for the command line, which draws the task list first; everything
// else is handed over at once.
func TestMayPaintFirst(t *testing.T) {
	for _, c := range []struct {
		args     string
		env      map[string]string
		terminal bool
		want     bool
	}{
		{"--url http://x/v1", nil, true, true},
		{"--url=http://x/v1 --theme dark", nil, true, true},
		{"--theme light", map[string]string{"PERCH_URL": "http://x/v1"}, true, true},
		{"--url http://x/v1 --token T --header A:b", nil, true, true},
		{"--url http://x/v1", nil, false, false},
		{"", nil, true, false}, // maria's daemon found from its file: no probe
		{"--url http://x/v1 --backend maria", nil, true, false},
		{"--url=http://x/v1 --backend=suna", nil, true, false},
		{"--url http://x/v1", map[string]string{"PERCH_BACKEND": "pynchy"}, true, false},
		{"attach 3f2b --url http://x/v1", nil, true, false},
		{"demo", nil, true, false},
	} {
		args := strings.Fields(c.args)
		if got := MayPaintFirst(args, func(k string) string { return c.env[k] }, c.terminal); got != c.want {
			t.Errorf("MayPaintFirst(%q, %v, terminal %v) = %v, want %v", c.args, c.env, c.terminal, got, c.want)
		}
	}
}

func TestPaintSupportedIsFirstpaints(t *testing.T) {
	if paintSupported != firstpaint.Supported {
		t.Fatalf("paintSupported %v, firstpaint.Supported %v", paintSupported, firstpaint.Supported)
	}
}
