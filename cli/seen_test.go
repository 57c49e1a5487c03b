package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/fakedaemon"
)

// What perch attach showed is read on the board: the UI of perch attach
// writes its seen marks into the state directory's marks file under the
// key the board gives the same server (its source URL), which is what
// every perch of that directory reads (board.Seen).
func TestSeenInAttachIsSeenOnTheBoard(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", fastSpeed)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	tweak := func(e *Env) {
		e.Getenv = func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return ""
		}
	}
	var ui recordingUI
	must(t, runEnv(context.Background(), t, func(e *Env) {
		tweak(e)
		e.openUI, e.IsTerminal = ui.open, true
	}, "", "attach", id, "--url", base))
	if len(ui.cfgs) != 1 || ui.cfgs[0].MarkSeen == nil {
		t.Fatalf("attach opened the UI %d times, or without seen marks", len(ui.cfgs))
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := ui.cfgs[0].MarkSeen(id, at); err != nil { // as the UI does on attach, detach and exit
		t.Fatal(err)
	}

	env := Env{Home: t.TempDir()}
	tweak(&env)
	c := conn{url: base, urls: []string{base}}
	sources, err := c.boardSources(context.Background(), env)
	if err != nil || len(sources) == 0 {
		t.Fatalf("board sources: %v %v", sources, err)
	}
	marks, err := board.OpenSeen(board.SeenFile(filepath.Join(state, "perch"))).Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := marks[board.Key(sources[0].URL, id)]; !got.Equal(at) {
		t.Errorf("the board's mark of %s is %v, want %v (marks %v)", id, got, at, marks)
	}
}
