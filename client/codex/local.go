package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/tally"
)

// Name is the local Codex backend's name.
const Name = "codex"

// What the list says of a session whose state the files cannot pin down.
const (
	// DetailBusy: a turn runs. Codex writes nothing while it waits for the
	// user to approve a command, so a running command and an open approval
	// prompt look the same.
	DetailBusy = "working or waiting for approval"
	// DetailApproval, DetailInput and DetailWorking: Codex's daemon said
	// which (see daemon.go).
	DetailApproval = "waiting for approval"
	DetailInput    = "waiting for your answer"
	DetailWorking  = "working"
	// DetailExited: no Codex holds the thread any more.
	DetailExited = "exited"
	// DetailCutOff: no Codex holds the thread, and its last turn never
	// ended (the process was killed mid-turn).
	DetailCutOff = "exited mid-turn"
)

// Local is the Codex sessions of this machine, read from $CODEX_HOME: the
// rollouts under sessions/ and the writer locks under thread-writer-locks/
// (see docs/formats/codex.md). It is a client.Backend and a
// client.SessionWatcher.
type Local struct {
	dir     string
	program string // the codex program Send runs; "" when there is none
	noSend  string // why Send cannot work, when program is ""

	mu    sync.Mutex
	files map[string]*rollout // by path
	names threadNames         // session_index.jsonl

	totals *tally.Tally // the rollouts' tokens by model (totals.go)
}

// rollout is what the list keeps of one file, valid while its size and
// modification time stay.
type rollout struct {
	path   string
	size   int64
	mod    time.Time
	head   head
	headOK bool // the head has its prompt (a newer head is not read again)
	tail   tail
}

// Option changes how OpenLocal opens.
type Option func(*Local)

// WithProgram makes Send run program (a path, or a name looked up on
// PATH) instead of codex from PATH.
func WithProgram(program string) Option {
	return func(l *Local) { l.program = program }
}

// OpenLocal opens the Codex sessions under dir ($CODEX_HOME, else
// ~/.codex). A dir without sessions is no error: it lists none until
// Codex writes one.
func OpenLocal(dir string, opts ...Option) (client.Backend, error) {
	return openLocal(dir, opts...)
}

func openLocal(dir string, opts ...Option) (*Local, error) {
	if dir == "" {
		return nil, errors.New("codex: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("codex: %w", err)
	}
	l := &Local{dir: abs, program: "codex", files: map[string]*rollout{}, totals: tally.New(countLine)}
	for _, o := range opts {
		o(l)
	}
	path, err := exec.LookPath(l.program)
	if err != nil {
		l.noSend = fmt.Sprintf("follow-ups go through `codex queue`, and %s was not found: %v", l.program, err)
		l.program = ""
	} else {
		l.program = path
	}
	return l, nil
}

// DefaultDir is $CODEX_HOME, else ~/.codex.
func DefaultDir() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".codex")
}

func (l *Local) Name() string { return Name }

// URL is the directory read.
func (l *Local) URL() string { return l.dir }

func (l *Local) Capabilities() client.Capabilities {
	// codex queue hands a follow-up to the running TUI, which takes it
	// when its turn ends: perch shows it queued until the rollout has it.
	return client.Capabilities{Send: l.program != "", PipesFollowUps: l.program != ""}
}

// SessionCapabilities are the backend's for every thread, with the
// reason follow-ups cannot be sent ("" when they can) for the composer
// to show (client.SessionCapabler).
func (l *Local) SessionCapabilities(ctx context.Context, sessionID string) (client.Capabilities, string) {
	return l.Capabilities(), l.noSend
}

// ReadOnlyReason says why follow-ups cannot be sent ("" when they can).
func (l *Local) ReadOnlyReason() string { return l.noSend }

func (l *Local) sessionsDir() string { return filepath.Join(l.dir, "sessions") }

func (l *Local) lockPath(thread string) string {
	return filepath.Join(l.dir, "thread-writer-locks", thread+".lock")
}

// Sessions lists the rollouts, most recently written first.
func (l *Local) Sessions(ctx context.Context) ([]events.Task, error) {
	paths, err := l.rolloutPaths(ctx)
	if err != nil {
		return nil, err
	}
	return l.list(ctx, paths)
}

// rolloutPaths finds every rollout under sessions/.
func (l *Local) rolloutPaths(ctx context.Context) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(l.sessionsDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the Codex sessions in %s: %w", l.sessionsDir(), err)
	}
	return paths, nil
}

