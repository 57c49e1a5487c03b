package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/internal/testproxy"
)

// stateRun runs perch with XDG_STATE_HOME set to state, so that several
// runs share one outbox, as commands of one user do.
func stateRun(t *testing.T, state, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runEnv(ctx, t, func(e *Env) {
		e.Getenv = func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return ""
		}
	}, stdin, args...)
}

type queueJSON struct {
	Daemon []struct{ ID, Text string } `json:"daemon"`
	Held   []struct {
		ID     string `json:"id"`
		Text   string `json:"text"`
		Paused bool   `json:"paused"`
		Orphan bool   `json:"orphan"`
		Error  string `json:"error"`
	} `json:"held"`
}

func queueOf(t *testing.T, r result) queueJSON {
	t.Helper()
	var q queueJSON
	if err := json.Unmarshal([]byte(r.stdout), &q); err != nil {
		t.Fatalf("queue --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return q
}

func heldTexts(q queueJSON) []string {
	var out []string
	for _, h := range q.Held {
		out = append(out, h.Text)
	}
	return out
}

// waitIdle waits for the task's run to end.
func waitIdle(t *testing.T, base, id string) {
	t.Helper()
	must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle"))
}

// Three held messages, edited, reordered and one deleted from the command
// line, then released one at a time, each after the previous turn ended:
// delivered in the new order, as separate turns, each exactly once.
func TestHeldMessagesCLI(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", 20)
	state := t.TempDir()
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, text := range []string{"first", "second", "third ✓ «ü»"} {
		r := must(t, stateRun(t, state, "", "send", id[:8], text, "--hold", "--json", "--url", base))
		var out map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out["held"] != true || len(out) != 2 {
			t.Fatalf("send --hold --json: %s", r.stdout)
		}
		ids = append(ids, out["id"].(string))
	}
	if got := d.Received(id); len(got) != 0 {
		t.Fatalf("held messages reached the daemon: %q", got)
	}
	q := queueOf(t, must(t, stateRun(t, state, "", "queue", id[:8], "--json", "--url", base)))
	if q.Daemon == nil || len(q.Daemon) != 0 || !slices.Equal(heldTexts(q), []string{"first", "second", "third ✓ «ü»"}) {
		t.Fatalf("queue: %+v", q)
	}
	for i, h := range q.Held {
		if h.ID != ids[i] || h.Paused || h.Error != "" {
			t.Fatalf("held %d: %+v", i, h)
		}
	}
	// Edit (a unique prefix of the id works), move, delete.
	must(t, stateRun(t, state, "second, edited\n", "queue", id[:8], "--edit", ids[1][:4], "-", "--url", base))
	must(t, stateRun(t, state, "", "queue", id[:8], "--move", ids[2], "1", "--url", base))
	r := must(t, stateRun(t, state, "", "queue", id[:8], "--delete", ids[0], "--url", base))
	if !strings.Contains(r.stdout, "deleted "+ids[0]) {
		t.Fatalf("delete: %s", r.stdout)
	}
	must(t, stateRun(t, state, "", "queue", id[:8], "--pause", "--url", base))
	q = queueOf(t, must(t, stateRun(t, state, "", "queue", id[:8], "--json", "--url", base)))
	want := []string{"third ✓ «ü»", "second, edited"}
	if !slices.Equal(heldTexts(q), want) || !q.Held[0].Paused {
		t.Fatalf("after the changes: %+v", q)
	}
	must(t, stateRun(t, state, "", "queue", id[:8], "--resume", "--url", base))
	r = must(t, stateRun(t, state, "", "queue", id[:8], "--url", base))
	if !strings.Contains(r.stdout, "2 held messages") || strings.Index(r.stdout, "third") > strings.Index(r.stdout, "second, edited") {
		t.Fatalf("queue text: %s", r.stdout)
	}
	// Bad ids and positions are usage errors.
	for _, args := range [][]string{{"--delete", "zzzzzz"}, {"--move", ids[1], "0"}, {"--edit", ids[1]}, {"--pause", "--resume"}} {
		if r := stateRun(t, state, "", append([]string{"queue", id[:8], "--url", base}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
	// Released one at a time, after each turn.
	for i := range want {
		r := must(t, stateRun(t, state, "", "queue", id[:8], "--release", "--url", base))
		if !strings.Contains(r.stdout, "sent (message ") {
			t.Fatalf("release %d: %s", i, r.stdout)
		}
		waitIdle(t, base, id)
	}
	if got := d.Received(id); !slices.Equal(got, want) {
		t.Fatalf("daemon received %q, want %q", got, want)
	}
	exp := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl")).stdout
	if strings.Count(exp, `{"type":"user"`) != 2 || strings.Count(exp, `{"type":"assistant"`) < 2 {
		t.Fatalf("not two turns:\n%s", exp)
	}
	q = queueOf(t, must(t, stateRun(t, state, "", "queue", id, "--json", "--url", base)))
	if len(q.Held) != 0 {
		t.Fatalf("left: %+v", q)
	}
	if r := stateRun(t, state, "", "queue", id, "--release", "--url", base); r.code != 2 {
		t.Fatalf("release with nothing held: %+v", r)
	}
}

// Messages sent while the daemon is down are kept, and delivered once it
// is back on the same port, each exactly once, in order.
func TestSendWhileDaemonDown(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", 20)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	p := &testproxy.TCP{Addr: "127.0.0.1:0", Target: u.Host}
	p.Start(t)
	pbase := "http://" + p.Addr + "/v1"
	state := t.TempDir()
	// Known to this outbox before the outage.
	must(t, stateRun(t, state, "", "send", id, "hello", "--url", pbase))
	waitIdle(t, base, id)
	p.Stop()

	idRE := regexp.MustCompile(`kept as held message ([a-z2-7]{6})`)
	var local []string
	for i, text := range []string{"one", "two", "three"} {
		args := []string{"send", id[:8], text, "--url", pbase}
		if i == 2 {
			args = append(args, "--json")
		}
		r := stateRun(t, state, "", args...)
		m := idRE.FindStringSubmatch(r.stderr)
		if r.code != 1 || m == nil {
			t.Fatalf("send %q while down: %+v", text, r)
		}
		local = append(local, m[1])
		if i == 2 && !strings.Contains(r.stdout, `"held": true`) {
			t.Fatalf("--json while down: %s", r.stdout)
		}
	}
	r := stateRun(t, state, "", "queue", id[:6], "--json", "--url", pbase)
	q := queueOf(t, r)
	if r.code != 1 || q.Daemon != nil || !slices.Equal(heldTexts(q), []string{"one", "two", "three"}) || q.Held[0].Error == "" {
		t.Fatalf("queue while down: %+v %+v", r, q)
	}
	// Typed while the daemon was unreachable, the task's prefix names
	// nothing on disk: the held messages follow it to the full id.
	p.Start(t)
	r = must(t, stateRun(t, state, "", "queue", id[:8], "--release", "--url", pbase))
	if !strings.HasPrefix(r.stdout, local[0]+": ") {
		t.Fatalf("release: %s", r.stdout)
	}
	r = must(t, stateRun(t, state, "", "send", id[:8], "four", "--url", pbase))
	if !strings.Contains(r.stderr, "first delivered 2 earlier messages") {
		t.Fatalf("send after the outage: %+v", r)
	}
	waitIdle(t, base, id)
	if got, want := d.Received(id), []string{"hello", "one", "two", "three", "four"}; !slices.Equal(got, want) {
		t.Fatalf("daemon received %q, want %q", got, want)
	}
	q = queueOf(t, must(t, stateRun(t, state, "", "queue", id, "--json", "--url", pbase)))
	if len(q.Held) != 0 {
		t.Fatalf("left: %+v", q)
	}
	p.Stop()
}

// Cancel brings the daemon's pending messages back as held messages at the
// front of perch's queue, in order, and pauses auto-delivery.
func TestCancelHoldsRecovered(t *testing.T) {
	t.Parallel()
	_, base := heldFake(t, "legacy")
	state := t.TempDir()
	id := strings.TrimSpace(must(t, run(t, "", "new", "--url", base, "--cwd", t.TempDir(), "Run the slow benchmark please.")).stdout)
	must(t, stateRun(t, state, "", "send", id, "already held", "--hold", "--url", base))
	waitRunningTool(t, base, id)
	for _, text := range []string{"Then tell me a joke", "and a second one"} {
		r := must(t, stateRun(t, state, "", "send", id, text, "--url", base))
		if !strings.HasPrefix(r.stdout, "queued") {
			t.Fatalf("send while busy: %s", r.stdout)
		}
	}
	r := must(t, stateRun(t, state, "", "cancel", id, "--url", base))
	if !strings.Contains(r.stdout, "Recovered 2 queued messages") || strings.Count(r.stdout, "(held as ") != 2 {
		t.Fatalf("cancel: %s", r.stdout)
	}
	q := queueOf(t, must(t, stateRun(t, state, "", "queue", id, "--json", "--url", base)))
	want := []string{"Then tell me a joke", "and a second one", "already held"}
	if len(q.Daemon) != 0 || !slices.Equal(heldTexts(q), want) || !q.Held[0].Paused {
		t.Fatalf("after cancel: %+v", q)
	}
}

// daemonWithTask serves a fake daemon (seed 7: its ids are the same at
// each start) with one task on a free port.
func daemonWithTask(t *testing.T) (*fakedaemon.Daemon, *fakedaemon.Server, string) {
	t.Helper()
	d := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 7})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return d, srv, id
}

// A task the daemon no longer has: its held messages stay listed, with the
// reason once a delivery was refused, until the user deletes them.
func TestHeldMessagesOfADeletedTask(t *testing.T) {
	t.Parallel()
	_, srv, id := daemonWithTask(t)
	base := srv.URL
	state := t.TempDir()
	r := must(t, stateRun(t, state, "", "send", id, "for later", "--hold", "--json", "--url", base))
	var held struct{ ID string }
	json.Unmarshal([]byte(r.stdout), &held)
	srv.Close()
	// Another daemon on the same address, without that task.
	u, _ := url.Parse(base)
	srv2, err := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 8}).Start(u.Host)
	if err != nil {
		t.Skipf("port not free again: %v", err)
	}
	defer srv2.Close()
	r = stateRun(t, state, "", "queue", id[:8], "--url", base)
	if r.code != 1 || !strings.Contains(r.stdout, "no task "+id[:8]+" any more") || !strings.Contains(r.stdout, "for later") {
		t.Fatalf("queue: %+v", r)
	}
	// Its session is gone: it is an orphan, never sent (it was refused
	// with a 404 before messages knew their session).
	r = stateRun(t, state, "", "queue", id[:8], "--release", "--url", base)
	if r.code != 1 || !strings.Contains(r.stderr, "session this message was written for is gone") || !strings.Contains(r.stderr, "--move-to") {
		t.Fatalf("release: %+v", r)
	}
	q := queueOf(t, stateRun(t, state, "", "queue", id[:8], "--json", "--url", base))
	if len(q.Held) != 1 || !q.Held[0].Orphan || !strings.Contains(q.Held[0].Error, "no session") {
		t.Fatalf("after the release: %+v", q)
	}
	must(t, stateRun(t, state, "", "queue", id[:8], "--delete", held.ID, "--url", base))
	q = queueOf(t, stateRun(t, state, "", "queue", id[:8], "--json", "--url", base))
	if len(q.Held) != 0 {
		t.Fatalf("not deleted: %+v", q)
	}
	// Nothing on disk and no such task: an error, not an empty queue.
	if r := stateRun(t, state, "", "queue", "ffffffff", "--url", base); r.code != 1 {
		t.Fatalf("unknown task: %+v", r)
	}
}

// Sends racing on one task from several processes' worth of commands: each
// message goes once, and each command reports its own message sent.
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", 20)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	const n = 6
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func() {
			results <- stateRun(t, state, "", "send", id, "message "+string(rune('a'+i)), "--url", base)
		}()
	}
	for i := 0; i < n; i++ {
		if r := <-results; r.code != 0 || !strings.HasPrefix(r.stdout, "sent") && !strings.HasPrefix(r.stdout, "queued") {
			t.Errorf("send: %+v", r)
		}
	}
	waitIdle(t, base, id)
	got := d.Received(id)
	slices.Sort(got)
	if len(got) != n || len(slices.Compact(slices.Clone(got))) != n {
		t.Fatalf("daemon received %q, want %d different messages", got, n)
	}
}

