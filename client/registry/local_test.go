package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/pricing"
)

// The directory of a local CLI: its own variable, else the config file's,
// else the default under home; a CLI set off, or whose directory does
// not exist, is no source.
func TestLocalSources(t *testing.T) {
	home := t.TempDir()
	other := t.TempDir()
	inHome := filepath.Join(home, "alt")
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(inHome, 0o700); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		env  map[string]string
		set  map[string]LocalSetting
		want string // "" for no source
	}{
		{"the default", nil, nil, filepath.Join(home, ".claude")},
		{"the variable wins", map[string]string{"CLAUDE_CONFIG_DIR": other}, map[string]LocalSetting{"claude-code": {Dir: "~/alt"}}, other},
		{"the config file's, ~ expanded", nil, map[string]LocalSetting{"claude-code": {Dir: "~/alt"}}, inHome},
		{"off", nil, map[string]LocalSetting{"claude-code": {Off: true}}, ""},
		{"a directory that does not exist", map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(other, "none")}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, s := range Default().LocalSources(env(tc.env), home, tc.set, "", pricing.DefaultPrices()) {
				if s.System == "claude-code" {
					got = s.Dir
					b, err := s.Open()
					if err != nil || b.URL() != s.Dir || b.Name() != "claude-code" {
						t.Errorf("open: %v, %v", b, err)
					}
				}
			}
			if got != tc.want {
				t.Errorf("dir %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLocalSourcesPriced: each local CLI's sessions are priced at the
// table the caller gives (the config file's [prices] reach them) and keep
// their totals in the state directory.
func TestLocalSourcesPriced(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	project := filepath.Join(home, ".claude", "projects", "-w")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"assistant","sessionId":"s1","cwd":"/w","message":{"id":"m1","model":"claude-opus-9","role":"assistant","content":[],"usage":{"input_tokens":1000000,"output_tokens":0}}}` + "\n"
	if err := os.WriteFile(filepath.Join(project, "s1.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	prices := pricing.DefaultPrices().With(map[string]pricing.Price{"claude-opus-9": {Input: 7, Output: 30}}, "test")
	systems := map[string]bool{}
	for _, s := range Default().LocalSources(func(string) string { return "" }, home, nil, state, prices) {
		b, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		_, priced := b.(Priced)
		_, keeps := b.(TotalsKeeper)
		if !priced || !keeps {
			t.Errorf("%s: priced %v, keeps its totals %v", s.System, priced, keeps)
		}
		systems[s.System] = true
		if s.System != "claude-code" {
			continue
		}
		w, ok := b.(interface {
			WatchSessions(context.Context, func([]events.Task)) error
		})
		if !ok {
			t.Fatal("claude-code: no WatchSessions")
		}
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan string, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.WatchSessions(ctx, func(ts []events.Task) {
				if len(ts) == 1 && ts[0].HasCost {
					select {
					case got <- fmt.Sprintf("%.2f", ts[0].Cost):
					default:
					}
				}
			})
		}()
		select {
		case c := <-got:
			if c != "7.00" {
				t.Errorf("claude-code: cost %s, want 7.00 (the given table's price)", c)
			}
		case <-time.After(10 * time.Second):
			t.Error("claude-code: no cost listed")
		}
		cancel()
		<-done
	}
	if !systems["claude-code"] || !systems["codex"] {
		t.Errorf("sources %v", systems)
	}
}
