package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// localClaude is a home with a running Claude Code session: its registry
// file names this test's own process (so it is alive), a messaging
// socket takes messages and writes their receipts into the transcript as
// the CLI does.
type localClaude struct {
	home, id, transcript string
	mu                   sync.Mutex
	got                  []string
}

func newLocalClaude(t *testing.T, status, waitingFor string) *localClaude {
	t.Helper()
	home := t.TempDir()
	conf := filepath.Join(home, ".claude")
	l := &localClaude{home: home, id: "7f3c2a10-9b8e-4d6f-a1c2-3e4f5a6b7c8d"}
	l.transcript = filepath.Join(conf, "projects", "-work", l.id+".jsonl")
	for _, d := range []string{filepath.Dir(l.transcript), filepath.Join(conf, "sessions")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	sdir, err := os.MkdirTemp("", "pls")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sdir) })
	sock := filepath.Join(sdir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				var m struct {
					Type    string `json:"type"`
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				}
				if json.Unmarshal(sc.Bytes(), &m) != nil || m.Type != "user" {
					continue
				}
				l.mu.Lock()
				l.got = append(l.got, m.Message.Content)
				l.mu.Unlock()
				rec, _ := json.Marshal(map[string]any{"type": "queue-operation", "operation": "enqueue",
					"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "content": m.Message.Content})
				f, _ := os.OpenFile(l.transcript, os.O_APPEND|os.O_WRONLY, 0o600)
				f.Write(append(rec, '\n'))
				f.Close()
			}
			c.Close()
		}
	}()
	pid := os.Getpid()
	reg, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": l.id, "cwd": "/work", "procStart": fields[19],
		"version": "2.1.332", "name": "fix-the-build", "status": status, "waitingFor": waitingFor,
		"messagingSocketPath": sock, "statusUpdatedAt": time.Now().UnixMilli()})
	if err := os.WriteFile(filepath.Join(conf, "sessions", strconv.Itoa(pid)+".json"), reg, 0o600); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","sessionId":"` + l.id + `","cwd":"/work","timestamp":"2026-12-07T01:00:00Z","message":{"role":"user","content":"Fix the build"}}` + "\n"
	if err := os.WriteFile(l.transcript, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *localClaude) env(state string) func(*Env) {
	return func(e *Env) {
		e.Home = l.home
		e.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	}
}

// perch tasks --all lists a local Claude Code session beside the
// servers, waiting on a permission prompt as needing you; perch send
// reaches it by a prefix of its id, through its messaging socket, once.
func TestLocalClaudeSession(t *testing.T) {
	l := newLocalClaude(t, "waiting", "permission prompt")
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runEnv(ctx, t, l.env(state), "", "tasks", "--all", "--json")
	var b boardOut
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || r.code != 0 {
		t.Fatalf("tasks --all: %v %+v", err, r)
	}
	if len(b.Sources) != 1 || b.Sources[0].System != "claude-code" || b.Sources[0].State != "live" {
		t.Fatalf("sources %+v", b.Sources)
	}
	if len(b.Sessions) != 1 || b.Sessions[0].ID != l.id || b.Sessions[0].Status != "waiting" || b.Sessions[0].Reason != "permission" ||
		b.Sessions[0].Name != "fix-the-build" {
		t.Fatalf("sessions %+v", b.Sessions)
	}

	// perch watch counts the sessions' tokens and keeps the counts under
	// the state directory for the next start.
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	runEnv(wctx, t, l.env(state), "", "watch")
	wcancel()
	if m, _ := filepath.Glob(filepath.Join(state, "perch", "local", "claude-code-*.json")); len(m) != 1 {
		t.Errorf("the kept counts: %q", m)
	}

	must(t, runEnv(ctx, t, l.env(state), "", "send", l.id[:8], "allowed; now run the tests"))
	l.mu.Lock()
	got := append([]string(nil), l.got...)
	l.mu.Unlock()
	if len(got) != 1 || got[0] != "allowed; now run the tests" {
		t.Fatalf("the session took %q", got)
	}
	// Held for the session, by its prefix, and delivered when released.
	must(t, runEnv(ctx, t, l.env(state), "", "send", "--hold", l.id[:8], "after that, commit"))
	if r := must(t, runEnv(ctx, t, l.env(state), "", "queue", l.id[:8])); !strings.Contains(r.stdout, "after that, commit") {
		t.Errorf("perch queue: %+v", r)
	}
	l.mu.Lock()
	n := len(l.got)
	l.mu.Unlock()
	if n != 1 {
		t.Fatalf("a held message was sent: %d taken", n)
	}
	// Turned off in the config file: no source at all.
	conf := t.TempDir()
	if err := os.MkdirAll(filepath.Join(conf, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "perch", "config.toml"), []byte("[local.claude-code]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	off := func(e *Env) {
		e.Home = l.home
		e.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": conf}[k] }
	}
	if r := runEnv(ctx, t, off, "", "tasks", "--all", "--json"); r.code == 0 || !strings.Contains(r.stderr, "no source to watch") {
		t.Errorf("with the local CLI off: %+v", r)
	}
	// perch config says where each local CLI is looked for, and why.
	if r := must(t, runEnv(ctx, t, l.env(state), "", "config")); !strings.Contains(r.stdout, "local            claude-code: "+filepath.Join(l.home, ".claude")+"  (default)") {
		t.Errorf("perch config:\n%s", r.stdout)
	}
	if r := must(t, runEnv(ctx, t, off, "", "config")); !strings.Contains(r.stdout, "local            claude-code: off  (config file)") {
		t.Errorf("perch config, off:\n%s", r.stdout)
	}
}
