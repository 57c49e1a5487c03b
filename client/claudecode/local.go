package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/tally"
)

// The Claude Code sessions of this machine, live: a local CLI as a
// client.Backend. The CLI keeps, under its config directory
// ($CLAUDE_CONFIG_DIR, else ~/.claude):
//
//	sessions/<pid>.json                 one per running process: its session id, cwd,
//	                                    name, status (idle, busy, waiting + waitingFor),
//	                                    procStart and messagingSocketPath; removed on a
//	                                    clean exit, left behind by a kill
//	sessions/<pid>.<hash>.key           the messaging socket's token (0600)
//	projects/<dashed cwd>/<id>.jsonl    the transcript, whole messages as each reply ends
//	projects/<dashed cwd>/<id>/subagents/agent-<id>.jsonl   a subagent's transcript
//
// See docs/live/local.md.

// What listing reads of a transcript: its title and cwd are in its first
// lines, read firstRead bytes at a time, doubling up to headBytes, until
// they are found or maxHeadBytes were read; its last activity is the
// file's time. A transcript is never read whole to be listed.
const (
	firstRead    = 8 << 10
	headBytes    = 64 << 10
	maxHeadBytes = 512 << 10
)

// registryFile is sessions/<pid>.json as the CLI writes it.
type registryFile struct {
	PID             int    `json:"pid"`
	SessionID       string `json:"sessionId"`
	Cwd             string `json:"cwd"`
	StartedAt       int64  `json:"startedAt"`
	ProcStart       string `json:"procStart"`
	Version         string `json:"version"`
	Kind            string `json:"kind"`
	Name            string `json:"name"`
	NameSource      string `json:"nameSource"`
	Status          string `json:"status"`
	WaitingFor      string `json:"waitingFor"`
	UpdatedAt       int64  `json:"updatedAt"`
	StatusUpdatedAt int64  `json:"statusUpdatedAt"`
	SocketPath      string `json:"messagingSocketPath"`

	path string // where it was read
}

// Local is the Claude Code sessions under one config directory.
type Local struct {
	dir string
	// alive says whether a registry file's process runs (pid and start
	// time); tests replace it.
	alive func(pid int, procStart string) bool

	mu    sync.Mutex
	heads map[string]headInfo // transcript path → what its head said

	totals *tally.Tally // the transcripts' token counts and costs (totals.go)
}

// headInfo is what listing learned of a transcript, valid while its size
// and modification time stay the same.
type headInfo struct {
	size  int64
	mod   time.Time
	title string
	cwd   string
	start time.Time
}

