package cli

import (
	"strings"
	"testing"
)

// A usage error of a known command points to that command's help; a
// misspelt command, flag, --from kind, --format or --backend gets the
// nearest as a suggestion.
func TestUsageErrorsSuggest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"taks"}, []string{`unknown command "taks" (did you mean tasks?)`, "Run 'perch --help' for usage."}},
		{[]string{"exprot", "3f2b"}, []string{"(did you mean export?)"}},
		{[]string{"help", "xyzzy"}, nil},
		{[]string{"export"}, []string{"export: missing argument", "Run 'perch export --help' for its flags and examples."}},
		{[]string{"export", "x", "--untill-idle"}, []string{"(did you mean --until-idle?)", "Run 'perch export --help'"}},
		{[]string{"export", "x", "--format", "jsn"}, []string{`not "jsn" (did you mean json?)`}},
		{[]string{"import", "x.json", "--from", "taks"}, []string{`unknown kind "taks" for --from`, "codex"}},
		{[]string{"import", "x.json", "--from", "cluade-code"}, []string{"(did you mean claude-code?)", "Run 'perch import --help'"}},
		{[]string{"tasks", "--url", "http://x", "--backend", "sunna"}, []string{"(did you mean suna?)", "Run 'perch tasks --help'"}},
		{[]string{"xyzzy"}, []string{`unknown command "xyzzy"` + "\n"}},
	} {
		r := run(t, "", tc.args...)
		if tc.want == nil {
			if r.code != 0 {
				t.Errorf("%v: %+v", tc.args, r)
			}
			continue
		}
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, r.stderr, w)
			}
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct{ word, want string }{
		{"taks", "tasks"}, {"tsaks", "tasks"}, {"attach", ""}, {"rplay", "replay"}, {"q", ""}, {"fake", "fake-daemon"}, {"zzzzzz", ""},
	} {
		got := didYouMean(tc.word, commandNames())
		if want := map[bool]string{true: "", false: " (did you mean " + tc.want + "?)"}[tc.want == ""]; got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.word, got, want)
		}
	}
}
