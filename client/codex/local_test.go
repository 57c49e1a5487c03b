package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

// The TUI recording (capture-tui.sh): its thread, and the lines of its
// rollout.
const tuiThread = "01a24e52-1229-70a3-bb7d-f46f05a00227"

func tuiLines(t testing.TB) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/cli/tui.rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// lineIndex is the index of the first line holding s.
func lineIndex(t testing.TB, lines [][]byte, s string) int {
	t.Helper()
	for i, l := range lines {
		if bytes.Contains(l, []byte(s)) {
			return i
		}
	}
	t.Fatalf("no line holds %q", s)
	return -1
}

// codexHome makes an empty $CODEX_HOME.
func codexHome(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"sessions/2026/12/07", "thread-writer-locks"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func rolloutPath(home, thread string) string {
	return filepath.Join(home, "sessions/2026/12/07", "rollout-2026-12-07T02-25-31-"+thread+".jsonl")
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// holdLock takes the thread's writer lock as a running Codex does; the
// returned func lets it go.
func holdLock(t testing.TB, home, thread string) func() {
	t.Helper()
	f, err := os.Create(filepath.Join(home, "thread-writer-locks", thread+".lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

func open(t testing.TB, home string, opts ...Option) *Local {
	t.Helper()
	l, err := openLocal(home, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func only(t testing.TB, l *Local) events.Task {
	t.Helper()
	ts, err := l.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 {
		t.Fatalf("%d sessions, want 1: %+v", len(ts), ts)
	}
	return ts[0]
}

// TestSessionState: a session's state is its rollout's last turn event and
// whether a Codex holds its writer lock, the file alone never.
func TestSessionState(t *testing.T) {
	lines := tuiLines(t)
	approved := lineIndex(t, lines, `I'll write the file`) // the call that asked for approval
	firstDone := lineIndex(t, lines, `"task_complete"`)
	for _, c := range []struct {
		name   string
		upTo   int // lines written
		locked bool
		status string
		detail string
	}{
		{"running, waiting for approval", approved + 2, true, events.StatusGenerating, DetailBusy},
		{"idle after the turn", firstDone + 1, true, events.StatusIdle, ""},
		{"killed mid-turn", approved + 2, false, events.StatusExited, DetailCutOff},
		{"exited at idle", len(lines), false, events.StatusExited, DetailExited},
		{"a lock file nobody holds", len(lines), false, events.StatusExited, DetailExited},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := codexHome(t)
			writeLines(t, rolloutPath(home, tuiThread), lines[:c.upTo])
			if c.locked {
				holdLock(t, home, tuiThread)
			} else if c.name == "a lock file nobody holds" {
				holdLock(t, home, tuiThread)() // made, then let go, as a killed Codex leaves it
			}
			got := only(t, open(t, home))
			if got.Status != c.status || got.Detail != c.detail {
				t.Errorf("status %q (%q), want %q (%q)", got.Status, got.Detail, c.status, c.detail)
			}
			if got.ID != tuiThread || got.Name != "Make a file and run it." ||
				got.Cwd != "/tmp/perch-codex-capture-tui/work" || got.Model != "gpt-5-codex" {
				t.Errorf("listed as %+v", got)
			}
		})
	}
}

// TestSessionTotals: the list's tokens are the thread's last running
// total, read off the tail; a tail without one (a last turn of huge lines)
// gets it from the whole file, in the background of the watch.
func TestSessionTotals(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	path := rolloutPath(home, tuiThread)
	writeLines(t, path, lines)
	got := only(t, open(t, home))
	if got.Tokens != 6100 {
		t.Fatalf("tokens %d, want the last total (6000 in, 100 out)", got.Tokens)
	}

	// A turn after it, with more than the tail's reach of output and no
	// total yet.
	big := fmt.Sprintf(`{"timestamp":"2026-12-07T02:26:00.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"x","output":"%s"}}`+"\n",
		strings.Repeat("y", 2*tailLimit))
	started := `{"timestamp":"2026-12-07T02:26:00.000Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n"
	writeLines(t, path, append(append([][]byte(nil), lines...), []byte(started), []byte(big)))
	l := open(t, home)
	if got := only(t, l); got.Tokens != 0 {
		t.Fatalf("a tail without a total gave %d tokens", got.Tokens)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	found := make(chan int64, 1)
	go l.WatchSessions(ctx, func(ts []events.Task) {
		if len(ts) == 1 && ts[0].Tokens != 0 {
			select {
			case found <- ts[0].Tokens:
			default:
			}
		}
	})
	select {
	case n := <-found:
		if n != 6100 {
			t.Errorf("whole-file total %d tokens, want 6100", n)
		}
	case <-ctx.Done():
		t.Fatal("the whole-file total never came")
	}
}

// TestSessionLookup: by thread id or a unique prefix.
func TestSessionLookup(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	writeLines(t, rolloutPath(home, tuiThread), lines)
	other := "01a24e52-9999-70a3-bb7d-f46f05a00227"
	writeLines(t, rolloutPath(home, other), [][]byte{bytes.ReplaceAll(lines[0], []byte(tuiThread), []byte(other))})
	l := open(t, home)
	ctx := context.Background()
	if got, err := l.Session(ctx, "01a24e52-1229"); err != nil || got.ID != tuiThread {
		t.Errorf("prefix: %v %v", got.ID, err)
	}
	if _, err := l.Session(ctx, "01a24e52-"); !errors.Is(err, client.ErrAmbiguousTask) {
		t.Errorf("shared prefix: %v", err)
	}
	if _, err := l.Session(ctx, "ffff"); !errors.Is(err, client.ErrNoTask) {
		t.Errorf("no match: %v", err)
	}
	if got, _ := l.Session(ctx, other); got.Name != "" || got.Status != events.StatusExited {
		t.Errorf("a rollout of only its meta line: %+v", got)
	}
}

// fakeCodex writes a codex program that logs its arguments to
// $CODEX_HOME/queue.log and answers as codex queue does, or exits with
// the given status.
func fakeCodex(t testing.TB, exit int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "codex")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> \"$CODEX_HOME/queue.log\"\n"
	if exit != 0 {
		script += fmt.Sprintf("echo 'Error: the queue database is locked' >&2\nexit %d\n", exit)
	} else {
		script += "echo \"Queued message 01a2-m1 for thread $3.\"\n"
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSend: a follow-up goes through codex queue, exactly as written, to
// a session a Codex holds; its errors say what became of it.
func TestSend(t *testing.T) {
	lines := tuiLines(t)
	ctx := context.Background()
	msg := client.Message{Text: "-n looks like a flag\nand has two lines"}

	t.Run("idle and busy", func(t *testing.T) {
		home := codexHome(t)
		path := rolloutPath(home, tuiThread)
		writeLines(t, path, lines)
		holdLock(t, home, tuiThread)
		l := open(t, home, WithProgram(fakeCodex(t, 0)))
		if !l.Capabilities().Send || l.ReadOnlyReason() != "" {
			t.Fatalf("capabilities %+v, %q", l.Capabilities(), l.ReadOnlyReason())
		}
		res, err := l.Send(ctx, tuiThread[:8], msg)
		if err != nil || res.ID != "01a2-m1" || res.Queued {
			t.Fatalf("at idle: %+v %v", res, err)
		}
		writeLines(t, path, append(lines, []byte(`{"type":"event_msg","payload":{"type":"task_started"}}`+"\n")))
		if res, err = l.Send(ctx, tuiThread, msg); err != nil || !res.Queued {
			t.Fatalf("while busy: %+v %v", res, err)
		}
		log, _ := os.ReadFile(filepath.Join(home, "queue.log"))
		want := strings.Repeat("queue\n--thread\n"+tuiThread+"\n--message="+msg.Text+"\n", 2)
		if string(log) != want {
			t.Errorf("codex ran with\n%s\nwant\n%s", log, want)
		}
	})
	t.Run("not running", func(t *testing.T) {
		home := codexHome(t)
		writeLines(t, rolloutPath(home, tuiThread), lines)
		l := open(t, home, WithProgram(fakeCodex(t, 0)))
		_, err := l.Send(ctx, tuiThread, msg)
		if client.ClassOf(err) != client.SendRetryable {
			t.Errorf("to an exited session: %v (want held, retryable)", err)
		}
		if _, err := os.Stat(filepath.Join(home, "queue.log")); err == nil {
			t.Error("codex queue ran for a session nobody holds")
		}
	})
	t.Run("codex fails", func(t *testing.T) {
		home := codexHome(t)
		writeLines(t, rolloutPath(home, tuiThread), lines)
		holdLock(t, home, tuiThread)
		l := open(t, home, WithProgram(fakeCodex(t, 3)))
		_, err := l.Send(ctx, tuiThread, msg)
		if err == nil || !strings.Contains(err.Error(), "the queue database is locked") {
			t.Fatalf("error %v", err)
		}
		// It ran: it may have queued it. The outbox must read the
		// rollout before any resend.
		if c := client.ClassOf(err); c != client.SendUnknown {
			t.Errorf("classified as %v: a resend could deliver it twice", c)
		}
	})
	t.Run("no codex", func(t *testing.T) {
		home := codexHome(t)
		writeLines(t, rolloutPath(home, tuiThread), lines)
		holdLock(t, home, tuiThread)
		l := open(t, home, WithProgram(filepath.Join(t.TempDir(), "no-codex-here")))
		if l.Capabilities().Send || !strings.Contains(l.ReadOnlyReason(), "no-codex-here") {
			t.Errorf("capabilities %+v, reason %q", l.Capabilities(), l.ReadOnlyReason())
		}
		_, err := l.Send(ctx, tuiThread, msg)
		if client.ClassOf(err) != client.SendPermanent {
			t.Errorf("error %v", err)
		}
	})
}

// recorder collects a Follow's updates.
type recorder struct {
	mu      sync.Mutex
	updates []client.Update
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) on(u client.Update) {
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// timeline applies every update so far.
func (r *recorder) timeline() (*events.Timeline, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tl := events.NewTimeline()
	resets := 0
	for _, u := range r.updates {
		if u.Reset {
			resets++
			tl = events.NewTimeline()
		}
		for _, ev := range u.Events {
			tl.Apply(ev)
		}
	}
	return tl, resets
}

// waitFor waits until cond holds of the timeline (at most 20 s: the real
// TUI looks at its queue every few seconds when idle).
func (r *recorder) waitFor(t testing.TB, what string, cond func(*events.Timeline, int) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if tl, resets := r.timeline(); cond(tl, resets) {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("never: %s", what)
		}
	}
}

func hasText(tl *events.Timeline, kind events.ItemKind, text string) bool {
	for _, m := range tl.Items() {
		if m.Kind == kind && strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}

// TestFollowReplay replays the TUI recording line by line, with its
// timing (gaps capped at 100 ms), into a rollout while Follow tails it:
// every line comes out, a half-written line waits for its end, and the
// lock's release ends the session.
func TestFollowReplay(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	path := rolloutPath(home, tuiThread)
	release := holdLock(t, home, tuiThread)
	writeLines(t, path, lines[:1])
	l := open(t, home)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	done := make(chan error, 1)
	go func() { done <- l.Follow(ctx, tuiThread, rec.on) }()
	rec.waitFor(t, "synced", func(*events.Timeline, int) bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.updates) > 0 && rec.updates[0].Synced
	})

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prev := stamp(lines[0])
	var lat []time.Duration
	for i, line := range lines[1:] {
		if at := stamp(line); !prev.IsZero() && at.After(prev) {
			time.Sleep(min(at.Sub(prev), 100*time.Millisecond))
			prev = at
		}
		if i == 5 { // a line written in two parts: nothing of it until its end
			f.Write(line[:len(line)/2])
			time.Sleep(50 * time.Millisecond)
			f.Write(line[len(line)/2:])
		} else {
			f.Write(line)
		}
		written := time.Now()
		for _, want := range []string{"Make a file and run it.", "Made the file and waited.", "follow-up while busy", "follow-up at idle"} {
			if bytes.Contains(line, []byte(`"text":"`+want)) && bytes.Contains(line, []byte(`"response_item"`)) {
				kind := events.ItemAssistant
				if strings.HasPrefix(want, "follow") || strings.HasPrefix(want, "Make") {
					kind = events.ItemUser
				}
				rec.waitFor(t, want, func(tl *events.Timeline, _ int) bool { return hasText(tl, kind, want) })
				lat = append(lat, time.Since(written))
			}
		}
	}
	rec.waitFor(t, "the last turn's end", func(tl *events.Timeline, _ int) bool {
		return hasText(tl, events.ItemAssistant, "Got the follow-up sent at idle.") && tl.Status() == events.RunIdle
	})
	t.Logf("appended line to timeline: %v", lat)
	tl, _ := rec.timeline()
	users := 0
	for _, m := range tl.Items() {
		if m.Kind == events.ItemUser {
			users++
		}
	}
	if users != 3 {
		t.Errorf("%d user turns, want 3 (the prompt and two follow-ups, each once)", users)
	}

	release() // kill -9: the lock goes with the process
	rec.waitFor(t, "stopped after the lock's release", func(tl *events.Timeline, _ int) bool {
		return tl.Status() == events.RunStopped
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v", err)
	}
}

func stamp(line []byte) time.Time {
	var at time.Time
	if i := bytes.Index(line, []byte(`"timestamp":"`)); i >= 0 {
		rest := line[i+len(`"timestamp":"`):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			at, _ = time.Parse(time.RFC3339Nano, string(rest[:j]))
		}
	}
	return at
}

// TestFollowStartsOver: a rollout truncated or replaced is read again from
// its start, after a Reset, without duplicates.
func TestFollowStartsOver(t *testing.T) {
	lines := tuiLines(t)
	for _, how := range []string{"truncated", "replaced"} {
		t.Run(how, func(t *testing.T) {
			home := codexHome(t)
			path := rolloutPath(home, tuiThread)
			writeLines(t, path, lines)
			l := open(t, home)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := newRecorder()
			go l.Follow(ctx, tuiThread, rec.on)
			rec.waitFor(t, "the whole file", func(tl *events.Timeline, _ int) bool {
				return hasText(tl, events.ItemAssistant, "Got the follow-up sent at idle.")
			})
			short := lines[:lineIndex(t, lines, `"output_text","text":"Made the file and waited."`)+1]
			if how == "truncated" {
				writeLines(t, path, short)
			} else {
				tmp := path + ".tmp"
				writeLines(t, tmp, short)
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			rec.waitFor(t, "a reset to the shorter file", func(tl *events.Timeline, resets int) bool {
				return resets == 1 && hasText(tl, events.ItemAssistant, "Made the file and waited.") &&
					!hasText(tl, events.ItemUser, "follow-up while busy")
			})
		})
	}
}

// TestWatchSessions: a new rollout, a lock taken and let go, and a turn's
// start each change the list.
func TestWatchSessions(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	l := open(t, home)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var last []events.Task
	changed := make(chan struct{}, 1)
	go l.WatchSessions(ctx, func(ts []events.Task) {
		mu.Lock()
		last = ts
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	waitList := func(what string, cond func([]events.Task) bool) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			mu.Lock()
			ok := cond(last)
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("never: %s (list %+v)", what, last)
			}
		}
	}
	status := func(want string) func([]events.Task) bool {
		return func(ts []events.Task) bool { return len(ts) == 1 && ts[0].Status == want }
	}
	waitList("the empty list", func(ts []events.Task) bool { return ts != nil && len(ts) == 0 })

	release := holdLock(t, home, tuiThread)
	first := lineIndex(t, lines, "Make a file and run it.")
	// A new day's directory, as at midnight.
	day := filepath.Join(home, "sessions/2026/12/08")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(day, filepath.Base(rolloutPath(home, tuiThread)))
	writeLines(t, path, lines[:first+1])
	waitList("the new session, running", status(events.StatusGenerating))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Join(lines[first+1:lineIndex(t, lines, `"task_complete"`)+1], nil))
	f.Close()
	waitList("idle after its turn", status(events.StatusIdle))
	release()
	waitList("exited once the lock is let go", status(events.StatusExited))
}

// TestHeadTail: the list reads a rollout's head and tail only, across
// lines longer than a read.
func TestHeadTail(t *testing.T) {
	home := codexHome(t)
	path := rolloutPath(home, tuiThread)
	meta := `{"type":"session_meta","payload":{"id":"` + tuiThread + `","cwd":"/w","base_instructions":"` + strings.Repeat("i", 100<<10) + `"}}` + "\n"
	prompt := `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first\nsecond"}]}}` + "\n"
	var b strings.Builder
	b.WriteString(meta + prompt)
	b.WriteString(`{"type":"event_msg","payload":{"type":"task_started"}}` + "\n")
	b.WriteString(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":7,"output_tokens":3}}}}` + "\n")
	b.WriteString(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"` + strings.Repeat("o", 3*tailChunk/2) + `"}}` + "\n")
	b.WriteString(`{"type":"event_msg","payload":{"type":"task_complete"}}` + "\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := only(t, open(t, home))
	if got.Name != "first" || got.Cwd != "/w" || got.Status != events.StatusExited || got.Detail != DetailExited ||
		got.Tokens != 10 {
		t.Errorf("listed as %+v", got)
	}
	// A line cut by the end of the file (being written) is not read.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"event_msg","payload":{"type":"task_sta`)
	f.Close()
	if got := only(t, open(t, home)); got.Detail != DetailExited {
		t.Errorf("a half-written line changed the state: %+v", got)
	}
}

// TestThreadNames: a thread's name in session_index.jsonl (the latest
// line for it) is its title; a thread without one keeps its first prompt.
func TestThreadNames(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	writeLines(t, rolloutPath(home, tuiThread), lines)
	l := open(t, home)
	if got := only(t, l); got.Name != "Make a file and run it." {
		t.Fatalf("without an index: %q", got.Name)
	}
	index := `{"id":"` + tuiThread + `","thread_name":"first name","updated_at":"2026-12-07T02:25:33Z"}` + "\n" +
		`{"id":"other","thread_name":"not this one"}` + "\n" +
		`{"id":"` + tuiThread + `","thread_name":"Renamed\nthread","updated_at":"2026-12-07T02:26:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(home, "session_index.jsonl"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := only(t, l); got.Name != "Renamed" {
		t.Errorf("with an index: %q", got.Name)
	}
}

// TestFollowExited: following a session no Codex holds, whose file leaves
// a turn running (its Codex was killed mid-turn), shows it stopped, not
// generating for ever.
func TestFollowExited(t *testing.T) {
	lines := tuiLines(t)
	home := codexHome(t)
	writeLines(t, rolloutPath(home, tuiThread), lines[:lineIndex(t, lines, `I'll write the file`)+2])
	l := open(t, home)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	go l.Follow(ctx, tuiThread, rec.on)
	rec.waitFor(t, "stopped", func(tl *events.Timeline, _ int) bool {
		return hasText(tl, events.ItemAssistant, "I'll write the file") && tl.Status() == events.RunStopped
	})
}

// TestListReplay replays the TUI recording, its rollout lines and what
// its screen showed, in their order and (a tenth of) their timing, with
// the writer lock held until the recording's kill -9: whenever the screen
// showed a state, the list agrees (an open approval prompt is the union).
func TestListReplay(t *testing.T) {
	lines := tuiLines(t)
	b, err := os.ReadFile("testdata/cli/tui.screen.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		at     time.Time
		line   []byte
		screen string
	}
	var steps []step
	for _, l := range lines {
		steps = append(steps, step{at: stamp(l), line: l})
	}
	for _, m := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var mark struct {
			At     time.Time `json:"at"`
			Screen string    `json:"screen"`
		}
		if err := json.Unmarshal(m, &mark); err != nil {
			t.Fatal(err)
		}
		// What the screen showed is checked against the lines written
		// by then, give or take the 50 ms a line takes to be written.
		steps = append(steps, step{at: mark.At.Add(50 * time.Millisecond), screen: mark.Screen})
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at.Before(steps[j].at) })

	home := codexHome(t)
	path := rolloutPath(home, tuiThread)
	release := holdLock(t, home, tuiThread)
	l := open(t, home)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]struct{ status, detail string }{
		"busy":     {events.StatusGenerating, DetailBusy},
		"approval": {events.StatusGenerating, DetailBusy},
		"idle":     {events.StatusIdle, ""},
		"killed":   {events.StatusExited, DetailExited},
	}
	checked := 0
	for i, s := range steps {
		if i > 0 {
			time.Sleep(min(s.at.Sub(steps[i-1].at)/10, 200*time.Millisecond))
		}
		if s.line != nil {
			f.Write(s.line)
			continue
		}
		w, ok := want[s.screen]
		if !ok {
			continue // a follow-up queued: not a state
		}
		if s.screen == "killed" {
			release()
		}
		ts, err := l.Sessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) == 0 {
			continue // before the first prompt: no rollout yet
		}
		checked++
		if ts[0].Status != w.status || ts[0].Detail != w.detail {
			t.Errorf("the screen showed %s (at %s): the list says %q (%q)", s.screen, s.at.Format("15:04:05.000"), ts[0].Status, ts[0].Detail)
		}
	}
	if checked < 6 {
		t.Errorf("only %d screen states checked", checked)
	}
}
