package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// perch completion prints, for each shell, a script that knows every
// command, each command's flags, the --from kinds and the --backend
// names; each is valid in its shell where the shell is installed, and
// bash's completes.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := must(t, run(t, "", "completion", shell))
		for _, want := range append(commandNames(),
			"--until-idle", "--format", "--jsonl", "--hold", "--from", "--backend", "--url",
			"claude-code", "codex", "attocode", "maria suna pynchy", "auto dark light", "bash zsh fish") {
			w := want
			if shell == "fish" && strings.HasPrefix(want, "--") {
				w = "-l " + strings.TrimPrefix(want, "--")
			}
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: the script lacks %q", shell, w)
			}
		}
		sh, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		file := filepath.Join(t.TempDir(), "perch."+shell)
		if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
		if shell != "bash" {
			continue
		}
		script := `source "$1"
t() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _perch; echo "${COMPREPLY[*]}"; }
t perch ta; t perch --url http://x ex; t perch export 3f2b --unt; t perch import x --from cl; t perch --backend py; t perch completion z; t perch config p`
		out, err := exec.Command(sh, "-c", script, "bash", file).CombinedOutput()
		if want := "tasks tail\nexport\n--until-idle\nclaude-code\npynchy\nzsh\npath\n"; err != nil || string(out) != want {
			t.Errorf("bash completes:\n%s(%v), want:\n%s", out, err, want)
		}
	}
	if r := run(t, "", "completion", "zhs"); r.code != ExitUsage || !strings.Contains(r.stderr, "did you mean zsh?") {
		t.Errorf("completion zhs: %+v", r)
	}
}
