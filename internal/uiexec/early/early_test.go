package early

import (
	"strings"
	"testing"
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
