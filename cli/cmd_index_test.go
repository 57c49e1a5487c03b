package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
)

// TestIndexSearchUsage: perch index reads the local Claude Code sessions
// (the real captures, in the CLI's layout), search finds their messages,
// usage counts their requests, and a session whose file is gone is still
// found and replays from the index's copy.
func TestIndexSearchUsage(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, "claude")
	proj := filepath.Join(claude, "projects", "-tmp-perch-claude-capture-work")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	caps, _ := filepath.Glob("../client/claudecode/testdata/real/*.session.jsonl")
	if len(caps) == 0 {
		t.Fatal("no captures")
	}
	for _, p := range caps {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"CLAUDE_CONFIG_DIR": claude, "XDG_STATE_HOME": filepath.Join(home, "state")}
	perch := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, func(e *Env) {
			e.Home = home
			e.Getenv = func(k string) string { return vars[k] }
		}, "", args...)
	}

	r := must(t, perch("index"))
	if !strings.Contains(r.stdout, "3 sessions") || r.stderr != "" {
		t.Fatalf("index: %q %q", r.stdout, r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(home, "state", "perch", "index.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the index file: %v %v", fi, err)
	}

	r = must(t, perch("search", "gamma", "--role", "tool", "--tool", "edit"))
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "tool Edit") {
		t.Errorf("search gamma --role tool --tool edit:\n%s", r.stdout)
	}
	r = must(t, perch("search", `"notes.txt now reads"`, "--json"))
	var hit struct {
		Session string `json:"session"`
		Role    string `json:"role"`
		Snippet []struct {
			Text  string `json:"text"`
			Match bool   `json:"match"`
		} `json:"snippet"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hit); err != nil || hit.Role != "assistant" || hit.Session == "" {
		t.Fatalf("search --json: %q (%v)", r.stdout, err)
	}

	r = must(t, perch("usage", "--by", "session", "--json"))
	var rep struct {
		Total struct {
			Requests int64   `json:"requests"`
			Input    int64   `json:"input"`
			Output   int64   `json:"output"`
			Cost     float64 `json:"cost_usd"`
		} `json:"total"`
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// Each reply once: tools 6, subagent 2, apierror 1 (its synthetic
	// error message is not a request).
	if rep.Total.Requests != 9 || rep.Total.Input != 15600 || rep.Total.Output != 589 || len(rep.Rows) != 3 {
		t.Errorf("usage: %+v, %d rows", rep.Total, len(rep.Rows))
	}
	r = must(t, perch("usage"))
	if !strings.Contains(r.stdout, "2026-11-28") || !strings.Contains(r.stdout, "cost (perch)") {
		t.Errorf("usage:\n%s", r.stdout)
	}

	// The file is deleted: still found, marked, and it replays.
	if err := os.Remove(filepath.Join(proj, "tools.session.jsonl")); err != nil {
		t.Fatal(err)
	}
	must(t, perch("index"))
	r = must(t, perch("search", "gamma"))
	if !strings.Contains(r.stdout, "(source deleted)") {
		t.Errorf("search after the delete:\n%s", r.stdout)
	}
	r = must(t, perch("replay", hit.Session[:8], "--format", "md"))
	if !strings.Contains(r.stdout, "Set up notes.txt, check it, and try the build.") {
		t.Errorf("replay of the indexed copy:\n%s", r.stdout)
	}

	r = must(t, perch("index", "--forget", hit.Session[:8]))
	if r = perch("search", "gamma"); r.code != 0 || strings.Contains(r.stdout, "gamma") {
		t.Errorf("search after --forget: %+v", r)
	}

	if r = perch("usage", "--by", "year"); r.code != ExitUsage {
		t.Errorf("usage --by year: exit %d", r.code)
	}
	if r = perch("search", "x", "--since", "yesterday"); r.code != ExitUsage {
		t.Errorf("search --since yesterday: exit %d", r.code)
	}
}

func TestPricesInConfig(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "perch"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(cfg, "perch", "config.toml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}, Home: home, conf: &configState{}}
	write("[prices.\"claude-opus-4-6\"]\ninput = 5.0\noutput = 25.0\n")
	p, err := env.prices()
	if err != nil {
		t.Fatal(err)
	}
	if pr, _, ok := p.Lookup("claude-opus-4-6"); !ok || pr.Output != 25 {
		t.Errorf("the config's price is not used: %+v %v", pr, ok)
	}
	for text, want := range map[string]string{
		"[prices.\"claude-opus-4-6\"]\ninptu = 5.0\n": `"inptu"`,
		"[prices]\ninput = 5\n":                       "holds no prices",
	} {
		env.conf = &configState{}
		write(text)
		if _, err := env.prices(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %s", text, err, want)
		}
	}
}

// TestIndexLive: perch index --url reads every session of a live source.
func TestIndexLive(t *testing.T) {
	_, url := fakeWith(t, fakedaemon.Options{Dialect: fakedaemon.DialectHead, Speed: fastSpeed, Seed: 7})
	state := t.TempDir()
	perch := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runEnv(ctx, t, func(e *Env) {
			e.Getenv = func(k string) string {
				if k == "XDG_STATE_HOME" {
					return state
				}
				return ""
			}
		}, "", args...)
	}
	must(t, perch("new", "--url", url, "What does this project do?"))
	r := must(t, perch("index", "--url", url))
	if !strings.Contains(r.stdout, "read 1 live session of 1 source") {
		t.Fatalf("index --url: %q", r.stdout)
	}
	r = must(t, perch("search", "project", "--system", "maria", "--role", "user"))
	if !strings.Contains(r.stdout, "maria  user") {
		t.Errorf("search of the live session:\n%s", r.stdout)
	}
	// replay points a live session to attach.
	hit := strings.Fields(r.stdout)
	if len(hit) < 3 {
		t.Fatalf("no hit: %q", r.stdout)
	}
	if r := perch("replay", hit[2], "--format", "md"); r.code == 0 || !strings.Contains(r.stderr, "perch attach") {
		t.Errorf("replay of a live session: %+v", r)
	}
	// Read again: replaced, not doubled.
	must(t, perch("index", "--url", url))
	if r2 := must(t, perch("search", "project", "--system", "maria", "--role", "user")); r2.stdout != r.stdout {
		t.Errorf("after a second read:\n%s\nwant\n%s", r2.stdout, r.stdout)
	}
}

// TestIndexProgress: a bar on a terminal, nothing on a pipe.
func TestIndexProgress(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		home := t.TempDir()
		file := filepath.Join(home, "s.jsonl")
		b, err := os.ReadFile("../client/claudecode/testdata/real/tools.session.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := must(t, runEnv(context.Background(), t, func(e *Env) {
			e.Home = home
			e.StderrIsTerminal = terminal
			e.Getenv = func(k string) string {
				if k == "XDG_STATE_HOME" {
					return filepath.Join(home, "state")
				}
				return ""
			}
		}, "", "index", file))
		bar := strings.Contains(r.stderr, "indexing [")
		if bar != terminal || !terminal && r.stderr != "" {
			t.Errorf("terminal %v: stderr %q", terminal, r.stderr)
		}
	}
}

// TestIndexWatchReadsEachRun: perch index --watch keeps a live source's
// sessions in the index: a run that ends after it started is searchable
// within the watch's next list, without another perch index.
func TestIndexWatchReadsEachRun(t *testing.T) {
	_, url := fakeWith(t, fakedaemon.Options{Dialect: fakedaemon.DialectHead, Speed: fastSpeed, Seed: 7})
	state := t.TempDir()
	envWith := func(e *Env) {
		e.Getenv = func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return ""
		}
	}
	perch := runner(t, envWith)
	stop := background(t, envWith, "index", "--watch", "--url", url)
	must(t, perch("new", "--url", url, "--name", "quokka", "What does this project do?"))
	waitSearch(t, perch, "maria  user", "project", "--system", "maria", "--role", "user")
	if r := stop(); r.code != 0 || !strings.Contains(r.stdout, "read maria session") {
		t.Errorf("index --watch: %+v", r)
	}
	if r := perch("index", "--watch"); r.code != 2 || !strings.Contains(r.stderr, "no local Claude Code or Codex sessions to watch") {
		t.Errorf("--watch alone, with no local CLI: %+v", r)
	}
}
