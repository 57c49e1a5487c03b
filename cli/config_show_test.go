package cli

import (
	"strings"
	"testing"
)

// perch config shows every table it reads: each [[source]] (no secret)
// and [notify], saying what comes from the file and what is a default.
func TestConfigShowsEveryTable(t *testing.T) {
	t.Parallel()
	c := newConfigEnv(t, "[[source]]\nname = \"work\"\nurl = \"https://suna.example.com/v1?token=abc\"\nbackend = \"suna\"\ntoken = \"sekrit\"\n\n[notify]\nbell = false\n")
	r := must(t, c.run(t, "config"))
	for _, want := range []string{
		"source.work      https://suna.example.com/v1?token=REDACTED  backend suna  token REDACTED  (config file)",
		"notify.bell      off  (config file)",
		"notify.osc9      on  (default)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("perch config lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "sekrit") || strings.Contains(r.stdout, "abc") {
		t.Errorf("a secret printed:\n%s", r.stdout)
	}
}
