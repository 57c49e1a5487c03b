package tmuxinfo

import (
	"errors"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeEnv is a process environment for start.
type fakeEnv map[string]string

func (e fakeEnv) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }
func (e fakeEnv) environ() []string {
	var s []string
	for k, v := range e {
		s = append(s, k+"="+v)
	}
	return s
}
func (e fakeEnv) unset(k string) error  { delete(e, k); return nil }
func (e fakeEnv) set(k, v string) error { e[k] = v; return nil }

const infoTrueColor = `  1: acsc: (string) ++,,--..00
197: RGB: [missing]
224: Tc: (flag) true
`

const info256 = `  1: acsc: (string) ++,,--..00
197: RGB: [missing]
224: Tc: [missing]
`

func TestStartAsksTmuxWithTMUXAndHidesIt(t *testing.T) {
	tests := []struct {
		name   string
		out    string
		err    error
		wantTC bool
	}{
		{"Tc", infoTrueColor, nil, true},
		{"RGB", "12: RGB: (flag) true\n", nil, true},
		{"neither", info256, nil, false},
		{"tmux fails", infoTrueColor, errors.New("exit status 1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := fakeEnv{"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "tmux-256color"}
			seen := make(chan []string, 1)
			q := start(env.lookup, env.environ, env.unset, env.set, func(e []string) ([]byte, error) {
				seen <- e
				return []byte(tt.out), tt.err
			})
			if q == nil {
				t.Fatal("no query inside tmux")
			}
			if _, ok := env["TMUX"]; ok {
				t.Error("TMUX still visible after start: lipgloss would ask tmux again")
			}
			childEnv := <-seen
			found := false
			for _, kv := range childEnv {
				found = found || kv == "TMUX=/tmp/tmux-0/default,1,0"
			}
			if !found {
				t.Errorf("tmux info ran without TMUX (it could not find its server): %q", childEnv)
			}
			tc, answered := q.TrueColor(10 * time.Second)
			if !answered || tc != tt.wantTC {
				t.Errorf("TrueColor = %v, %v; want %v, true", tc, answered, tt.wantTC)
			}
			q.Restore()
			q.Restore()
			if env["TMUX"] != "/tmp/tmux-0/default,1,0" {
				t.Errorf("TMUX after Restore = %q", env["TMUX"])
			}
		})
	}
}

func TestStartOutsideTmuxDoesNothing(t *testing.T) {
	for _, env := range []fakeEnv{{"TERM": "xterm"}, {"TMUX": ""}} {
		q := start(env.lookup, env.environ, env.unset, env.set, func([]string) ([]byte, error) {
			t.Error("tmux info ran outside tmux")
			return nil, nil
		})
		if q != nil {
			t.Errorf("a query outside tmux (%v)", env)
		}
		q.Restore() // nil-safe
		if tc, answered := q.TrueColor(time.Millisecond); tc || answered {
			t.Errorf("nil query answered %v, %v", tc, answered)
		}
	}
}

func TestTrueColorGivesUpOnASlowTmux(t *testing.T) {
	env := fakeEnv{"TMUX": "x"}
	release := make(chan struct{})
	q := start(env.lookup, env.environ, env.unset, env.set, func([]string) ([]byte, error) {
		<-release
		return []byte(infoTrueColor), nil
	})
	if tc, answered := q.TrueColor(20 * time.Millisecond); tc || answered {
		t.Errorf("TrueColor before tmux answered = %v, %v; want false, false", tc, answered)
	}
	close(release)
	if tc, answered := q.TrueColor(10 * time.Second); !tc || !answered {
		t.Errorf("TrueColor after tmux answered = %v, %v", tc, answered)
	}
}

// Start runs before lipgloss's initialisation in both programs, or hiding
// TMUX would come too late: checked on the programs themselves in their
// main packages' tests (TestTmuxInfoInitialisesBeforeLipgloss).

func TestOnlyATerminalOrTTYForceIsWorthAsking(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if mayBeTerminal(f) {
		t.Error("a regular file taken for a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if mayBeTerminal(w) {
		t.Error("a pipe taken for a terminal")
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if !mayBeTerminal(null) {
			t.Error("a character device not taken for a possible terminal")
		}
	}
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "true": true, "yes": false} {
		if got := ttyForced(v); got != want {
			t.Errorf("ttyForced(%q) = %v", v, got)
		}
	}
}

func TestStartWithoutAskingOnlyHides(t *testing.T) {
	env := fakeEnv{"TMUX": "/tmp/tmux-0/default,1,0"}
	q := start(env.lookup, env.environ, env.unset, env.set, nil)
	if _, ok := env["TMUX"]; ok || q == nil {
		t.Fatalf("TMUX visible (%v) or no query (%v)", ok, q)
	}
	if tc, answered := q.TrueColor(time.Second); tc || answered {
		t.Errorf("a query that asked nothing answered %v, %v", tc, answered)
	}
	q.Restore()
	if env["TMUX"] != "/tmp/tmux-0/default,1,0" {
		t.Errorf("TMUX after Restore = %q", env["TMUX"])
	}
}