// A held message belongs to its session: the daemon restarts and gives the
// task's id to a new task (the fake daemon's ids are deterministic). The
// message is not delivered into the new task: it is an orphan, listed as
// such by perch queue and perch tasks, and moved to a session on request,
// where it is delivered.
func TestHeldMessageOfAReusedIDIsAnOrphan(t *testing.T) {
	t.Parallel()
	d, srv, id := daemonWithTask(t)
	base := srv.URL
	state := t.TempDir()
	must(t, stateRun(t, state, "", "send", id, "for the old task", "--hold", "--url", base))
	srv.Close()
	d.Close()
	time.Sleep(5 * time.Millisecond) // a creation time of its own
	u, _ := url.Parse(base)
	d2 := fakedaemon.New(fakedaemon.Options{Speed: 20, Seed: 7})
	srv2, err := d2.Start(u.Host)
	if err != nil {
		t.Skipf("port not free again: %v", err)
	}
	defer srv2.Close()
	defer d2.Close()
	id2, err := d2.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil || id2 != id {
		t.Skipf("the fake daemon gave another id (%s, %v): nothing to test", id2, err)
	}
	r := stateRun(t, state, "", "queue", id[:8], "--release", "--url", base)
	if r.code != 1 || !strings.Contains(r.stderr, "is another one now") {
		t.Fatalf("release: %+v", r)
	}
	if got := d2.Received(id); len(got) != 0 {
		t.Fatalf("delivered into the new task: %q", got)
	}
	q := queueOf(t, stateRun(t, state, "", "queue", id[:8], "--json", "--url", base))
	if len(q.Held) != 1 || !q.Held[0].Orphan {
		t.Fatalf("queue: %+v", q)
	}
	r = must(t, stateRun(t, state, "", "queue", id[:8], "--url", base))
	if !strings.Contains(r.stdout, "It is an orphan") {
		t.Fatalf("queue listing:\n%s", r.stdout)
	}
	r = must(t, stateRun(t, state, "", "tasks", "--url", base))
	if !strings.Contains(r.stdout, "HELD") || !strings.Contains(r.stdout, "1 orphan") {
		t.Fatalf("tasks:\n%s", r.stdout)
	}

	other, err := d2.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r = must(t, stateRun(t, state, "", "queue", id[:8], "--move-to", other, "--url", base))
	if !strings.Contains(r.stdout, "moved") {
		t.Fatalf("move: %+v", r)
	}
	must(t, stateRun(t, state, "", "queue", other, "--release", "--url", base))
	if got := d2.Received(other); len(got) == 0 || got[len(got)-1] != "for the old task" {
		t.Fatalf("the other task received %q", got)
	}
	if got := d2.Received(id); len(got) != 0 {
		t.Fatalf("delivered into the new task: %q", got)
	}
}