// list brings the files at paths up to date (reading only what changed)
// and makes the list; files no longer there are forgotten.
func (l *Local) list(ctx context.Context, paths []string) ([]events.Task, error) {
	seen := make(map[string]bool, len(paths))
	rs := make([]*rollout, 0, len(paths))
	sc := newScanner()
	for _, p := range paths {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		seen[p] = true
		r, err := l.refresh(sc, p)
		if err != nil {
			continue // gone between the walk and the read
		}
		rs = append(rs, r)
	}
	l.mu.Lock()
	for p := range l.files {
		if !seen[p] {
			delete(l.files, p)
		}
	}
	l.mu.Unlock()
	return l.tasks(rs), nil
}

// refresh reads what changed of the rollout at path.
func (l *Local) refresh(sc *scanner, path string) (*rollout, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	r := l.files[path]
	if r != nil && r.size == fi.Size() && r.mod.Equal(fi.ModTime()) {
		l.mu.Unlock()
		return r, nil
	}
	var old rollout
	if r != nil {
		old = *r
	}
	l.mu.Unlock()

	n := &rollout{path: path, size: fi.Size(), mod: fi.ModTime(), head: old.head, headOK: old.headOK}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !n.headOK || fi.Size() < old.size {
		n.head = sc.head(path, f)
		n.headOK = n.head.title != ""
	}
	t, err := sc.tail(f, fi.Size())
	if err != nil {
		return nil, err
	}
	n.tail = t
	l.mu.Lock()
	l.files[path] = n
	l.mu.Unlock()
	return n, nil
}

// tasks makes the list: each rollout's state from its tail and whether a
// Codex holds its thread's writer lock.
func (l *Local) tasks(rs []*rollout) []events.Task {
	locks := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.head.id != "" {
			locks = append(locks, l.lockPath(r.head.id))
		}
	}
	held := heldLocks(existing(locks))
	names := l.threadNames()
	out := make([]events.Task, 0, len(rs))
	var busy []string
	for _, r := range rs {
		t := r.task(held[l.lockPath(r.head.id)])
		t.Tokens, t.Cost, t.HasCost = l.usage(r)
		if n := names[t.ID]; n != "" {
			t.Name = n
		}
		if t.Detail == DetailBusy {
			busy = append(busy, t.ID)
		}
		out = append(out, t)
	}
	if states := l.daemonStates(busy); len(states) > 0 {
		for i := range out {
			st, ok := states[out[i].ID]
			if !ok || out[i].Detail != DetailBusy || st.status != "active" {
				continue
			}
			switch {
			case st.approval:
				out[i].Status, out[i].WaitingFor, out[i].Detail = events.StatusWaiting, "permission prompt", DetailApproval
			case st.input:
				out[i].Status, out[i].WaitingFor, out[i].Detail = events.StatusWaiting, "input needed", DetailInput
			default:
				out[i].Detail = DetailWorking
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out
}

// existing keeps the paths that exist (most threads have no lock file).
func existing(paths []string) []string {
	dir := map[string]map[string]bool{}
	var out []string
	for _, p := range paths {
		d := filepath.Dir(p)
		names, ok := dir[d]
		if !ok {
			names = map[string]bool{}
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				names[e.Name()] = true
			}
			dir[d] = names
		}
		if names[filepath.Base(p)] {
			out = append(out, p)
		}
	}
	return out
}

func (r *rollout) task(live bool) events.Task {
	t := events.Task{ID: r.head.id, Name: r.head.title, Cwd: r.head.cwd, Model: r.head.model,
		Created: r.head.created, Updated: r.mod}
	switch {
	case live && r.tail.inTurn:
		t.Status, t.Detail = events.StatusGenerating, DetailBusy
	case live:
		t.Status = events.StatusIdle
	case r.tail.inTurn:
		t.Status, t.Detail = events.StatusExited, DetailCutOff
	default:
		t.Status, t.Detail = events.StatusExited, DetailExited
	}
	return t
}

// Session finds a session by its thread id or a unique prefix of it.
func (l *Local) Session(ctx context.Context, idOrPrefix string) (events.Task, error) {
	ts, err := l.Sessions(ctx)
	if err != nil {
		return events.Task{}, err
	}
	found := client.Match(ts, idOrPrefix)
	switch len(found) {
	case 0:
		return events.Task{}, &client.NoTaskError{Query: idOrPrefix}
	case 1:
		return found[0], nil
	}
	ids := make([]string, 0, len(found))
	for _, t := range found {
		ids = append(ids, t.ID)
	}
	return events.Task{}, fmt.Errorf("%w: %q is the start of %s", client.ErrAmbiguousTask, idOrPrefix, strings.Join(ids, ", "))
}

// path is the rollout of a thread.
func (l *Local) path(ctx context.Context, thread string) (string, error) {
	if _, err := l.Session(ctx, thread); err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var best *rollout
	for _, r := range l.files {
		if r.head.id == thread && (best == nil || r.mod.After(best.mod)) {
			best = r
		}
	}
	if best == nil {
		return "", &client.NoTaskError{Query: thread}
	}
	return best.path, nil
}

// Send queues a follow-up with `codex queue`: the Codex that holds the
// thread takes it when its turn ends (at once when idle, within seconds:
// the TUI looks at its queue now and then). The receipt is the user
// message, in a turn started by the queue, in the rollout.
func (l *Local) Send(ctx context.Context, sessionID string, m client.Message) (client.SendResult, error) {
	if l.program == "" {
		return client.SendResult{}, client.Permanent(fmt.Errorf("the Codex session is read-only: %s", l.noSend))
	}
	if strings.TrimSpace(m.Text) == "" {
		return client.SendResult{}, client.Permanent(errors.New("codex: an empty message is not sent"))
	}
	t, err := l.Session(ctx, sessionID)
	if err != nil {
		if errors.Is(err, client.ErrNoTask) {
			return client.SendResult{}, client.Permanent(err)
		}
		return client.SendResult{}, client.Retryable(err)
	}
	if t.Status == events.StatusExited {
		// codex queue would accept it, and it would wait, unseen, until
		// someone resumed the thread: perch holds it instead.
		return client.SendResult{}, client.Retryable(fmt.Errorf("the Codex session %s is not running (%s): resume it to send", t.ID, t.Detail))
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// --message=… keeps a text that begins with "-" a value.
	cmd := exec.CommandContext(cctx, l.program, "queue", "--thread", t.ID, "--message="+m.Text)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+l.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		// It never ran: the message went nowhere.
		return client.SendResult{}, client.Retryable(fmt.Errorf("running %s queue: %w", l.program, err))
	}
	if err := cmd.Wait(); err != nil {
		// It ran and failed, or was stopped: it may have queued the
		// message first. Unclassified, so that the outbox reads the
		// rollout before any resend.
		return client.SendResult{}, fmt.Errorf("%s queue for thread %s: %w: %s", l.program, t.ID, err, lastLine(stderr.String()))
	}
	res := client.SendResult{Queued: t.Status == events.StatusGenerating}
	// "Queued message <id> for thread <thread>."
	if f := strings.Fields(stdout.String()); len(f) >= 3 && f[0] == "Queued" && f[1] == "message" {
		res.ID = f[2]
	}
	return res, nil
}

// lastLine is the last non-empty line of s, bounded, for an error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 300 {
		line = strings.ToValidUTF8(line[:300], "") + "…"
	}
	return line
}

