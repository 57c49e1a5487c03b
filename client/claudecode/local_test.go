package claudecode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/tally"
)

// recOp is one change of a recorded config directory
// (testdata/real/live.record.jsonl, made by capture-live.sh).
type recOp struct {
	MS   int64  `json:"ms"`
	Op   string `json:"op"` // write, append, remove, key
	Path string `json:"path"`
	Data string `json:"data"`
}

func loadRecording(t testing.TB) []recOp {
	t.Helper()
	f, err := os.Open("testdata/real/live.record.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ops []recOp
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var op recOp
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	return ops
}

// apply makes one recorded change in dir, as the CLI made it. A registry
// file is written to a temporary file and renamed, so a reader never sees
// half of one.
func apply(t testing.TB, dir string, op recOp) {
	t.Helper()
	p := filepath.Join(dir, op.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	switch op.Op {
	case "write":
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(op.Data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	case "key":
		if err := os.WriteFile(p, []byte(`{"peerToken":"test-token"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	case "append":
		appendFile(t, p, op.Data)
	case "remove":
		os.Remove(p)
	}
}

func appendFile(t testing.TB, p, data string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// testLocal is a Local on dir whose processes live until killed is set.
func testLocal(dir string, killed *atomic.Bool) *Local {
	return newLocal(dir, func(int, string) bool { return !killed.Load() })
}

// recorder collects a Follow's updates, each with when it came.
type recorder struct {
	mu      sync.Mutex
	tl      *events.Timeline
	states  []string
	at      []time.Time // when each update with events came
	resets  int
	synced  bool
	updates int
}

func newRecorder() *recorder { return &recorder{tl: events.NewTimeline()} }

func (r *recorder) on(u client.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates++
	if u.Reset {
		r.resets++
		r.tl = events.NewTimeline()
	}
	if u.Synced {
		r.synced = true
	}
	for _, ev := range u.Events {
		r.tl.Apply(ev)
		if ev.Kind == events.KindRunState {
			r.states = append(r.states, ev.RunStatus)
		}
	}
	if len(u.Events) > 0 {
		r.at = append(r.at, time.Now())
	}
}

// texts are the user and assistant texts of the timeline, in order.
func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return texts(r.tl)
}

func texts(tl *events.Timeline) []string {
	var out []string
	for _, it := range tl.Items() {
		if (it.Kind == events.ItemUser || it.Kind == events.ItemAssistant) && strings.TrimSpace(it.Text) != "" {
			out = append(out, it.Text)
		}
	}
	return out
}

func waitFor(t testing.TB, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFollowRecordedSession replays the real CLI's recorded files with
// their timing (twice as fast) and follows the session as they are
// written: every conversation line is shown as it comes, the run states
// follow the registry file, and the kill shows as a stopped run. The
// timeline built live is the one the whole file gives.
func TestFollowRecordedSession(t *testing.T) {
	ops := loadRecording(t)
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	var id, transcript string
	for _, op := range ops {
		if op.Op == "append" && transcript == "" {
			transcript = op.Path
			id = strings.TrimSuffix(filepath.Base(op.Path), ".jsonl")
		}
	}
	// Up to the first registry write: the session is listed, with no
	// transcript yet.
	i := 0
	for ; i < len(ops) && ops[i].Op != "write"; i++ {
		apply(t, dir, ops[i])
	}
	apply(t, dir, ops[i])
	i++
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	done := make(chan error, 1)
	go func() { done <- l.Follow(ctx, id, rec.on) }()
	waitFor(t, "synced", 2*time.Second, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.synced })

	const speed = 4
	start := time.Now()
	base := ops[i].MS
	var lags []time.Duration
	for ; i < len(ops); i++ {
		op := ops[i]
		if d := time.Duration(op.MS-base)*time.Millisecond/speed - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		rec.mu.Lock()
		n := len(rec.at)
		rec.mu.Unlock()
		wrote := time.Now()
		apply(t, dir, op)
		if op.Op == "append" && (strings.Contains(op.Data, `"type":"assistant"`) || strings.Contains(op.Data, `"type":"user"`)) {
			waitFor(t, "the lines appended at "+time.Duration(op.MS*1e6).String(), 2*time.Second, func() bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				return len(rec.at) > n
			})
			rec.mu.Lock()
			lags = append(lags, rec.at[n].Sub(wrote))
			rec.mu.Unlock()
		}
	}
	killed.Store(true)
	waitFor(t, "the killed process seen", 2*time.Second, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.states) > 0 && rec.states[len(rec.states)-1] == events.StatusStopped
	})
	cancel()
	<-done

	whole := events.NewTimeline()
	d := NewDecoder()
	data, err := os.ReadFile(filepath.Join(dir, transcript))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		for _, ev := range d.Decode([]byte(line)) {
			whole.Apply(ev)
		}
	}
	for _, ev := range d.Flush() {
		whole.Apply(ev)
	}
	if got, want := rec.texts(), texts(whole); !slices.Equal(got, want) {
		t.Errorf("followed texts\n%q\nwant (the whole file)\n%q", got, want)
	}
	if got := rec.texts(); len(got) < 6 || !strings.Contains(strings.Join(got, "\n"), "Got the second follow-up.") {
		t.Errorf("the conversation is not all there: %q", got)
	}
	// idle at the start, generating through busy and waiting, idle between
	// the turns, stopped when killed.
	rec.mu.Lock()
	states := slices.Compact(slices.Clone(rec.states))
	resets := rec.resets
	rec.mu.Unlock()
	if len(states) < 4 || states[0] != events.StatusIdle || !slices.Contains(states, events.StatusGenerating) || states[len(states)-1] != events.StatusStopped {
		t.Errorf("run states %v", states)
	}
	if resets != 0 {
		t.Errorf("%d resets of a file that only grew", resets)
	}
	slices.Sort(lags)
	t.Logf("appended lines shown after (min, median, max): %v %v %v", lags[0], lags[len(lags)/2], lags[len(lags)-1])
}

// TestFollowHalfLinesAndTruncation: a line written in two parts is shown
// once it is whole; a truncated or replaced transcript starts over.
func TestFollowHalfLinesAndTruncation(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	id := "0b8e1c55-3f40-4d0a-9d11-8a6c1c7b2e10"
	path := filepath.Join(dir, "projects", "-work", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	user := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "user", "uuid": "u-" + text, "sessionId": id, "cwd": "/work",
			"timestamp": "2026-12-07T02:00:00Z", "message": map[string]any{"role": "user", "content": text}})
		return string(b) + "\n"
	}
	appendFile(t, path, user("first"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder()
	done := make(chan error, 1)
	go func() { done <- l.Follow(ctx, id, rec.on) }()
	has := func(want ...string) func() bool {
		return func() bool { return slices.Equal(rec.texts(), want) }
	}
	waitFor(t, "the first line", 2*time.Second, has("first"))

	second := user("second")
	appendFile(t, path, second[:len(second)/2])
	time.Sleep(3 * recheck / 2) // a look at the file, events and the timer both
	if got := rec.texts(); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("half a line shown: %q", got)
	}
	appendFile(t, path, second[len(second)/2:])
	waitFor(t, "the line once whole", 2*time.Second, has("first", "second"))

	// Truncated and written anew: the timeline starts over.
	if err := os.WriteFile(path, []byte(user("again")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the truncated file read anew", 2*time.Second, has("again"))
	// Replaced by another file (a rename over it).
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(user("replaced")+user("more")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replaced file read anew", 2*time.Second, has("replaced", "more"))
	rec.mu.Lock()
	resets := rec.resets
	rec.mu.Unlock()
	if resets != 2 {
		t.Errorf("%d resets, want 2", resets)
	}
	cancel()
	<-done
}

func TestTailLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	tl := &tail{path: p}
	read := func() tailRead {
		t.Helper()
		r, err := tl.read(0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := read(); len(r.lines) != 0 || r.reset {
		t.Fatalf("a missing file read %+v", r)
	}
	appendFile(t, p, "a\nb")
	if r := read(); len(r.lines) != 1 || string(r.lines[0]) != "a" {
		t.Fatalf("got %q", r.lines)
	}
	appendFile(t, p, "c\n\n")
	if r := read(); len(r.lines) != 1 || string(r.lines[0]) != "bc" {
		t.Fatalf("the half line: got %q", r.lines)
	}
	// A line over maxLine is skipped whole, the next one kept.
	big := strings.Repeat("x", maxLine/2)
	appendFile(t, p, big)
	appendFile(t, p, big)
	appendFile(t, p, big+"\nd\n")
	if r := read(); r.skipped != 1 || len(r.lines) != 1 || string(r.lines[0]) != "d" {
		t.Fatalf("the long line: skipped %d, lines %d", r.skipped, len(r.lines))
	}
	os.Remove(p)
	if r := read(); !r.reset {
		t.Fatal("a removed file is no reset")
	}
	appendFile(t, p, "e\n")
	if r := read(); len(r.lines) != 1 || string(r.lines[0]) != "e" {
		t.Fatalf("the new file: %q", r.lines)
	}
}

// TestRunSummary: the board's summary of the last run is its last reply,
// read from the transcript's end, without usage (the listed tokens are
// the session's).
func TestRunSummary(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	for _, op := range loadRecording(t) {
		apply(t, dir, op)
	}
	l := testLocal(dir, &killed)
	list, err := l.Sessions(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %+v %v", list, err)
	}
	s, err := l.RunSummary(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.LastReply != "Got the second follow-up." || s.HasUsage {
		t.Errorf("summary %+v", s)
	}
}

// TestSessionsFollowRegistry lists the recorded session after each change
// of its registry file: the status is the file's while the process runs
// (waiting with what it waits for), exited once it is killed, with the
// first prompt as its title and the cwd of its transcript.
func TestSessionsFollowRegistry(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	var got []string
	for _, op := range loadRecording(t) {
		apply(t, dir, op)
		if op.Op != "write" {
			continue
		}
		list, err := l.Sessions(context.Background())
		if err != nil || len(list) != 1 {
			t.Fatalf("sessions %+v %v", list, err)
		}
		st := list[0].Status
		if list[0].WaitingFor != "" {
			st += " (" + list[0].WaitingFor + ")"
		}
		if len(got) == 0 || got[len(got)-1] != st {
			got = append(got, st)
		}
	}
	want := []string{"idle", "generating", "waiting (permission prompt)", "generating", "idle", "generating", "idle", "generating", "idle"}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %q\nwant %q", got, want)
	}
	killed.Store(true)
	list, _ := l.Sessions(context.Background())
	if len(list) != 1 || list[0].Status != events.StatusExited || list[0].Name != "Walk through the live states." ||
		list[0].Cwd != "/tmp/perch-claude-live/work" {
		t.Errorf("after the kill: %+v", list)
	}
	if _, err := l.Session(context.Background(), list[0].ID[:6]); err != nil {
		t.Errorf("by a prefix: %v", err)
	}
}

// TestWatchSessions: a registry file rewritten, a transcript made and a
// process killed (no file event) each reach the watcher's list.
func TestWatchSessions(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	ops := loadRecording(t)
	apply(t, dir, ops[0])
	apply(t, dir, ops[1])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	done := make(chan error, 1)
	go func() {
		done <- l.WatchSessions(ctx, func(list []events.Task) {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range list {
				seen = append(seen, s.Status+" "+s.Name)
			}
		})
	}()
	saw := func(what string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) > 0 && strings.HasPrefix(seen[len(seen)-1], what)
		}
	}
	waitFor(t, "the first list", 5*time.Second, saw("idle"))
	for _, op := range ops[2:] {
		apply(t, dir, op)
		if op.Op == "write" && strings.Contains(op.Data, `"status":"waiting"`) {
			break
		}
	}
	waitFor(t, "waiting, with its title", 5*time.Second, saw("waiting Walk through the live states."))
	// Another session's transcript in the same project directory: listed
	// (exited: no process) with its title.
	var first string
	for _, op := range ops {
		if op.Op == "append" {
			first = op.Path
			break
		}
	}
	other := filepath.Join(dir, filepath.Dir(first), "9a8b7c6d-0000-4000-8000-000000000001.jsonl")
	appendFile(t, other, `{"type":"user","cwd":"/w","message":{"role":"user","content":"Another one"}}`+"\n")
	waitFor(t, "the other session", 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range seen {
			if s == "exited Another one" {
				return true
			}
		}
		return false
	})
	killed.Store(true)
	waitFor(t, "the kill", 2*recheck+5*time.Second, saw("exited"))
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("WatchSessions returned %v", err)
	}
}

// TestFollowSubagent: a subagent's transcript, written beside the
// session's while its Agent call runs, is shown live as that call's
// running output (matched by the call's prompt), never as turns; when
// the call's result comes, the subagent's usage (each reply once, though
// the CLI writes it on several lines) is counted in the session's totals.
func TestFollowSubagent(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	id := "2e1f0a9b-0000-4000-8000-0000000000aa"
	path := filepath.Join(dir, "projects", "-work", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, `{"type":"user","uuid":"u1","sessionId":"`+id+`","message":{"role":"user","content":"How many files? Ask a subagent."}}`+"\n"+
		`{"type":"assistant","uuid":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"ag","name":"Agent","input":{"description":"Count","prompt":"Count the files","subagent_type":"general-purpose"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":5}}}`+"\n")
	var mu sync.Mutex
	var running strings.Builder
	users := 0
	tl := events.NewTimeline()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(ctx, id, func(u client.Update) {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range u.Events {
				tl.Apply(ev)
				switch {
				case ev.Kind == events.KindToolOutputDelta && ev.Tool.Call.ID == "ag":
					running.WriteString(ev.Text)
				case ev.Kind == events.KindUserMessage:
					users++
				}
			}
		})
	}()
	sub := filepath.Join(dir, "projects", "-work", id, "subagents", "agent-a1b2.jsonl")
	if err := os.MkdirAll(filepath.Dir(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	appendFile(t, sub, `{"type":"user","isSidechain":true,"message":{"role":"user","content":"Count the files"}}`+"\n")
	reply := func(content string, out int) string {
		return `{"type":"assistant","isSidechain":true,"message":{"id":"ms","role":"assistant","content":[` + content + `],"usage":{"input_tokens":100,"output_tokens":` + strconv.Itoa(out) + `}}}` + "\n"
	}
	appendFile(t, sub, reply(`{"type":"text","text":"Counting."}`, 1))
	appendFile(t, sub, reply(`{"type":"tool_use","id":"sb","name":"Bash","input":{"command":"ls | wc -l"}}`, 40))
	waitFor(t, "the subagent's call under the Agent call", 2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(running.String(), "→ Bash ls | wc -l")
	})
	appendFile(t, sub, `{"type":"user","isSidechain":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"sb","content":"0"}]}}`+"\n")
	waitFor(t, "its result", 2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(running.String(), "← 0")
	})
	before := func() events.Usage { mu.Lock(); defer mu.Unlock(); return tl.Meta().Totals }()
	appendFile(t, path, `{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ag","content":"None."}]}}`+"\n")
	waitFor(t, "the subagent's usage in the totals", 2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return tl.Meta().Totals.OutputTokens == before.OutputTokens+40
	})
	cancel()
	<-done
	if users != 1 {
		t.Errorf("%d user messages, want the session's prompt alone", users)
	}
	if got := tl.Meta().Totals.InputTokens - before.InputTokens; got != 100 {
		t.Errorf("the subagent's input counted %d, want 100 (one reply)", got)
	}
}

// TestFollowLongHistory: a history of several megabytes comes in parts,
// all of it, Synced once, on the last.
func TestFollowLongHistory(t *testing.T) {
	dir := t.TempDir()
	var killed atomic.Bool
	l := testLocal(dir, &killed)
	id := "3f4e5d6c-0000-4000-8000-0000000000bb"
	path := filepath.Join(dir, "projects", "-work", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	const n = 400
	for i := range n {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","message":{"role":"user","content":"%d %s"}}`+"\n", i, i, strings.Repeat("y", 10_000))
	}
	appendFile(t, path, b.String())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var updates, syncedAt, users int
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(ctx, id, func(u client.Update) {
			mu.Lock()
			defer mu.Unlock()
			updates++
			for _, ev := range u.Events {
				if ev.Kind == events.KindUserMessage {
					users++
				}
			}
			if u.Synced {
				syncedAt = updates
			}
		})
	}()
	waitFor(t, "the history", 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return syncedAt > 0 })
	cancel()
	<-done
	if users != n {
		t.Errorf("%d user messages, want %d", users, n)
	}
	if updates < 3 || syncedAt != updates {
		t.Fatalf("%d updates, synced at %d", updates, syncedAt)
	}
}

// TestTotals: a transcript's token count is each reply's usage once (the
// CLI repeats a reply's usage on each of its lines), the same whether it
// is counted at once or as it grows, and kept for the next start.
func TestTotals(t *testing.T) {
	dir := t.TempDir()
	ops := loadRecording(t)
	var path string
	l := tally.New(countLine)
	for i, op := range ops {
		apply(t, dir, op)
		if op.Op == "append" {
			path = filepath.Join(dir, op.Path)
			if i%2 == 0 {
				if _, err := l.Count(path); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, err := l.Count(path); err != nil {
		t.Fatal(err)
	}
	// The same count from the whole file, independently: the largest
	// usage of each message id, summed.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var o struct {
			Type    string
			Message struct {
				ID    string
				Usage map[string]any
			}
		}
		if json.Unmarshal([]byte(line), &o) != nil || o.Type != "assistant" {
			continue
		}
		var n int64
		for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
			if v, ok := o.Message.Usage[k].(float64); ok {
				n += int64(v)
			}
		}
		per[o.Message.ID] = max(per[o.Message.ID], n)
	}
	var want int64
	for _, n := range per {
		want += n
	}
	if got, _ := l.Get(path); got.Tokens() != want || want == 0 {
		t.Fatalf("counted %d, want %d", got.Tokens(), want)
	}
	whole := tally.New(countLine)
	if _, err := whole.Count(path); err != nil {
		t.Fatal(err)
	}
	if got, _ := whole.Get(path); got.Tokens() != want {
		t.Fatalf("counted at once %d, want %d", got.Tokens(), want)
	}

	// Kept: a new Local reads the count back and lists it at once.
	keep := filepath.Join(t.TempDir(), "state", "totals.json")
	l.Keep(keep)
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	var killed atomic.Bool
	next := testLocal(dir, &killed)
	next.KeepTotals(keep)
	list, err := next.Sessions(context.Background())
	if err != nil || len(list) != 1 || list[0].Tokens != want {
		t.Fatalf("listed %+v %v, want %d tokens", list, err, want)
	}
	if !list[0].HasCost || list[0].Cost <= 0 {
		t.Errorf("listed cost %v (known %v): the recording's model has a price", list[0].Cost, list[0].HasCost)
	}
}

// TestWatchCountsTokens: the watcher counts the transcripts in the
// background and lists the counts as they come.
func TestWatchCountsTokens(t *testing.T) {
	dir := t.TempDir()
	for _, op := range loadRecording(t) {
		apply(t, dir, op)
	}
	var killed atomic.Bool
	killed.Store(true)
	l := testLocal(dir, &killed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var tokens int64
	done := make(chan error, 1)
	go func() {
		done <- l.WatchSessions(ctx, func(list []events.Task) {
			mu.Lock()
			defer mu.Unlock()
			if len(list) == 1 {
				tokens = list[0].Tokens
			}
		})
	}()
	waitFor(t, "the count listed", 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return tokens > 0 })
	cancel()
	<-done
}
