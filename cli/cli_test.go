package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testpar"
	"github.com/perch-tui/perch/internal/testproxy"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Most of these tests wait on fakes and timers: run eight at once.
func TestMain(m *testing.M) {
	testpar.Raise(8)
	goleak.VerifyTestMain(m)
}

// fake starts the fake daemon on loopback.
func fake(t *testing.T, dialect fakedaemon.Dialect, speed float64) (*fakedaemon.Daemon, string) {
	t.Helper()
	return fakeWith(t, fakedaemon.Options{Dialect: dialect, Speed: speed, Seed: 7})
}

// fakeWith starts the fake daemon with opts on loopback.
func fakeWith(t *testing.T, opts fakedaemon.Options) (*fakedaemon.Daemon, string) {
	t.Helper()
	d := fakedaemon.New(opts)
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return d, srv.URL
}

// heldFake is a fast fake daemon whose slow tool (the benchmark) runs
// until the test calls ReleaseSlowTools: conversations that must act while
// it runs (send while busy, cancel) do so however loaded the machine is,
// without waiting seconds for it.
func heldFake(t *testing.T, dialect fakedaemon.Dialect) (*fakedaemon.Daemon, string) {
	t.Helper()
	return fakeWith(t, fakedaemon.Options{Dialect: dialect, Speed: fastSpeed, Seed: 7, HoldSlowTools: true})
}

// fastSpeed paces the fake agent for tests that check what perch shows,
// not how it copes with time: a model reply takes 8 ms, a tool 3 ms.
const fastSpeed = 100

type result struct {
	code           int
	stdout, stderr string
}

// run runs perch in-process.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runCtx(ctx, t, stdin, args...)
}

func runCtx(ctx context.Context, t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runEnv(ctx, t, nil, stdin, args...)
}

// runEnv is runCtx with a chance to change the Env (home, resolver).
func runEnv(ctx context.Context, t *testing.T, tweak func(*Env), stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
	if tweak != nil {
		tweak(&env)
	}
	code := Main(ctx, env, args)
	return result{code, out.String(), errb.String()}
}

