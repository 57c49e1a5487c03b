package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// perch tasks --all fills every session's last run: its tokens and last
// reply (the columns were empty for a session that ran before the
// command), under heads that say the scope.
func TestTasksAllFillsTheLastRun(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", fastSpeed)
	id, err := d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, base, id)
	state := t.TempDir()
	var out boardOut
	if err := json.Unmarshal([]byte(must(t, stateRun(t, state, "", "tasks", "--all", "--json", "--url", base)).stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Sessions) != 1 || out.Sessions[0].Tokens <= 0 || out.Sessions[0].LastReply == "" {
		t.Errorf("sessions: %+v", out.Sessions)
	}
	text := must(t, stateRun(t, state, "", "tasks", "--all", "--url", base)).stdout
	if !strings.Contains(text, "RUN TOKENS") || strings.Contains(text, "  -       -     What does") {
		t.Errorf("tasks --all:\n%s", text)
	}
}
