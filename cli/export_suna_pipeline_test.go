package cli

import (
	"context"
	"strings"
	"testing"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// Suna's current pipeline, as its database has it while a run goes on:
// each row is written as it is made, and a tool's row before the
// assistant row that calls it. Without --until-idle, export of the running
// thread keeps what the run finalized — the import of the history so far,
// but for the state — with the tool after its call and its arguments; once
// the run is over, export is the import of the history.
func TestExportSunaRunningKeepsFinalized(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true, RowsAsMade: true, ToolsDuringReply: true})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitHeld(t, s, rid)
	r := sunaExport(t, context.Background(), base, tid)
	if r.code != 0 || !strings.Contains(r.stderr, "still generating") {
		t.Fatalf("export so far: %+v", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	var asst, tool int
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"type":"assistant"`) && strings.Contains(l, `"text":"Let me look at the workspace first."`):
			asst = i
		case strings.HasPrefix(l, `{"type":"tool"`) && strings.Contains(l, `"args":{"command":"ls -la /workspace"`) && strings.Contains(l, `"status":"ok"`):
			tool = i
		}
	}
	if asst == 0 || tool <= asst || !strings.Contains(r.stdout, "café ☕ ready.") || lines[len(lines)-1] != `{"type":"state","status":"generating","queue":[],"todos":[]}` {
		t.Errorf("export of the running thread lacks what the run finalized, or shows the tool before its call:\n%s", r.stdout)
	}
	imp := strings.Split(strings.TrimSuffix(sunaImport(t, base, sunaSecret, tid), "\n"), "\n")
	if strings.Join(imp[:len(imp)-1], "\n") != strings.Join(lines[:len(lines)-1], "\n") {
		t.Errorf("export so far differs from the import of the history so far:\nexport:\n%s\nimport:\n%s", r.stdout, strings.Join(imp, "\n"))
	}
	s.Release()
	sunaWaitStatus(t, s, rid, "completed")
	checkEqualImport(t, base, tid, sunaExport(t, context.Background(), base, tid, "--until-idle"), `"status":"idle"`)
}
