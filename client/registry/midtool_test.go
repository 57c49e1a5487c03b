package registry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/ingest"
)

// TestSunaUserRowMidTool: a Suna thread whose history has a user message
// between an assistant's tool call and the tool's result (a message added
// to the thread while the tool ran; perch itself holds its follow-ups
// until the run ends) keeps the result on its call: Suna pairs by
// tool_call_id.
func TestSunaUserRowMidTool(t *testing.T) {
	row := func(id, typ, content, at string) string {
		return `{"message_id": "` + id + `", "thread_id": "th-1", "type": "` + typ + `", "is_llm_message": true, "content": ` +
			content + `, "metadata": "{\"thread_run_id\": \"run-1\"}", "created_at": "2026-03-01T10:00:0` + at + `.000000+00:00", "updated_at": "2026-03-01T10:00:0` + at + `.000000+00:00"}`
	}
	doc := `{"messages": [` + strings.Join([]string{
		row("u-1", "user", `"{\"role\": \"user\", \"content\": \"list the files\"}"`, "1"),
		row("a-1", "assistant", `"{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"call_ls\", \"type\": \"function\", \"function\": {\"name\": \"execute_command\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}]}"`, "2"),
		row("u-2", "user", `"{\"role\": \"user\", \"content\": \"also the tests\"}"`, "3"),
		row("t-1", "tool", `"{\"role\": \"tool\", \"name\": \"execute_command\", \"tool_call_id\": \"call_ls\", \"content\": \"README.md\"}"`, "4"),
		row("a-2", "assistant", `"{\"role\": \"assistant\", \"content\": \"Two files.\"}"`, "5"),
	}, ", ") + `]}`
	path := filepath.Join(t.TempDir(), "thread.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), path, "suna", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Timeline.Items() {
		s := it.Kind.String()
		if it.Tool != nil {
			s += ":" + it.ID + ":" + it.Tool.Status.String()
			if it.Tool.Result == nil || !strings.Contains(it.Tool.Result.Text, "README.md") {
				t.Errorf("tool %s has no result: %+v", it.ID, it.Tool.Result)
			}
		}
		got = append(got, s)
	}
	want := "user,assistant,tool:call_ls:ok,user,assistant"
	if strings.Join(got, ",") != want {
		t.Errorf("items %s, want %s", strings.Join(got, ","), want)
	}
}
