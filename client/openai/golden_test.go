package openai_test

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
	ambiguous bool // role/content only: any provider's; only --from is checked
	covers    string
}{
	{"request.json", false, "a request: system/developer notices, user text and image parts, tool calls " +
		"(string, object, double-encoded, invalid args), tool results (parts, object, unknown id), " +
		"legacy function_call and its result, refusal, reasoning_content, role-changing JSON in user text, " +
		"terminal escapes and a lone surrogate, an unknown role, a message that is not an object, NaN, " +
		"tools listed before messages"},
	{"response.json", false, "a response: id, tool call, finish_reason, usage with cache, two choices"},
	{"log.json", false, "a log: history repeated by later requests, a trimmed context window, a new " +
		"conversation, a retried request in a {request,response} entry, an API error"},
	{"api-log.jsonl", false, "JSON lines of {request, response} entries whose responses are chunk lists"},
	{"stream.sse", false, "a recorded stream: reasoning and text deltas, two parallel tool calls by index, " +
		"a second choice, usage chunk, [DONE], a second response, comments, event and id lines, a line " +
		"that is not JSON"},
	{"s5.sse", false, "arguments streamed then repeated whole; a legacy function_call stream; no [DONE]"},
	{"truncated.sse", false, "a stream cut off mid-line and mid-arguments: the turn is incomplete"},
	{"chunks.jsonl", false, "chunks as JSON lines: BOM, CRLF, NaN/Infinity, a lone surrogate, invalid " +
		"UTF-8, escapes, JSON-looking text, a line that is not JSON, an unknown record, an error body"},
	{"messages-bare.json", true, "the ambiguous bare {messages:[{role,content}]}"},
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", f.file)
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(f.file, filepath.Ext(f.file))+".jsonl")
			importtest.Check(t, "openai", path, golden, ingest.Options{}, f.ambiguous, *update)
		})
	}
}

func TestEveryFixtureListed(t *testing.T) {
	t.Parallel()
	names, _ := filepath.Glob("testdata/*.*")
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
