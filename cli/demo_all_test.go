package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// perch demo --all --serve runs the three fakes with their scripted
// sessions; perch tasks --all and perch watch see every one of them.
func TestDemoAllServe(t *testing.T) {
	t.Parallel()
	var out, errb lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Home: t.TempDir(), Cwd: t.TempDir(),
		Getenv: func(string) string { return "" }}
	go func() { done <- Main(ctx, env, []string{"demo", "--all", "--serve", "--speed", "20"}) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("demo --all --serve exited %d: %s", code, errb.String())
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "\n") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no URLs: %q %q", out.String(), errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	urls := map[string]string{}
	var args []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		name, u, _ := strings.Cut(l, " ")
		urls[u] = name
		args = append(args, "--url", u)
	}
	if len(urls) != 3 {
		t.Fatalf("URLs: %q", out.String())
	}

	state := t.TempDir()
	w := startWatch(t, state, append([]string{"--json"}, args...)...)
	// The script creates sessions on maria and Suna and sends to pynchy
	// within 8 s at speed 20: the watch sees a change on every source.
	w.waitFor(t, "a change on every source", func(o, _ string) bool {
		for u := range urls {
			changed := false
			for _, l := range strings.Split(o, "\n") {
				var c changeJSON
				changed = changed || json.Unmarshal([]byte(l), &c) == nil && c.Type == "session" && c.Source == u
			}
			if !changed {
				return false
			}
		}
		return true
	})
	w.stop(t)

	r := runEnv(context.Background(), t, nil, "", append([]string{"tasks", "--all", "--json"}, args...)...)
	var b boardOut
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || r.code != 0 {
		t.Fatalf("tasks --all: %v %+v", err, r)
	}
	systems := map[string]int{}
	for _, s := range b.Sessions {
		systems[s.System]++
	}
	if systems["maria"] < 2 || systems["suna"] < 2 || systems["pynchy"] < 1 {
		t.Errorf("sessions per system: %v", systems)
	}
}
