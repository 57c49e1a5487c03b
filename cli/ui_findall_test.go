package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/tui"
)

// The UI's search across sessions on a real index built from a real
// Claude Code capture: no index is said as such (and not created), a
// word is found with its match marked, and the hit's session opens
// read-only, from its file and, once the file is gone, from the index's
// copy, whose temporary file Close removes.
func TestUISearchAndOpenIndexed(t *testing.T) {
	home := t.TempDir()
	vars := map[string]string{"XDG_STATE_HOME": filepath.Join(home, "state")}
	tweak := func(e *Env) {
		e.Home = home
		e.Getenv = func(k string) string { return vars[k] }
	}
	var env Env
	tweak(&env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	search, open := uiSearch(env), uiOpenIndexed(env)

	if _, err := search(ctx, "gamma"); !errors.Is(err, tui.ErrNoIndex) {
		t.Fatalf("no index: %v", err)
	}
	if _, err := os.Stat(indexPath(env)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("searching created the index: %v", err)
	}

	b, err := os.ReadFile("../client/claudecode/testdata/real/tools.session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, "tools.session.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, runEnv(ctx, t, tweak, "", "index", file))

	hits, err := search(ctx, "gamma")
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %v %v", hits, err)
	}
	h := hits[0]
	marked := false
	for _, p := range h.Snippet {
		marked = marked || p.Match && strings.EqualFold(p.Text, "gamma")
	}
	if h.Session == "" || h.System != "claude-code" || !marked {
		t.Fatalf("hit %+v", h)
	}

	replayed := func() string {
		t.Helper()
		s, err := open(ctx, h.Session)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if c := s.Backend.Capabilities(); !c.Recording || c.Send {
			t.Fatalf("not a read-only replay: %+v", c)
		}
		// The file's session plays until its words are in.
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		var texts strings.Builder
		err = s.Backend.Follow(fctx, s.TaskID, func(u client.Update) {
			for _, ev := range u.Events {
				texts.WriteString(ev.Text + "\n")
			}
			if strings.Contains(texts.String(), "Set up notes.txt, check it, and try the build.") {
				stop()
			}
		})
		if fctx.Err() == nil || ctx.Err() != nil {
			t.Fatalf("follow: %v; read:\n%s", err, texts.String())
		}
		return s.Backend.URL()
	}
	if url := replayed(); !strings.Contains(url, file) {
		t.Errorf("replayed %q, not the file", url)
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	must(t, runEnv(ctx, t, tweak, "", "index"))
	url := replayed()
	if strings.Contains(url, file) || url == "" {
		t.Fatalf("replayed %q after the file went", url)
	}
	if _, err := os.Stat(url); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy %s is left after Close: %v", url, err)
	}
}
