package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	pfake "github.com/perch-tui/perch/fakedaemon/pynchy"
	sfake "github.com/perch-tui/perch/fakedaemon/suna"
)

// restartable serves a fake on one address that a test can take down and
// bring back (the server's state lives on: a restart of its listener).
type restartable struct {
	t      *testing.T
	addr   string
	serve  func(context.Context, net.Listener) error
	cancel context.CancelFunc
	done   chan struct{}
}

func newRestartable(t *testing.T, serve func(context.Context, net.Listener) error) *restartable {
	r := &restartable{t: t, addr: "127.0.0.1:0", serve: serve}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start() {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger a moment after a stop
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); _ = r.serve(ctx, ln) }()
}

func (r *restartable) stop() {
	if r.cancel != nil {
		r.cancel()
		<-r.done
		r.cancel = nil
	}
}

// watchRun runs perch watch in-process until the test ends.
type watchRun struct {
	out, errb lockedBuffer
	cancel    context.CancelFunc
	done      chan int
}

func startWatch(t *testing.T, state string, args ...string) *watchRun {
	t.Helper()
	w := &watchRun{done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	env := Env{Stdin: strings.NewReader(""), Stdout: &w.out, Stderr: &w.errb, Home: t.TempDir(), Cwd: t.TempDir(),
		Getenv: func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return ""
		}}
	go func() { w.done <- Main(ctx, env, append([]string{"watch"}, args...)) }()
	t.Cleanup(func() { w.stop(t) })
	return w
}

func (w *watchRun) stop(t *testing.T) {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	if code := <-w.done; code != 0 {
		t.Errorf("watch exited %d: %s", code, w.errb.String())
	}
}

// waitFor waits until cond holds of the watch's output.
func (w *watchRun) waitFor(t *testing.T, what string, cond func(out, errs string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond(w.out.String(), w.errb.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; stdout:\n%s\nstderr:\n%s", what, w.out.String(), w.errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// changes are the watch's JSON lines as "source/session old→new reason".
func (w *watchRun) changes(t *testing.T, names map[string]string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(w.out.String()), "\n") {
		if line == "" {
			continue
		}
		var c changeJSON
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if c.Type == "source" {
			continue // a source's up or down (sourceLines)
		}
		src := names[c.Source]
		if src == "" {
			src = c.Source
		}
		out = append(out, src+"/"+c.Name+" "+c.Old+"→"+c.New+" "+c.Reason)
	}
	return out
}

// sessionGoes says whether the watch's JSON output has a session of
// source src going to state to.
func sessionGoes(out, src, to string) bool {
	for _, line := range strings.Split(out, "\n") {
		var c changeJSON
		if json.Unmarshal([]byte(line), &c) == nil && c.Type == "session" && c.Source == src && c.New == to {
			return true
		}
	}
	return false
}

// sourceLines are the watch's JSON lines of sources as "source up|down".
func (w *watchRun) sourceLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(w.out.String()), "\n") {
		var s sourceChangeJSON
		if json.Unmarshal([]byte(line), &s) == nil && s.Type == "source" {
			out = append(out, s.Source+" "+s.State)
		}
	}
	return out
}

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

