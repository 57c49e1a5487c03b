package cli

import (
	"context"
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
	perch := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, envWith, "", args...)
	}
	// board runs perch (the board of the config file's sources) until
	// stop, and reports once its UI is open.
	board := func() (stop func() result) {
		ctx, cancel := context.WithCancel(context.Background())
		open := make(chan struct{})
		done := make(chan result, 1)
		go func() {
			done <- runEnv(ctx, t, func(e *Env) {
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
			}, "")
		}()
		select {
		case <-open:
		case r := <-done:
			t.Fatalf("perch: %+v", r)
		}
		var stopped *result
		return func() result {
			if stopped != nil {
				return *stopped
			}
			cancel()
			select {
			case r := <-done:
				stopped = &r
				return r
			case <-time.After(10 * time.Second):
				t.Fatal("perch did not stop")
				return result{}
			}
		}
	}
	found := func(word string) bool {
		r := perch("search", word, "--system", "maria", "--role", "user")
		return r.code == 0 && strings.Contains(r.stdout, "maria  user")
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
	defer stop()
	must(t, perch("new", "--url", url, "--name", "quokka", "Which tests are flaky here?"))
	deadline := time.Now().Add(20 * time.Second)
	for !found("flaky") {
		if time.Now().After(deadline) {
			t.Fatal("the run never reached the index while the board was open")
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	perch := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, envWith, "", args...)
	}
	must(t, perch("index"))
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan struct{}) // the board shows the session running
	done := make(chan result, 1)
	go func() {
		done <- runEnv(ctx, t, func(e *Env) {
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
		}, "")
	}()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the board never showed the local session running")
	}
	// The run ends: the CLI writes to the transcript and says idle.
	f, err := os.OpenFile(l.transcript, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","sessionId":"` + l.id + `","cwd":"/work","timestamp":"2026-12-07T01:00:05Z","message":{"role":"user","content":"Then bisect the numbat regression"}}` + "\n")
	f.Close()
	reg := filepath.Join(l.home, ".claude", "sessions", strconv.Itoa(os.Getpid())+".json")
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg, []byte(strings.Replace(string(data), `"status":"busy"`, `"status":"idle"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := perch("search", "numbat")
		if r.code == 0 && strings.Contains(r.stdout, "numbat") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local session's new message never reached the index while the board was open: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// perch index --watch reads a local Claude Code session when it first
// sees it and again when a run of it ends, reading what its file gained.
func TestIndexWatchFollowsLocalSessions(t *testing.T) {
	l := newLocalClaude(t, "busy", "")
	state := t.TempDir()
	envWith := l.env(state)
	perch := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, envWith, "", args...)
	}
	waitFound := func(word string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := perch("search", word)
			if r.code == 0 && strings.Contains(r.stdout, word) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q never reached the index: %+v", word, r)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runEnv(ctx, t, envWith, "", "index", "--watch") }()
	waitFound("build") // "Fix the build", read when the session was first seen
	f, err := os.OpenFile(l.transcript, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","sessionId":"` + l.id + `","cwd":"/work","timestamp":"2026-12-07T01:00:05Z","message":{"role":"user","content":"Then bisect the numbat regression"}}` + "\n")
	f.Close()
	reg := filepath.Join(l.home, ".claude", "sessions", strconv.Itoa(os.Getpid())+".json")
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg, []byte(strings.Replace(string(data), `"status":"busy"`, `"status":"idle"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFound("numbat")
	cancel()
	if r := <-done; r.code != 0 || !strings.Contains(r.stdout, "local session file") {
		t.Fatalf("perch index --watch: %+v", r)
	}
}
