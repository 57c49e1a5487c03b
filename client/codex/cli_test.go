package codex_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/importtest"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// TestCLIToolOutputs holds the import of the real CLI's recordings to
// what its tools returned: the tool outputs codex sent the model in its
// next request (testdata/cli/*.requests.jsonl, logged by the fake
// provider of capture.sh) are the ground truth.
func TestCLIToolOutputs(t *testing.T) {
	t.Parallel()
	logs, _ := filepath.Glob("testdata/cli/*.requests.jsonl")
	if len(logs) == 0 {
		t.Fatal("no request logs in testdata/cli")
	}
	for _, log := range logs {
		name := strings.TrimSuffix(filepath.Base(log), ".requests.jsonl")
		if _, err := os.Stat(filepath.Join("testdata", "cli-"+name+".jsonl")); err != nil {
			continue // an interactive recording (capture-tui.sh) has no exec stream
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			truth := sentOutputs(t, log)
			out, _ := importtest.Import(t, filepath.Join("testdata", "cli-"+name+".jsonl"), "codex", ingest.Options{})
			var got []importedTool
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var r importedTool
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Type == "tool" {
					got = append(got, r)
				}
			}
			if len(got) != len(truth) {
				t.Fatalf("perch imports %d tools, codex sent the model %d tool outputs:\n%s", len(got), len(truth), out)
			}
			for i, want := range truth {
				g := got[i]
				switch want.name {
				case "exec_command":
					exit, text := commandOutput(t, want.output)
					if g.Name != "shell" || g.Output != text || g.ExitCode == nil || *g.ExitCode != exit {
						t.Errorf("tool %d: perch has %s %q exit %v; codex sent exit %d %q", i, g.Name, g.Output, g.ExitCode, exit, text)
					}
					if (g.Status == "error") != (exit != 0) {
						t.Errorf("tool %d: status %s for exit %d", i, g.Status, exit)
					}
				case "apply_patch":
					if g.Name != "apply_patch" || g.Status != "ok" || !sameChanges(want.output, g.Output) {
						t.Errorf("tool %d: perch has %s %s %q; codex sent %q", i, g.Name, g.Status, g.Output, want.output)
					}
				}
			}
		})
	}
}

type importedTool struct {
	Type, Name, Status, Output string
	ExitCode                   *int `json:"exit_code"`
}

type sentOutput struct{ name, output string }

// sentOutputs lists, in order, the outputs of the calls that run a tool
// item (exec_command, apply_patch) that codex sent back to the model;
// calls codex refused (an unsupported tool) have no item.
func sentOutputs(t *testing.T, path string) []sentOutput {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]string{}
	seen := map[string]bool{}
	var outs []sentOutput
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var req struct{ Input []json.RawMessage }
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatal(err)
		}
		for _, raw := range req.Input {
			var it struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Name   string `json:"name"`
				Output string `json:"output"`
			}
			_ = json.Unmarshal(raw, &it)
			switch it.Type {
			case "function_call", "custom_tool_call":
				names[it.CallID] = it.Name
			case "function_call_output", "custom_tool_call_output":
				n := names[it.CallID]
				if !seen[it.CallID] && (n == "exec_command" || n == "apply_patch") {
					outs = append(outs, sentOutput{n, it.Output})
				}
				seen[it.CallID] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return outs
}

var exitLine = regexp.MustCompile(`(?m)^Process exited with code (\d+)$`)

// commandOutput reads what exec_command told the model: "…Process exited
// with code N\n…Output:\n<output>".
func commandOutput(t *testing.T, s string) (int, string) {
	m := exitLine.FindStringSubmatch(s)
	_, text, ok := strings.Cut(s, "\nOutput:\n")
	if m == nil || !ok {
		t.Fatalf("not an exec_command output: %q", s)
	}
	exit, _ := strconv.Atoi(m[1])
	return exit, text
}

// sameChanges: the files apply_patch reported ("A hello.sh", "M notes.txt")
// are the ones perch lists ("add /…/hello.sh", "update /…/notes.txt").
func sameChanges(sent, imported string) bool {
	kinds := map[string]string{"A": "add", "M": "update", "D": "delete"}
	_, list, _ := strings.Cut(sent, "Updated the following files:\n")
	want := strings.Split(strings.TrimSpace(list), "\n")
	got := strings.Split(imported, "\n")
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		k, p, _ := strings.Cut(w, " ")
		gk, gp, _ := strings.Cut(got[i], " ")
		if kinds[k] != gk || !strings.HasSuffix(gp, "/"+p) {
			return false
		}
	}
	return true
}

// TestCLIMarkdownExitCode: export --format md says with which code a
// failed command of the real CLI exited.
func TestCLIMarkdownExitCode(t *testing.T) {
	t.Parallel()
	res, err := registry.Run(context.Background(), "testdata/cli-session.jsonl", "codex", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := transcript.WriteMarkdown(&b, res.Timeline, "cli-session"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Tool `shell`** (failed, exit 1): `/bin/bash -lc 'ls; cat missing.txt'`",
		"**Tool `shell`** (ok): `/bin/bash -lc 'sh hello.sh'`",
		"**Tool `shell`** (failed, exit 3): `/bin/bash -lc 'sh hello.sh; echo oops >&2; exit 3'`",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the markdown lacks %q:\n%s", want, b.String())
		}
	}
}