// perch watch --json prints each change the scripted fakes make once:
// not the sessions that were there at its start, not again when a source
// restarts and lists them again.
func TestWatchPrintsEachChangeOnce(t *testing.T) {
	t.Parallel()
	state := t.TempDir()

	d := fakedaemon.New(fakedaemon.Options{Dialect: "head", Speed: fastSpeed, Seed: 7, HoldSlowTools: true})
	msrv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { msrv.Close() })
	// The demo task runs when the watch starts (held at its slow tool):
	// its run's end is its only line.
	if _, err := d.SeedDemo(); err != nil {
		t.Fatal(err)
	}

	p := pfake.New(pfake.Options{StepDelay: time.Millisecond})
	t.Cleanup(func() { p.Close() })
	psrv := newRestartable(t, p.Serve)
	pURL := "http://" + psrv.addr

	s := sfake.New(sfake.Options{FrameDelay: time.Millisecond})
	t.Cleanup(s.Close)
	sURL := serveOn(t, s.Serve) + "/v1"

	w := startWatch(t, state, "--json", "--url", msrv.URL, "--url", pURL, "--url", sURL)
	names := map[string]string{msrv.URL: "maria", pURL: "pynchy", sURL: "suna"}
	w.waitFor(t, "every source live", func(_, errs string) bool {
		return strings.Count(errs, ": live\n") == 3
	})
	lines := func() []string { return w.changes(t, names) }
	has := func(want string) func(string, string) bool {
		return func(string, string) bool { return count(lines(), want) > 0 }
	}

	d.ReleaseSlowTools()
	w.waitFor(t, "the demo's run to end", has("maria/What does this project do? Run the tests, build it, plan the fix and show me the diff. generating→idle reply"))

	// maria: a new task runs and ends.
	must(t, run(t, "", "new", "--url", msrv.URL, "--name", "fix the tests", "--cwd", "/tmp", "What does this project do?"))
	w.waitFor(t, "maria's run to end", has("maria/fix the tests generating→idle reply"))

	// pynchy: a run held mid-way, then let go.
	p.Hold()
	if err := p.Say("tui:main", "What is in this repository?"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "pynchy generating", has("pynchy/Main idle→generating "))
	p.Release()
	w.waitFor(t, "pynchy idle", has("pynchy/Main generating→idle reply"))

	// pynchy goes away and comes back: its list again is no change, its
	// going down and coming back a line each.
	psrv.stop()
	w.waitFor(t, "pynchy retrying", func(_, errs string) bool { return strings.Contains(errs, "source "+pURL+": retrying") })
	w.waitFor(t, "pynchy's down line", func(string, string) bool { return count(w.sourceLines(t), pURL+" down") == 1 })
	psrv.start()
	w.waitFor(t, "pynchy live again", func(_, errs string) bool { return strings.Count(errs, ": live\n") >= 4 })
	w.waitFor(t, "pynchy's up line", func(string, string) bool { return count(w.sourceLines(t), pURL+" up") == 2 })

	// Suna: a run held, then finished.
	s.Hold()
	tid, rid, err := s.Start("", "What is in my workspace?")
	if err != nil {
		t.Fatal(err)
	}
	_ = tid
	w.waitFor(t, "suna generating", func(out, _ string) bool { return sessionGoes(out, sURL, "generating") })
	s.Release()
	sunaWaitStatus(t, s, rid, "completed")
	w.waitFor(t, "suna idle", func(string, string) bool {
		n := 0
		for _, l := range lines() {
			if strings.HasPrefix(l, "suna/") {
				n++
			}
		}
		return n >= 2
	})

	// And pynchy once more, after its restart: exactly one more run.
	if err := p.Say("tui:main", "And the tests?"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "pynchy's second run", func(string, string) bool {
		return count(lines(), "pynchy/Main generating→idle reply") == 2
	})
	w.stop(t)

	got := lines()
	var sunaLines []string
	for _, l := range got {
		if strings.HasPrefix(l, "suna/") {
			sunaLines = append(sunaLines, l)
		}
	}
	want := map[string]int{
		"pynchy/Main idle→generating ":              2,
		"pynchy/Main generating→idle reply":         2,
		"maria/fix the tests generating→idle reply": 1,
		"maria/What does this project do? Run the tests, build it, plan the fix and show me the diff. generating→idle reply": 1,
	}
	for l, n := range want {
		if c := count(got, l); c != n {
			t.Errorf("%q printed %d times, want %d; all:\n%s", l, c, n, strings.Join(got, "\n"))
		}
	}
	if len(sunaLines) != 2 || !strings.HasSuffix(sunaLines[0], "→generating ") || !strings.HasSuffix(sunaLines[1], "generating→idle reply") {
		t.Errorf("suna's lines: %q", sunaLines)
	}
	var maria []string
	for _, l := range got {
		if strings.HasPrefix(l, "maria/") {
			maria = append(maria, l)
		}
	}
	if len(maria) != 3 || count(maria, "maria/fix the tests →generating ") != 1 {
		t.Errorf("maria's lines: %q (want the new task generating, then idle)", maria)
	}
	if len(got) != 9 {
		t.Errorf("%d lines, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// perch tasks --all over three sources, one of them down, one refusing
// the token, one answering as another system than its config says, and a
// session named with escapes, bidi controls and 10 KB of text: each
// source's row says what is wrong, nothing raw reaches the output, and
// the others' sessions are listed.
func TestTasksAllSourcesWithFailures(t *testing.T) {
	t.Parallel()
	d, mURL := fake(t, "head", fastSpeed)
	if _, err := d.SeedDemo(); err != nil {
		t.Fatal(err)
	}
	evil := "evil\x1b]52;c;aGk=\a\u202ename\x1b[2J" + strings.Repeat("z", 10<<10)
	must(t, run(t, "", "new", "--url", mURL, "--name", evil, "--cwd", "/tmp", "hi"))

	p := pfake.New(pfake.Options{})
	t.Cleanup(func() { p.Close() })
	pURL := serveOn(t, p.Serve)
	s := sfake.New(sfake.Options{Token: "right-token-123"})
	t.Cleanup(s.Close)
	sURL := serveOn(t, s.Serve) + "/v1"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + ln.Addr().String()
	ln.Close()

	conf := t.TempDir()
	if err := os.MkdirAll(filepath.Join(conf, "perch"), 0o700); err != nil {
		t.Fatal(err)
	}
	toml := `
[[source]]
name = "work suna"
url = "` + sURL + `"
backend = "suna"
token = "wrong-token-456"

[[source]]
name = "not suna"
url = "` + pURL + `"
backend = "suna"
`
	if err := os.WriteFile(filepath.Join(conf, "perch", "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	tweak := func(e *Env) {
		e.Getenv = func(k string) string {
			return map[string]string{"XDG_CONFIG_HOME": conf, "XDG_STATE_HOME": state}[k]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runEnv(ctx, t, tweak, "", "tasks", "--all", "--url", mURL, "--url", downURL)
	if r.code != 0 {
		t.Fatalf("tasks --all: %+v", r)
	}
	out := r.stdout
	if strings.ContainsAny(out, "\x1b\a\u202e") || strings.Contains(out, strings.Repeat("z", 200)) {
		t.Errorf("raw or unbounded text reached the output:\n%q", out)
	}
	if strings.Contains(out+r.stderr, "wrong-token-456") {
		t.Error("the token was printed")
	}
	rowOf := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", name, out)
		return ""
	}
	for name, want := range map[string]string{
		mURL:        "live",
		downURL:     "down retrying in",
		"work suna": "refused token",
		"not suna":  "answers as another system retrying in 1s (answers as pynchy, not suna)",
	} {
		if row := rowOf(name); !strings.Contains(row, want) {
			t.Errorf("row of %s: %q, want %q", name, row, want)
		}
	}
	if !strings.Contains(out, "evilname") || strings.Count(out, "What does this project do?") != 1 {
		t.Errorf("sessions:\n%s", out)
	}

	r = runEnv(ctx, t, tweak, "", "tasks", "--all", "--json", "--url", mURL, "--url", downURL)
	var b boardOut
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || r.code != 0 {
		t.Fatalf("tasks --all --json: %v %+v", err, r)
	}
	states := map[string]string{}
	for _, s := range b.Sources {
		states[s.Name] = s.State
	}
	if states[mURL] != "live" || states[downURL] != "down" || states["work suna"] != "refused token" || states["not suna"] != "answers as another system" {
		t.Errorf("source states: %v", states)
	}
	if len(b.Sessions) != 2 {
		t.Errorf("%d sessions, want maria's 2: %+v", len(b.Sessions), b.Sessions)
	}
	for _, s := range b.Sessions {
		if len([]rune(s.Name)) > 120 || strings.ContainsAny(s.Name, "\x1b\a\u202e") {
			t.Errorf("name %q", s.Name)
		}
	}
}

// perch watch --json prints a failed run as one change, generating →
// failed, with the system's reason, on every system: the lists say only
// idle, the run's summary (read once at its end) says failed.
func TestWatchPrintsFailedRuns(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	// maria's daemon writes a change's task as it is when written: a run
	// that fails before its "generating" change is written (8 ms at
	// fastSpeed, less than a loaded CI machine may take to schedule the
	// stream's writer) reads idle twice and is never seen. The failing
	// run takes 200 ms here.
	d := fakedaemon.New(fakedaemon.Options{Dialect: "head", Speed: 4, Seed: 7})
	msrv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { msrv.Close() })
	p := pfake.New(pfake.Options{StepDelay: time.Millisecond})
	t.Cleanup(func() { p.Close() })
	pURL := serveOn(t, p.Serve)
	s := sfake.New(sfake.Options{FrameDelay: time.Millisecond})
	t.Cleanup(s.Close)
	sURL := serveOn(t, s.Serve) + "/v1"

	w := startWatch(t, state, "--json", "--url", msrv.URL, "--url", pURL, "--url", sURL)
	w.waitFor(t, "every source live", func(_, errs string) bool {
		return strings.Count(errs, ": live\n") == 3
	})
	parsed := func(out string) []changeJSON {
		var cs []changeJSON
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var c changeJSON
			if json.Unmarshal([]byte(line), &c) == nil && c.Type == "session" {
				cs = append(cs, c)
			}
		}
		return cs
	}
	failed := func(src string) func(string, string) bool {
		return func(out, _ string) bool {
			for _, c := range parsed(out) {
				if c.Source == src && c.New == "failed" {
					return true
				}
			}
			return false
		}
	}

	must(t, run(t, "", "new", "--url", msrv.URL, "--name", "provider fails", "--cwd", "/tmp", "trigger a provider error"))
	w.waitFor(t, "maria's failed run", failed(msrv.URL))

	if err := p.Say("tui:main", "this one will fail"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "pynchy's failed run", failed(pURL))

	s.Hold()
	_, rid, err := s.Start("", "please fail now")
	if err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "suna generating", func(out, _ string) bool { return sessionGoes(out, sURL, "generating") })
	s.Release()
	sunaWaitStatus(t, s, rid, "failed")
	w.waitFor(t, "suna's failed run", failed(sURL))
	w.stop(t)

	detail := map[string]string{msrv.URL: "No auth credentials found", pURL: "Agent error occurred", sURL: "rate limit exceeded"}
	for _, c := range parsed(w.out.String()) {
		switch {
		case c.New == "failed":
			if c.Old != "generating" || c.Reason != "failed" || !strings.Contains(c.Detail, detail[c.Source]) {
				t.Errorf("%s: %s → %s (%s, %q), want generating → failed with %q", c.Source, c.Old, c.New, c.Reason, c.Detail, detail[c.Source])
			}
			delete(detail, c.Source)
		case c.Old == "generating":
			t.Errorf("%s: %s → %s: a failed run's end printed as not failed", c.Source, c.Old, c.New)
		}
	}
	if len(detail) != 0 {
		t.Errorf("no failed change from %v; all:\n%s", detail, w.out.String())
	}
}