// OpenLocal opens the Claude Code sessions of the config directory dir
// ($CLAUDE_CONFIG_DIR or ~/.claude). The directory need not exist yet.
func OpenLocal(dir string) (client.Backend, error) {
	if dir == "" {
		return nil, errors.New("claude-code: no config directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("claude-code: config directory %s: %w", dir, err)
	}
	return newLocal(abs, procAlive), nil
}

// newLocal is the sessions of dir whose processes live as alive says.
func newLocal(dir string, alive func(pid int, procStart string) bool) *Local {
	return &Local{dir: dir, alive: alive, heads: map[string]headInfo{}, totals: tally.New(countLine)}
}

// Name is the system's name.
func (l *Local) Name() string { return Importer().Name }

// URL is the config directory: no secret is in it.
func (l *Local) URL() string { return l.dir }

// Capabilities: follow-ups go through each session's messaging socket,
// which the CLI queues behind a running turn (ServerQueue). A session
// without a socket (an older CLI, or its process gone) refuses them with
// the reason (SessionCapabilities says so before anything is typed).
// Nothing can be cancelled or started from perch.
func (l *Local) Capabilities() client.Capabilities {
	return client.Capabilities{Send: true, ServerQueue: true}
}

// SessionCapabilities narrows Capabilities for one session: no Send
// where the session has no messaging socket, with the reason.
func (l *Local) SessionCapabilities(ctx context.Context, sessionID string) (client.Capabilities, string) {
	c := l.Capabilities()
	reg, ok := l.registryOf(sessionID)
	switch {
	case !ok:
		c.Send = false
		return c, "Claude Code session " + short(sessionID) + " is not running — read-only"
	case reg.SocketPath == "":
		c.Send = false
		return c, "Claude Code " + reg.Version + " has no messaging socket — read-only"
	}
	return c, ""
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Cancel is not offered: the CLI takes no interrupt from outside.
func (l *Local) Cancel(context.Context, string) ([]events.QueuedMessage, error) {
	return nil, fmt.Errorf("%w: a Claude Code session is stopped in its own terminal", client.ErrUnsupported)
}

// Create is not offered: perch starts no CLI.
func (l *Local) Create(context.Context, client.CreateRequest) (events.Task, error) {
	return events.Task{}, fmt.Errorf("%w: start claude in a terminal", client.ErrUnsupported)
}

// registries reads sessions/*.json: the live ones by session id, and the
// session ids whose registry file is stale (its process is gone).
func (l *Local) registries() (live map[string]registryFile, stale map[string]registryFile) {
	live, stale = map[string]registryFile{}, map[string]registryFile{}
	ents, err := os.ReadDir(filepath.Join(l.dir, "sessions"))
	if err != nil {
		return live, stale
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSuffix(name, ".json")); err != nil {
			continue
		}
		p := filepath.Join(l.dir, "sessions", name)
		data, err := readSmall(p, 64<<10)
		if err != nil {
			continue
		}
		var r registryFile
		if json.Unmarshal(data, &r) != nil || r.SessionID == "" || r.PID <= 0 {
			continue
		}
		r.path = p
		if l.alive(r.PID, r.ProcStart) {
			if have, ok := live[r.SessionID]; !ok || r.UpdatedAt > have.UpdatedAt {
				live[r.SessionID] = r
			}
		} else {
			stale[r.SessionID] = r
		}
	}
	return live, stale
}

// registryOf is the live registry file of a session.
func (l *Local) registryOf(id string) (registryFile, bool) {
	live, _ := l.registries()
	r, ok := live[id]
	return r, ok
}

// readSmall reads a file that should be small, refusing a large one.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// procAlive: the process pid runs and started at procStart (field 22 of
// /proc/<pid>/stat, clock ticks since boot), so a pid reused by another
// process is not taken for the CLI.
func procAlive(pid int, procStart string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: fields are counted after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(string(data[i+1:]))
	const field22 = 22 - 3 // fields[0] is field 3
	if len(fields) <= field22 {
		return false
	}
	return procStart == "" || fields[field22] == procStart
}

// transcripts lists projects/*/*.jsonl: the session id (the file's name)
// → its path.
func (l *Local) transcripts() map[string]string {
	out := map[string]string{}
	root := filepath.Join(l.dir, "projects")
	projects, err := os.ReadDir(root)
	if err != nil {
		return out
	}
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			name := f.Name()
			if f.IsDir() || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			id := strings.TrimSuffix(name, ".jsonl")
			if id == "" || strings.HasPrefix(id, "agent-") {
				continue
			}
			out[id] = filepath.Join(root, p.Name(), name)
		}
	}
	return out
}

// transcriptPath is where a session's transcript is or will be: beside
// the ones found, else under the dashed cwd the CLI uses.
func (l *Local) transcriptPath(id, cwd string) string {
	if p, ok := l.transcripts()[id]; ok {
		return p
	}
	return filepath.Join(l.dir, "projects", dashed(cwd), id+".jsonl")
}

// dashed is the project directory name the CLI makes of a cwd: every
// character but letters and digits becomes '-'.
func dashed(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// Sessions lists the sessions: every transcript and every running
// process, the most recently active first.
func (l *Local) Sessions(ctx context.Context) ([]events.Task, error) {
	out, _, err := l.sessions(ctx)
	return out, err
}

// sessions is Sessions with the registry files of the running ones.
func (l *Local) sessions(ctx context.Context) ([]events.Task, map[string]registryFile, error) {
	files, err := l.scan(ctx)
	if err != nil {
		return nil, nil, err
	}
	live, stale := l.registries()
	return compose(files, live, stale), live, nil
}

// scan is every transcript's task as its file and head say (status
// exited), by session id. Heads not known yet are read a few at a time.
func (l *Local) scan(ctx context.Context) (map[string]events.Task, error) {
	paths := l.transcripts()
	out := make(map[string]events.Task, len(paths))
	var mu sync.Mutex
	work := make(chan [2]string)
	var wg sync.WaitGroup
	for range headReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				t, ok := l.fileTask(w[0], w[1])
				mu.Lock()
				if ok {
					out[w[0]] = t
				}
				mu.Unlock()
			}
		}()
	}
	for id, p := range paths {
		if ctx.Err() != nil {
			break
		}
		work <- [2]string{id, p}
	}
	close(work)
	wg.Wait()
	return out, ctx.Err()
}

