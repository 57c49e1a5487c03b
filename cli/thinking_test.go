package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// perch import/export --format md shows each turn's reasoning, quoted and
// marked, before the reply; --no-thinking leaves it out and nothing else.
func TestMarkdownThinking(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "client", "claudecode", "testdata", "session.stream.jsonl")
	const reasoning = "> **Thinking**\n>\n> The user wants the failing checkout test fixed. First plan, then run the tests.\n\n"
	md := must(t, run(t, "", "import", path, "--format", "md")).stdout
	if !strings.Contains(md, "## Assistant\n\n"+reasoning) {
		t.Errorf("md lacks the reasoning block:\n%s", md)
	}
	without := must(t, run(t, "", "import", path, "--format", "md", "--no-thinking")).stdout
	if strings.Contains(without, "Thinking") || strings.Contains(without, "First plan, then run the tests") {
		t.Errorf("--no-thinking still shows reasoning:\n%s", without)
	}
	if strings.ReplaceAll(md, reasoning, "") != without {
		t.Errorf("--no-thinking changed more than the reasoning:\n%s\n---\n%s", md, without)
	}
}
