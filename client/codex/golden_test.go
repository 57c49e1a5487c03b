package codex_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/importtest"
	"github.com/perch-tui/perch/internal/ingest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtures: every file of testdata, what it covers, and whether detection
// must pick openai for it.
var fixtures = []struct {
	file      string
	ambiguous bool
	covers    string
}{
	{"exec.jsonl", false, "codex exec --json: reasoning, messages, a failing command with its exit code and " +
		"streamed output, a file change, an MCP call, a web search, todo list updates, an error item, usage " +
		"with cached and reasoning tokens; then a resumed run whose item ids restart, a failed MCP call, a " +
		"stream error and a failed turn"},
	{"hostile.jsonl", false, "BOM, CRLF, NaN/Infinity, a line that is not JSON, a JSON array line, unknown " +
		"event and item types, escapes, a lone surrogate, invalid UTF-8, role-changing and structured JSON " +
		"in messages, the first releases' spellings (session.created, item_type, assistant_message), a " +
		"declined command, an exit code as a string, a plan streamed as deltas, a question to the user, a " +
		"collab call, an MCP result with only structured content, a prompt line"},
	{"truncated.jsonl", false, "a recording cut mid-turn and mid-line: the turn is incomplete, the running " +
		"command keeps its streamed output"},
	{"cli-session.jsonl", false, "recorded from the real Codex CLI (capture.sh): a failed and a passing command, " +
		"a file change, a model request retried after two 5xx (Reconnecting… is progress), and a resumed run " +
		"in the same thread whose turn usage codex reports as the thread's running total"},
	{"cli-failed.jsonl", false, "recorded from the real Codex CLI (capture.sh): a turn whose model requests " +
		"all fail: the retries are progress, the failure one error notice"},
	{"cli/session.rollout.jsonl", false, "the rollout the real CLI wrote of cli-session.jsonl's runs " +
		"(capture.sh): Codex's instructions and environment as its own notices, reasoning, a failing and a " +
		"passing command with their exit codes, an update_plan Codex rejected (no todo list), a patch, two " +
		"turns whose usage is read off the thread's running total"},
	{"cli/failed.rollout.jsonl", false, "the rollout of cli-failed.jsonl: a turn whose requests all fail"},
	{"cli/tui.rollout.jsonl", false, "an interactive TUI session (capture-tui.sh): a command the user " +
		"approved, a 3 s command, a follow-up queued while busy and one at idle (turns started by the " +
		"queue), the TUI killed at idle"},
	{"legacy.jsonl", false, "the older {id,msg} format: settings and prompt lines, the prompt's echo, " +
		"reasoning, a command with output deltas and exit code, a patch, MCP calls (Ok and Err), a web " +
		"search, a plan, usage per request, notices, streamed deltas with their final forms, an unknown " +
		"event, an aborted turn"},
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", f.file)
			base := filepath.Base(f.file)
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(base, filepath.Ext(base))+".jsonl")
			importtest.Check(t, "codex", path, golden, ingest.Options{}, f.ambiguous, *update)
		})
	}
}

func TestEveryFixtureListed(t *testing.T) {
	t.Parallel()
	names, _ := filepath.Glob("testdata/*.json*")
	listed := map[string]bool{}
	for _, f := range fixtures {
		listed[f.file] = true
	}
	for _, n := range names {
		if !listed[filepath.Base(n)] {
			t.Errorf("%s has no golden test", n)
		}
	}
}