// headReaders is how many transcripts a scan reads at once: their heads
// are small reads, mostly waiting on the file system.
const headReaders = 4

// fileTask is a transcript's task as its file and head say; false when
// the file is gone.
func (l *Local) fileTask(id, path string) (events.Task, bool) {
	t, ok := l.task(id, path)
	t.Status = events.StatusExited
	t.Tokens, t.Cost, t.HasCost = l.usage(path)
	return t, ok
}

// compose is the list of sessions: the transcripts' tasks with what the
// registry files say of the running ones, and the stale registry files
// of sessions killed before they wrote a transcript; the most recently
// active first.
func compose(files map[string]events.Task, live, stale map[string]registryFile) []events.Task {
	out := make([]events.Task, 0, len(files)+len(live))
	for id, r := range live {
		t, ok := files[id]
		if !ok {
			t = events.Task{ID: id}
		}
		t.Status, t.WaitingFor = statusOf(r)
		if r.Cwd != "" {
			t.Cwd = r.Cwd
		}
		if r.Name != "" && (r.NameSource != "derived" || t.Name == "") {
			t.Name = r.Name
		}
		if u := time.UnixMilli(r.StatusUpdatedAt); r.StatusUpdatedAt > 0 && u.After(t.Updated) {
			t.Updated = u
		}
		// Created stays the transcript's first time (zero before it has
		// one): the outbox stamps messages with it, so it must not move
		// when the transcript appears.
		out = append(out, t)
	}
	for id, t := range files {
		if _, ok := live[id]; !ok {
			out = append(out, t)
		}
	}
	for id, r := range stale {
		if _, ok := files[id]; ok {
			continue
		}
		if _, ok := live[id]; ok {
			continue
		}
		// Killed before its first message: no transcript.
		out = append(out, events.Task{ID: id, Name: r.Name, Cwd: r.Cwd, Status: events.StatusExited,
			Created: time.UnixMilli(r.StartedAt), Updated: time.UnixMilli(r.UpdatedAt)})
	}
	slices.SortFunc(out, func(a, b events.Task) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// statusOf maps a live registry file's status to a task's.
func statusOf(r registryFile) (status, waitingFor string) {
	switch r.Status {
	case "busy":
		return events.StatusGenerating, ""
	case "waiting":
		w := r.WaitingFor
		if w == "" {
			w = "input needed"
		}
		return events.StatusWaiting, w
	case "idle", "":
		// "": the first registry file of a process, written before its
		// first status (~0.2 s later: idle at its prompt).
		return events.StatusIdle, ""
	}
	// A status this perch does not know: the process runs, and that is
	// all that is certain.
	return events.StatusGenerating, ""
}

// task is what a transcript's head and its file say of a session; false
// when the file is not there.
func (l *Local) task(id, path string) (events.Task, bool) {
	t := events.Task{ID: id}
	fi, err := os.Stat(path)
	if err != nil {
		return t, false
	}
	t.Updated = fi.ModTime()
	l.mu.Lock()
	h, ok := l.heads[path]
	l.mu.Unlock()
	if !ok || h.size != fi.Size() || !h.mod.Equal(fi.ModTime()) {
		h = readHead(path)
		h.size, h.mod = fi.Size(), fi.ModTime()
		l.mu.Lock()
		l.heads[path] = h
		l.mu.Unlock()
	}
	t.Name, t.Cwd, t.Created = h.title, h.cwd, h.start
	return t, true
}

// readHead reads the first lines of a transcript, at most maxHeadBytes,
// for its cwd, start and first prompt (the title).
func readHead(path string) headInfo {
	var h headInfo
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	// The title is usually within the first few kilobytes: read those
	// first, then more, doubling, up to maxHeadBytes.
	buf := make([]byte, 0, firstRead)
	for size, read := firstRead, 0; read < maxHeadBytes; size = min(size*2, headBytes) {
		if cap(buf)-len(buf) < size {
			buf = append(make([]byte, 0, len(buf)+size), buf...)
		}
		n, err := f.Read(buf[len(buf) : len(buf)+size])
		buf = buf[:len(buf)+n]
		read += n
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if headLine(&h, buf[:i]) {
				return h
			}
			buf = buf[i+1:]
		}
		if err != nil {
			break
		}
	}
	return h
}

// headLine reads one line of a transcript's head into h; true once the
// title is known.
func headLine(h *headInfo, line []byte) bool {
	var o struct {
		Type      string          `json:"type"`
		Cwd       string          `json:"cwd"`
		Timestamp time.Time       `json:"timestamp"`
		IsMeta    bool            `json:"isMeta"`
		Message   json.RawMessage `json:"message"`
		Title     string          `json:"customTitle"`
	}
	if json.Unmarshal(line, &o) != nil {
		return false
	}
	if h.cwd == "" {
		h.cwd = o.Cwd
	}
	if h.start.IsZero() && !o.Timestamp.IsZero() {
		h.start = o.Timestamp
	}
	if o.Type == "custom-title" && o.Title != "" {
		h.title = o.Title
		return true
	}
	if o.Type != "user" || o.IsMeta || h.title != "" {
		return false
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(o.Message, &m) != nil {
		return false
	}
	text := promptText(m.Content)
	if text == "" || strings.HasPrefix(text, "<") {
		return false // a command's output, a tool result: not a prompt
	}
	h.title = firstLine(text)
	return true
}

// promptText is the text of a user message's content: a string, or its
// text blocks.
func promptText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	for _, b := range blocks {
		if b.Type == "text" {
			if t := strings.TrimSpace(b.Text); t != "" {
				return t
			}
		}
	}
	return ""
}

// exact is the session whose whole id is id, found without listing
// every transcript (a backend's own calls name sessions by their id).
func (l *Local) exact(id string) (events.Task, bool) {
	if id == "" || strings.ContainsAny(id, "/\\*?[") {
		return events.Task{}, false
	}
	files := map[string]events.Task{}
	if m, _ := filepath.Glob(filepath.Join(l.dir, "projects", "*", id+".jsonl")); len(m) > 0 {
		if t, ok := l.fileTask(id, m[0]); ok {
			files[id] = t
		}
	}
	live, stale := l.registries()
	for _, t := range compose(files, live, stale) {
		if t.ID == id {
			return t, true
		}
	}
	return events.Task{}, false
}

// Session finds a session by its id or a unique prefix of it.
func (l *Local) Session(ctx context.Context, idOrPrefix string) (events.Task, error) {
	q := strings.TrimSpace(idOrPrefix)
	if t, ok := l.exact(q); ok {
		return t, nil
	}
	list, err := l.Sessions(ctx)
	if err != nil {
		return events.Task{}, err
	}
	found := client.Match(list, q)
	switch len(found) {
	case 0:
		return events.Task{}, &client.NoTaskError{Query: q}
	case 1:
		return found[0], nil
	}
	ids := make([]string, 0, 5)
	for i, t := range found {
		if i == 5 {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, t.ID)
	}
	return events.Task{}, fmt.Errorf("%w: %q matches %d Claude Code sessions (%s)", client.ErrAmbiguousTask, q, len(found), strings.Join(ids, ", "))
}

// SessionFiles lists the session files under a Claude Code directory, as
// the index reads them: projects/<project>/<session>.jsonl and their
// subagents' projects/<project>/<session>/subagents/agent-<id>.jsonl.
func SessionFiles(dir string) []string {
	main, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "*.jsonl"))
	subs, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "*", "subagents", "*.jsonl"))
	return append(main, subs...)
}
