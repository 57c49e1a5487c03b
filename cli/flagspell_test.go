package cli

import (
	"regexp"
	"strings"
	"testing"
)

// Flags are spelt --name in help and errors, as README writes them, and
// a value's other name (markdown) gets a did-you-mean.
func TestFlagsSpeltAsReadmeDoes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "x", "--formt", "md"}, "flag provided but not defined: --formt (did you mean --format?)"},
		{[]string{"export", "x", "--format", "markdown", "--url", "http://127.0.0.1:1"}, `--format must be one of html, json, jsonl, md, not "markdown" (did you mean md?)`},
		{[]string{"demo", "--speed", "fast"}, `invalid value "fast" for flag --speed`},
		{[]string{"tail", "x", "--url"}, "flag needs an argument: --url"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	help := run(t, "", "export", "--help").stdout
	if !strings.Contains(help, "\n  --format string") || regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(help) {
		t.Errorf("export --help:\n%s", help)
	}
}

// A flag whose help lists its values completes them.
func TestFlagValuesFromUsage(t *testing.T) {
	for usage, want := range map[string]string{
		"output format: md, json or jsonl (json and jsonl hold every text whole)": "md json jsonl",
		"output when printing: text (as tail prints it), md, json or jsonl":       "text md json jsonl",
		"output: jsonl, json or md":                                                   "jsonl json md",
		"address to listen on (host:port; port 0 picks a free one)":                   "",
		"the demo task's first message (a restart with another one gives the id to…)": "",
	} {
		if got := strings.Join(usageValues(usage), " "); got != want {
			t.Errorf("%q: %q, want %q", usage, got, want)
		}
	}
	out := run(t, "", "completion", "bash").stdout
	if !strings.Contains(out, `-format|--format) COMPREPLY=($(compgen -W "md json jsonl html"`) {
		t.Errorf("bash completion lacks --format's values:\n%s", out)
	}
}