func must(t *testing.T, r result) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	return r
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_[0-9A-Za-z]+`)

// canon replaces ids by their order of appearance and the task's working
// directory by $CWD, so goldens don't depend on randomness or temp dirs.
func canon(s, cwd string) string {
	if cwd != "" {
		s = strings.ReplaceAll(s, cwd, "$CWD")
	}
	seen := map[string]string{}
	s = uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := seen[id]; ok {
			return v
		}
		seen[id] = fmt.Sprintf("<id%d>", len(seen)+1)
		return seen[id]
	})
	// docs dialect ids are small integers in "id" fields of user/assistant.
	return regexp.MustCompile(`"id":"\d+"`).ReplaceAllString(s, `"id":"<n>"`)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "export", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (go test ./cli -update): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// conversation drives one scripted conversation of a heldFake to its end
// and returns the task id and its cwd.
func conversation(t *testing.T, d *fakedaemon.Daemon, base, kind string) (string, string) {
	t.Helper()
	cwd := t.TempDir()
	first := map[string]string{
		"basic":   "What does this project do? Look at the README.",
		"queue":   "Run the slow benchmark please.",
		"failing": "Build the project.",
		"cancel":  "Run the slow benchmark please.",
	}[kind]
	id := strings.TrimSpace(must(t, run(t, "", "new", "--url", base, "--cwd", cwd, first)).stdout)
	switch kind {
	case "queue", "cancel":
		waitRunningTool(t, base, id)
		r := must(t, run(t, "", "send", id, "Also add a CHANGELOG entry.", "--url", base, "--json"))
		if !strings.Contains(r.stdout, `"queued": true`) {
			t.Fatalf("second message not queued: %s", r.stdout)
		}
		if kind == "cancel" {
			r := must(t, run(t, "", "cancel", "--url", base, id))
			if !strings.Contains(r.stdout, "Also add a CHANGELOG entry.") {
				t.Fatalf("cancel did not recover the queued text: %s", r.stdout)
			}
		}
	}
	d.ReleaseSlowTools()
	return id, cwd
}

// waitRunningTool waits until the task is running its slow tool.
func waitRunningTool(t *testing.T, base, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r := run(t, "", "export", id, "--url", base, "--format", "jsonl")
		if strings.Contains(r.stdout, `"status":"running"`) && strings.Contains(r.stdout, "bench") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the slow tool never ran")
}

// TestExportGolden: for the basic, queue, failing and cancel conversations
// in every dialect, `perch export --format jsonl --until-idle` equals golden
// files.
func TestExportGolden(t *testing.T) {
	t.Parallel()
	for _, dialect := range []fakedaemon.Dialect{"head", "docs", "legacy"} {
		for _, kind := range []string{"basic", "queue", "failing", "cancel"} {
			t.Run(string(dialect)+"/"+kind, func(t *testing.T) {
				t.Parallel()
				d, base := heldFake(t, dialect)
				id, cwd := conversation(t, d, base, kind)
				r := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle"))
				golden(t, kind+"."+string(dialect)+".jsonl", canon(r.stdout, cwd))
			})
		}
	}
}

// TestCutStreamSameExport: a stream cut every few events gives the same
// export as an uninterrupted one, with nothing lost or doubled.
func TestCutStreamSameExport(t *testing.T) {
	t.Parallel()
	for _, dialect := range []fakedaemon.Dialect{"head", "docs"} {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			d, base := heldFake(t, dialect)
			id, cwd := conversation(t, d, base, "queue")
			direct := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle")).stdout
			proxy := testproxy.Cut(t, base, 5, nil)
			cut := must(t, run(t, "", "export", id, "--url", proxy.URL+"/v1", "--format", "jsonl", "--until-idle")).stdout
			if canon(cut, cwd) != canon(direct, cwd) {
				t.Fatalf("cut stream differs:\n%s\nvs\n%s", cut, direct)
			}
		})
	}
}

// TestDaemonRestartSameExport: the daemon goes away mid-stream and comes
// back on the same port; tail-style following ends with the same export.
func TestDaemonRestartSameExport(t *testing.T) {
	t.Parallel()
	_, base := fake(t, "head", 4)
	u, _ := url.Parse(base)
	p := &testproxy.TCP{Addr: "127.0.0.1:0", Target: u.Host}
	p.Start(t)
	defer p.Stop()
	pbase := "http://" + p.Addr + "/v1"

	cwd := t.TempDir()
	id := strings.TrimSpace(must(t, run(t, "", "new", "--url", base, "--cwd", cwd, "Run the slow benchmark please, then make a todo plan.")).stdout)
	done := make(chan result, 1)
	go func() {
		done <- runCtx(context.Background(), t, "", "export", id, "--url", pbase, "--format", "jsonl", "--until-idle")
	}()
	// Wait until the task's stream flows through the proxy (its replay is
	// kilobytes; the lookup before it is a few hundred bytes).
	for deadline := time.Now().Add(20 * time.Second); p.Down() < 4096; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the export's stream never flowed through the proxy")
		}
	}
	p.Stop() // the daemon disappears mid-run
	time.Sleep(700 * time.Millisecond)
	p.Start(t) // and comes back on the same port
	var r result
	select {
	case r = <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("export never finished after the daemon came back")
	}
	must(t, r)
	direct := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle")).stdout
	if canon(r.stdout, cwd) != canon(direct, cwd) {
		t.Fatalf("export across a restart differs:\n%s\nvs\n%s", r.stdout, direct)
	}
	if !strings.Contains(direct, `"type":"state","status":"idle"`) {
		t.Fatalf("run did not finish: %s", direct)
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", 20)
	cwd := t.TempDir()
	id := strings.TrimSpace(must(t, run(t, "", "new", "Say hello", "--url", base, "--cwd", cwd, "--name", "greeting")).stdout)
	if len(id) != 36 {
		t.Fatalf("new printed %q", id)
	}
	// flags after the arguments, and a prefix for the task id
	r := must(t, run(t, "", "export", id[:6], "--format", "md", "--until-idle", "--url", base))
	if !strings.Contains(r.stdout, "Say hello") || !strings.Contains(r.stdout, "## Assistant") {
		t.Fatalf("export md: %s", r.stdout)
	}
	r = must(t, run(t, "", "tasks", "--url", base))
	if !strings.Contains(r.stdout, id[:8]) || !strings.Contains(r.stdout, "greeting") || !strings.Contains(r.stdout, "idle") {
		t.Fatalf("tasks: %s", r.stdout)
	}
	r = must(t, run(t, "", "--url", base, "tasks", "--json"))
	if !strings.Contains(r.stdout, `"id": "`+id) || !strings.Contains(r.stdout, `"cwd": "`+cwd) {
		t.Fatalf("tasks --json: %s", r.stdout)
	}
	// send from stdin
	r = must(t, run(t, "read the readme\n", "send", id, "-", "--url", base))
	if !strings.HasPrefix(r.stdout, "sent (message ") {
		t.Fatalf("send: %s", r.stdout)
	}
	got := d.Received(id)
	if len(got) != 2 || got[1] != "read the readme" {
		t.Fatalf("daemon received %q", got)
	}
	must(t, run(t, "", "export", id, "--until-idle", "--url", base, "--format", "json"))
	// cancel when idle, queue when empty
	r = must(t, run(t, "", "cancel", id, "--url", base))
	if !strings.Contains(r.stdout, "Nothing to cancel") {
		t.Fatalf("cancel idle: %s", r.stdout)
	}
	r = must(t, run(t, "", "queue", id, "--url", base))
	if !strings.Contains(r.stdout, "No queued messages") {
		t.Fatalf("queue: %s", r.stdout)
	}
	// record then replay offline
	rec := filepath.Join(t.TempDir(), "s.sse")
	r = must(t, run(t, "", "record", id, "-o", rec, "--until-idle", "--url", base))
	if n := strings.Count(r.stderr, "answers as"); n > 1 || !strings.Contains(r.stderr, "perch: recorded ") {
		t.Fatalf("record's stderr (the URL probed %d times):\n%s", n, r.stderr)
	}
	r = must(t, run(t, "", "replay", rec, "--format", "jsonl"))
	live := must(t, run(t, "", "export", id, "--format", "jsonl", "--url", base)).stdout
	if r.stdout != live {
		t.Fatalf("replay of the recording differs from the live export:\n%s\nvs\n%s", r.stdout, live)
	}
	r = must(t, run(t, "", "replay", rec))
	if !strings.Contains(r.stdout, "▌ You") || !strings.Contains(r.stdout, "read_file") {
		t.Fatalf("replay text: %s", r.stdout)
	}
	// tail follows until interrupted
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	r = runCtx(ctx, t, "", "tail", id, "--url", base)
	if r.code != 0 || !strings.Contains(r.stdout, "Following task") || !strings.Contains(r.stdout, "Say hello") {
		t.Fatalf("tail: %+v", r)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel2()
	r = runCtx(ctx2, t, "", "tail", id, "--jsonl", "--url", base)
	if !strings.Contains(r.stdout, `{"type":"user"`) || !strings.Contains(r.stdout, `{"type":"state"`) {
		t.Fatalf("tail --jsonl: %+v", r)
	}
}

func TestQueueAndCancelRecoverText(t *testing.T) {
	t.Parallel()
	_, base := heldFake(t, "legacy")
	cwd := t.TempDir()
	id := strings.TrimSpace(must(t, run(t, "", "new", "--url", base, "--cwd", cwd, "Run the slow benchmark please.")).stdout)
	waitRunningTool(t, base, id)
	r := must(t, run(t, "", "send", "--url", base, id, "Then tell me a joke"))
	if !strings.HasPrefix(r.stdout, "queued") {
		t.Fatalf("send while busy: %s", r.stdout)
	}
	r = must(t, run(t, "", "queue", id, "--url", base))
	if !strings.Contains(r.stdout, "Then tell me a joke") {
		t.Fatalf("queue: %s", r.stdout)
	}
	r = must(t, run(t, "", "cancel", id, "--url", base))
	if !strings.Contains(r.stdout, "Recovered 1 queued message") || !strings.Contains(r.stdout, "Then tell me a joke") {
		t.Fatalf("cancel: %s", r.stdout)
	}
}

func TestErrorsSpeakToPeople(t *testing.T) {
	t.Parallel()
	_, base := fake(t, "head", 20)
	// A daemon that is down: a closed port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	r := run(t, "", "tasks", "--url", down)
	if r.code != 1 || !strings.Contains(r.stderr, ln.Addr().String()) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Fatalf("daemon down: %+v", r)
	}
	if !strings.Contains(r.stderr, "--url") && !strings.Contains(r.stderr, "PERCH_URL") {
		t.Fatalf("no hint: %s", r.stderr)
	}
	// A message that cannot be delivered is kept as held, and its local id
	// is printed.
	r = run(t, "", "send", "deadbeef", "my precious text", "--url", down)
	if r.code != 1 || !regexp.MustCompile(`kept as held message [a-z2-7]{6} of task deadbeef`).MatchString(r.stderr) {
		t.Fatalf("undelivered: %+v", r)
	}
	// With nothing to keep it in (no such task), it is printed back.
	r = run(t, "", "send", "ffffffff", "my precious text", "--url", base)
	if r.code != 1 || !strings.Contains(r.stderr, "my precious text") {
		t.Fatalf("no such task: %+v", r)
	}
	r = run(t, "", "export", "ffffffff", "--url", base)
	if r.code != 1 || !strings.Contains(r.stderr, "ffffffff") {
		t.Fatalf("no such task: %+v", r)
	}
	// Ambiguous prefix: two tasks share the empty prefix "".
	must(t, run(t, "", "new", "--url", base, "--cwd", t.TempDir(), "one"))
	must(t, run(t, "", "new", "--url", base, "--cwd", t.TempDir(), "two"))
	r = run(t, "", "queue", "", "--url", base)
	if r.code == 0 {
		t.Fatalf("ambiguous prefix accepted: %+v", r)
	}
	// A 409 from the daemon (a second running task on the same cwd) says so.
	cwd := t.TempDir()
	must(t, run(t, "", "new", "--url", base, "--cwd", cwd, "Run the slow benchmark please."))
	r = run(t, "", "new", "--url", base, "--cwd", cwd, "again")
	if r.code != 1 || !strings.Contains(r.stderr, "409") || !strings.Contains(r.stderr, "again") {
		t.Fatalf("409: %+v", r)
	}
	// Usage errors exit 2.
	for _, args := range [][]string{{"bogus"}, {"send", "x"}, {"export", "x", "--format", "pdf"}, {"tasks", "--nope"}, {"record", "x", "--url", base}} {
		if r := run(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d (%s)", args, r.code, r.stderr)
		}
	}
	// --help on every command, with examples.
	for _, c := range commands() {
		r := run(t, "", c.name, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "perch "+c.name) {
			t.Errorf("%s --help: %+v", c.name, r)
		}
	}
	if r := run(t, "", "--help"); r.code != 0 || !strings.Contains(r.stdout, "fake-daemon") {
		t.Errorf("--help: %+v", r)
	}
	// Header values never show up in errors.
	r = run(t, "", "tasks", "--url", down, "--header", "Authorization: Bearer sekrit-token")
	if strings.Contains(r.stderr+r.stdout, "sekrit") {
		t.Fatalf("header leaked: %s", r.stderr)
	}
	_ = client.ErrNotRunning
}

// homeWithDaemonJSON makes a home directory whose .moonagent/daemon.json
// names port, as `maria daemon` writes it.
func homeWithDaemonJSON(t *testing.T, port string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".moonagent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte(`{"version":"0.1.0","pid":4242,"port":`+port+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// Issue 7: a daemon on [::1] only, found through daemon.json alone, on a
// host whose localhost is 127.0.0.1 only. Requests and streams get there.
func TestDiscoveryReachesIPv6OnlyDaemon(t *testing.T) {
	d := fakedaemon.New(fakedaemon.Options{Dialect: "head", Speed: 20, Seed: 7})
	srv, err := d.Start("[::1]:0")
	if err != nil {
		t.Skipf("this machine has no IPv6 loopback: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	home := homeWithDaemonJSON(t, port)
	var lookups atomic.Int32
	ipv4Only := func(e *Env) {
		e.Home = home
		e.LookupHost = func(_ context.Context, host string) ([]string, error) {
			lookups.Add(1)
			if host != "localhost" {
				return nil, fmt.Errorf("unexpected lookup of %q", host)
			}
			return []string{"127.0.0.1"}, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	id := strings.TrimSpace(must(t, runEnv(ctx, t, ipv4Only, "", "new", "Say hello", "--cwd", t.TempDir(), "--name", "greeting")).stdout)
	if len(id) != 36 {
		t.Fatalf("new printed %q", id)
	}
	r := must(t, runEnv(ctx, t, ipv4Only, "", "tasks"))
	if !strings.Contains(r.stdout, id[:8]) || !strings.Contains(r.stdout, "greeting") {
		t.Fatalf("tasks: %s", r.stdout)
	}
	// export follows the task's event stream.
	r = must(t, runEnv(ctx, t, ipv4Only, "", "export", id[:6], "--format", "md", "--until-idle"))
	if !strings.Contains(r.stdout, "Say hello") || !strings.Contains(r.stdout, "## Assistant") {
		t.Fatalf("export: %s", r.stdout)
	}
	if lookups.Load() == 0 {
		t.Error("the injected resolver was never asked; the test proves nothing")
	}

	// An explicit --url localhost falls back the same way.
	r = must(t, runEnv(ctx, t, ipv4Only, "", "tasks", "--url", "http://localhost:"+port+"/v1"))
	if !strings.Contains(r.stdout, id[:8]) {
		t.Fatalf("tasks --url localhost: %s", r.stdout)
	}
	// An explicit 127.0.0.1 is used as given, and fails.
	r = runEnv(ctx, t, ipv4Only, "", "tasks", "--url", "http://127.0.0.1:"+port+"/v1")
	if r.code != 1 || strings.Contains(r.stderr, "[::1]") {
		t.Fatalf("tasks --url 127.0.0.1: %+v", r)
	}
}

// Nothing listens where daemon.json points: one line naming the URL, every
// loopback address tried, and --url; no header value.
func TestDiscoveryNothingAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	home := homeWithDaemonJSON(t, port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := runEnv(ctx, t, func(e *Env) {
		e.Home = home
		e.LookupHost = func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	}, "", "tasks", "--header", "Authorization: Bearer sekrit-token")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, s := range []string{"http://localhost:" + port + "/v1/tasks", "[::1]:" + port, "127.0.0.1:" + port, "--url"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr %q lacks %q", r.stderr, s)
		}
	}
	if strings.Contains(r.stderr+r.stdout, "sekrit") {
		t.Errorf("header leaked: %s", r.stderr)
	}
}
