package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// perch watch counts a local session's whole transcript and keeps the
// count; perch tasks --all then shows the session's tokens and cost, at
// the config file's price for a model the table lacks, under heads that
// say the scope is the session's, not the last run's.
func TestLocalSessionCost(t *testing.T) {
	l := newLocalClaude(t, "idle", "")
	reply := `{"type":"assistant","sessionId":"` + l.id + `","cwd":"/work","timestamp":"2026-12-07T01:00:01Z","message":{"id":"m1","model":"claude-opus-9","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1000000,"output_tokens":100000}}}` + "\n"
	f, err := os.OpenFile(l.transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(reply)
	f.Close()
	state, conf := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(conf, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "perch", "config.toml"), []byte("[prices.\"claude-opus-9\"]\ninput = 7\noutput = 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(e *Env) {
		e.Home = l.home
		e.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": conf}[k] }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	runEnv(wctx, t, env, "", "watch")
	wcancel()

	var b boardOut
	r := runEnv(ctx, t, env, "", "tasks", "--all", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || r.code != 0 {
		t.Fatalf("tasks --all: %v %+v", err, r)
	}
	if len(b.Sessions) != 1 {
		t.Fatalf("sessions %+v", b.Sessions)
	}
	s := b.Sessions[0]
	if s.SessionTokens != 1_100_000 || s.SessionCostUSD == nil || *s.SessionCostUSD != 7+3 {
		t.Errorf("session tokens %d, cost %v; want 1100000, $10 (the config file's price)", s.SessionTokens, s.SessionCostUSD)
	}
	text := must(t, runEnv(ctx, t, env, "", "tasks", "--all")).stdout
	if !strings.Contains(text, "SESSION TOKENS") || !strings.Contains(text, "SESSION COST") ||
		!strings.Contains(text, "1.1M") || !strings.Contains(text, "$10.00") {
		t.Errorf("tasks --all:\n%s", text)
	}

	// Without the config file's price the model has none: the cost is
	// unknown, never $0.
	plain := l.env(state)
	r = runEnv(ctx, t, plain, "", "tasks", "--all", "--json")
	var unpriced boardOut
	if err := json.Unmarshal([]byte(r.stdout), &unpriced); err != nil || len(unpriced.Sessions) != 1 {
		t.Fatalf("tasks --all: %v %+v", err, r)
	}
	if s := unpriced.Sessions[0]; s.SessionTokens != 1_100_000 || s.SessionCostUSD != nil {
		t.Errorf("unpriced: session tokens %d, cost %v; want 1100000, none", s.SessionTokens, s.SessionCostUSD)
	}
	if text := must(t, runEnv(ctx, t, plain, "", "tasks", "--all")).stdout; !strings.Contains(text, "$?") {
		t.Errorf("unpriced, tasks --all:\n%s", text)
	}
}
