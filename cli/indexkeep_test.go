package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/tui"
)

// While the board is open, a run that ends on one of its sources is in
// the index: perch search finds it without perch index being run again.
// The board keeps an index that exists; it never makes one.
func TestBoardKeepsTheIndexCurrent(t *testing.T) {
	_, url := fakeWith(t, fakedaemon.Options{Dialect: fakedaemon.DialectHead, Speed: fastSpeed, Seed: 7})
	state, conf := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(conf, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "perch", "config.toml"), []byte("[[source]]\nname = \"fake\"\nurl = \""+url+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": conf}
	envWith := func(e *Env) { e.Getenv = func(k string) string { return vars[k] } }
	perch := runner(t, envWith)
	// board runs perch (the board of the config file's sources) until
	// stop, once its UI is open.
	board := func() (stop func() result) {
		open := make(chan struct{})
		stop = background(t, func(e *Env) {
			envWith(e)
			e.IsTerminal = true
			e.openUI = func(ctx context.Context, _ client.Backend, c tui.Config) error {
				if c.Board == nil {
					t.Error("perch did not open the board")
				}
				close(open)
				<-ctx.Done()
				return nil
			}
		})
		select {
		case <-open:
		case <-time.After(20 * time.Second):
			t.Fatalf("the board never opened: %+v", stop())
		}
		return stop
	}
	stop := board()
	must(t, perch("new", "--url", url, "--name", "wombat", "What does this project do?"))
	if r := stop(); r.code != 0 {
		t.Fatalf("perch: %+v", r)
	}
	if _, err := os.Stat(indexPath(Env{Getenv: func(k string) string { return vars[k] }})); !os.IsNotExist(err) {
		t.Fatalf("the board made an index (%v)", err)
	}

	must(t, perch("index"))
	stop = board()
	must(t, perch("new", "--url", url, "--name", "quokka", "Which tests are flaky here?"))
	waitSearch(t, perch, "maria  user", "flaky", "--system", "maria", "--role", "user")
	if r := stop(); r.code != 0 || r.stdout != "" {
		t.Fatalf("perch: %+v", r)
	}
}

// A local Claude Code session's run that ends while the board is open
// is in the index: the board reads what its file gained.
func TestBoardKeepsLocalFilesIndexed(t *testing.T) {
	l := newLocalClaude(t, "busy", "")
	state := t.TempDir()
	envWith := l.env(state)
	perch := runner(t, envWith)
	must(t, perch("index"))
	running := make(chan struct{}) // the board shows the session running
	background(t, func(e *Env) {
		envWith(e)
		e.IsTerminal = true
		e.openUI = func(ctx context.Context, _ client.Backend, c tui.Config) error {
			if c.Board == nil {
				t.Error("perch did not open the board")
				return nil
			}
			for {
				if _, rows := c.Board.Live.Snapshot(board.Filter{Status: board.Generating}); len(rows) > 0 {
					close(running)
					break
				}
				select {
				case <-ctx.Done():
					return nil
				case <-c.Board.Live.Updated():
				}
			}
			<-ctx.Done()
			return nil
		}
	})
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the board never showed the local session running")
	}
	l.endRun(t, "Then bisect the numbat regression")
	waitSearch(t, perch, "numbat", "numbat")
}

// perch index --watch reads a local Claude Code session when it first
// sees it and again when a run of it ends, reading what its file gained.
func TestIndexWatchFollowsLocalSessions(t *testing.T) {
	l := newLocalClaude(t, "busy", "")
	state := t.TempDir()
	envWith := l.env(state)
	perch := runner(t, envWith)
	stop := background(t, envWith, "index", "--watch")
	waitSearch(t, perch, "build", "build") // "Fix the build", read when the session was first seen
	l.endRun(t, "Then bisect the numbat regression")
	waitSearch(t, perch, "numbat", "numbat")
	if r := stop(); r.code != 0 || !strings.Contains(r.stdout, "local session file") {
		t.Fatalf("perch index --watch: %+v", r)
	}
}

// background runs perch with args in the environment tweak makes until
// stop, which returns its result (and the same again when called again).
func background(t *testing.T, tweak func(*Env), args ...string) (stop func() result) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runEnv(ctx, t, tweak, "", args...) }()
	var stopped *result
	t.Cleanup(func() { stop() })
	return func() result {
		if stopped != nil {
			return *stopped
		}
		cancel()
		select {
		case r := <-done:
			stopped = &r
		case <-time.After(10 * time.Second):
			t.Fatalf("perch %v did not stop", args)
		}
		return *stopped
	}
}

// runner runs perch commands in the environment tweak makes, each with a
// deadline.
func runner(t *testing.T, tweak func(*Env)) func(args ...string) result {
	return func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, tweak, "", args...)
	}
}

// waitSearch waits until perch search (with args) prints want.
func waitSearch(t *testing.T, perch func(args ...string) result, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := perch(append([]string{"search"}, args...)...)
		if r.code == 0 && strings.Contains(r.stdout, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never reached the index: %+v", want, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endRun ends the local session's run as the CLI does: the user's text
// goes into the transcript and the registry file says idle.
func (l *localClaude) endRun(t *testing.T, text string) {
	t.Helper()
	f, err := os.OpenFile(l.transcript, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(map[string]any{"type": "user", "sessionId": l.id, "cwd": "/work", "timestamp": "2026-12-07T01:00:05Z",
		"message": map[string]any{"role": "user", "content": text}})
	f.Write(append(line, '\n'))
	f.Close()
	reg := filepath.Join(l.home, ".claude", "sessions", strconv.Itoa(os.Getpid())+".json")
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg, []byte(strings.Replace(string(data), `"status":"busy"`, `"status":"idle"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}