// Cancel is not offered: Codex has no way to stop another process's turn
// short of a signal.
func (l *Local) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, fmt.Errorf("codex: stopping a turn from perch: %w", client.ErrUnsupported)
}

// Create is not offered: a Codex session starts in a terminal.
func (l *Local) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, fmt.Errorf("codex: starting a session from perch: %w", client.ErrUnsupported)
}

// threadNames is what $CODEX_HOME/session_index.jsonl says of threads'
// names ({"id","thread_name","updated_at"} lines, the latest wins): a
// thread's name, given by Codex or the user, is its title before its
// first prompt. The file is read again only when it changed.
type threadNames struct {
	size  int64
	mod   time.Time
	names map[string]string
}

func (l *Local) threadNames() map[string]string {
	path := filepath.Join(l.dir, "session_index.jsonl")
	fi, err := os.Stat(path)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		return nil
	}
	if fi.Size() == l.names.size && fi.ModTime().Equal(l.names.mod) {
		return l.names.names
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return l.names.names
	}
	names := map[string]string{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			ID   string `json:"id"`
			Name string `json:"thread_name"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.ID != "" && strings.TrimSpace(rec.Name) != "" {
			names[rec.ID] = title(rec.Name)
		}
	}
	l.names = threadNames{size: fi.Size(), mod: fi.ModTime(), names: names}
	return names
}

// SessionFiles lists the rollouts under a Codex directory, as the index
// reads them: sessions/YYYY/MM/DD/rollout-*.jsonl.
func SessionFiles(dir string) []string {
	rollouts, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	return rollouts
}
