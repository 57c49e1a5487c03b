package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/anthropic"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// recheck is how often a followed session is looked at without a file
// event: a process killed leaves no event behind, and a directory made
// after the watch began is watched from then.
const recheck = 500 * time.Millisecond

// Follow reads the session's transcript, then follows it: each line the
// CLI appends is decoded and handed on as it is written (inotify tells
// when), its subagents' transcripts under their Agent call, and its
// process's state from the registry file as a run state.
func (l *Local) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	task, err := l.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	id := task.ID
	path := l.transcriptPath(id, task.Cwd)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("claude-code: watch %s: %w", path, err)
	}
	defer w.Close()
	f := &follower{ctx: ctx, l: l, id: id, path: path, w: w, on: on, main: &tail{path: path},
		subDir: filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents"), watched: map[string]bool{}}
	f.reset()
	defer f.closeFiles()
	f.watchDirs()
	f.step(true)
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			f.event(ev)
			// Take every event already queued: one read serves them all.
			for more := true; more; {
				select {
				case ev := <-w.Events:
					f.event(ev)
				default:
					more = false
				}
			}
			f.step(false)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			f.notice(events.LevelWarning, "watching the files: "+err.Error())
		case <-tick.C:
			f.watchDirs()
			f.step(false)
		}
	}
}

// follower is one Follow's state.
type follower struct {
	ctx    context.Context
	l      *Local
	id     string
	path   string
	w      *fsnotify.Watcher
	on     func(client.Update)
	main   *tail
	dec    *Decoder
	subDir string
	subs   map[string]*subTail // by file name
	// prompts are the Agent calls whose subagent has not been matched to
	// a file yet: the prompt → the call id.
	prompts map[string]string
	// agentCalls are the Agent calls seen, whose result ends a subagent.
	agentCalls map[string]bool
	watched    map[string]bool
	status     string // the run state last handed on
	regPath    string // the session's registry file, once found
	// regScan is when the registry files were last looked through for
	// the session, not found; regDirty: one was written since.
	regScan  time.Time
	regDirty bool
	synced   bool
	line     int
}

// subTail is one subagent's transcript.
type subTail struct {
	tail
	call    string   // the Agent call it runs under, once known
	pending [][]byte // lines read before the call was known
	// usage is each reply's usage by message id (the CLI writes a reply
	// as several lines, each with the message's usage so far).
	usage    map[string]*anthropic.UsageMax
	reported bool // its usage went into the totals
}

// event notes what a file event means before the step that reads.
func (f *follower) event(ev fsnotify.Event) {
	if ev.Op&fsnotify.Create != 0 {
		f.watchDirs()
	}
	if filepath.Dir(ev.Name) == filepath.Join(f.l.dir, "sessions") {
		f.regDirty = true
	}
}

// closeFiles closes every file the follower reads.
func (f *follower) closeFiles() {
	f.main.close()
	for _, s := range f.subs {
		s.close()
	}
}

func (f *follower) reset() {
	for _, s := range f.subs {
		s.close()
	}
	f.dec = NewDecoder()
	f.subs = map[string]*subTail{}
	f.prompts = map[string]string{}
	f.agentCalls = map[string]bool{}
	f.line = 0
}

// watchDirs watches the directories the session's files are in, as they
// come to exist: the config directory's sessions/ (the registry), the
// transcript's directory and the subagents' one. For one not made yet,
// its nearest parent inside the config directory is watched, which tells
// when it is made.
func (f *follower) watchDirs() {
	for _, d := range []string{filepath.Join(f.l.dir, "sessions"), filepath.Dir(f.path), f.subDir} {
		for ; !f.watched[d]; d = filepath.Dir(d) {
			if f.w.Add(d) == nil {
				f.watched[d] = true
				break
			}
			if d == f.l.dir || !strings.HasPrefix(d, f.l.dir) {
				break
			}
		}
	}
}

// batchBytes is how much of the transcript one update carries while a
// long history is read: the consumer gets it in parts rather than all
// of it at once.
const batchBytes = 1 << 20

// step reads what changed and hands it on: the transcript in updates of
// batchBytes, then the subagents' lines and the run state.
func (f *follower) step(first bool) {
	var u client.Update
	if f.main.f == nil {
		// No transcript yet where the cwd says: the CLI may have named
		// its directory otherwise; look for the file by its name.
		if m, _ := filepath.Glob(filepath.Join(f.l.dir, "projects", "*", f.id+".jsonl")); len(m) > 0 && m[0] != f.path {
			f.path, f.main.path = m[0], m[0]
			f.subDir = filepath.Join(strings.TrimSuffix(m[0], ".jsonl"), "subagents")
			f.watchDirs()
		}
	}
	for {
		r, err := f.main.read(batchBytes)
		if err != nil {
			f.notice(events.LevelWarning, err.Error())
		}
		if r.reset && !first {
			f.reset()
			u.Reset = true
		}
		for _, line := range r.lines {
			if call := f.agentResult(line); call != "" {
				// The subagent is done: what is left of its transcript,
				// and its usage for the totals, before its call's result.
				u.Events = append(u.Events, f.readSubs()...)
				u.Events = append(u.Events, f.subUsage(call)...)
			}
			u.Events = append(u.Events, f.mainLine(line)...)
		}
		if r.skipped > 0 {
			u.Events = append(u.Events, anthropic.Notice(events.LevelWarning, events.NoticeInfo,
				fmt.Sprintf("%d transcript %s over %d MB left out", r.skipped, map[bool]string{true: "line", false: "lines"}[r.skipped == 1], maxLine>>20)))
		}
		if !r.more || f.ctx.Err() != nil {
			break
		}
		if len(u.Events) > 0 || u.Reset {
			f.on(u)
			u = client.Update{}
		}
	}
	u.Events = append(u.Events, f.readSubs()...)
	if st := f.runStatus(); st != f.status {
		f.status = st
		u.Events = append(u.Events, events.Event{Kind: events.KindRunState, RunStatus: st})
	}
	if !f.synced {
		f.synced = true
		u.Synced = true
		live := sse.ConnState{Phase: sse.PhaseLive}
		u.State = &live
	}
	if len(u.Events) == 0 && !u.Reset && !u.Synced {
		return
	}
	f.on(u)
}

// mainLine decodes a line of the session's transcript, noting the Agent
// calls it makes so their subagents' files can be shown under them.
func (f *follower) mainLine(line []byte) []events.Event {
	f.line++
	if strings.Contains(string(line[:min(len(line), 4096)]), `"assistant"`) {
		f.noteAgentCalls(line)
	}
	return f.dec.DecodeAt("line "+strconv.Itoa(f.line), line)
}

// noteAgentCalls remembers the prompt of each Agent (Task) call of an
// assistant line: a subagent's transcript starts with that prompt.
func (f *follower) noteAgentCalls(line []byte) {
	var o struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type  string `json:"type"`
				ID    string `json:"id"`
				Name  string `json:"name"`
				Input struct {
					Prompt string `json:"prompt"`
				} `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &o) != nil || o.Type != "assistant" {
		return
	}
	for _, c := range o.Message.Content {
		if c.Type == "tool_use" && (c.Name == "Agent" || c.Name == "Task") && c.Input.Prompt != "" && len(f.prompts) < 1024 {
			f.prompts[strings.TrimSpace(c.Input.Prompt)] = c.ID
			f.agentCalls[c.ID] = true
		}
	}
}

// readSubs reads the subagents' transcripts: each line a step shown in
// its Agent call's output.
func (f *follower) readSubs() []events.Event {
	ents, err := os.ReadDir(f.subDir)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "agent-") && strings.HasSuffix(n, ".jsonl") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []events.Event
	for _, n := range names {
		s := f.subs[n]
		if s == nil {
			if len(f.subs) >= 256 {
				continue
			}
			s = &subTail{tail: tail{path: filepath.Join(f.subDir, n)}}
			f.subs[n] = s
		}
		r, err := s.read(0)
		if err != nil {
			continue
		}
		if r.reset {
			s.pending, s.usage, s.reported = nil, nil, false
		}
		for _, line := range r.lines {
			if s.call == "" {
				s.call = f.matchSub(line)
				if s.call == "" {
					if len(s.pending) < 64 {
						s.pending = append(s.pending, line)
					}
					continue
				}
				for _, p := range s.pending {
					out = append(out, f.subLine(s, p)...)
				}
				s.pending = nil
			}
			out = append(out, f.subLine(s, line)...)
		}
	}
	return out
}

// matchSub finds the Agent call whose prompt a subagent line gives.
func (f *follower) matchSub(line []byte) string {
	var o struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &o) != nil || o.Type != "user" {
		return ""
	}
	p := promptText(o.Message.Content)
	if call, ok := f.prompts[p]; ok {
		delete(f.prompts, p)
		return call
	}
	return ""
}

// subLine is a subagent's line as a step of its call's output; its
// prompt (the call's own argument) is not repeated. A reply's usage is
// kept for the totals.
func (f *follower) subLine(s *subTail, line []byte) []events.Event {
	o, _ := anthropic.ObjectInPlace(line)
	if o == nil {
		return nil
	}
	switch normalize.StrField(o, "type") {
	case "assistant":
		if m := normalize.AsObject(o["message"]); m != nil && m["usage"] != nil && len(s.usage) < 4096 {
			id := normalize.StrField(m, "id")
			if s.usage == nil {
				s.usage = map[string]*anthropic.UsageMax{}
			}
			if s.usage[id] == nil {
				s.usage[id] = &anthropic.UsageMax{}
			}
			s.usage[id].Merge(m["usage"])
		}
		return f.dec.sub.line(s.call, o, f.dec.tools.Name(s.call))
	case "user":
		return f.dec.sub.line(s.call, o, f.dec.tools.Name(s.call))
	}
	return nil
}

// agentResult is the Agent call whose result a line of the session's
// transcript carries ("" for any other line).
func (f *follower) agentResult(line []byte) string {
	if len(f.agentCalls) == 0 || !bytes.Contains(line, []byte(`"tool_result"`)) {
		return ""
	}
	var o struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type string `json:"type"`
				ID   string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &o) != nil || o.Type != "user" {
		return ""
	}
	for _, c := range o.Message.Content {
		if c.Type == "tool_result" && f.agentCalls[c.ID] {
			return c.ID
		}
	}
	return ""
}

// subUsage is the usage of the subagent that ran under call, once, as a
// notice counted in the session's totals.
func (f *follower) subUsage(call string) []events.Event {
	var out []events.Event
	for _, s := range f.subs {
		if s.call != call || s.reported || len(s.usage) == 0 {
			continue
		}
		s.reported = true
		var sum events.Usage
		for _, u := range s.usage {
			if v := u.Usage(); v != nil {
				sum.Add(v)
			}
		}
		ev := anthropic.Notice(events.LevelInfo, events.NoticeProgress,
			fmt.Sprintf("Subagent: %d replies, %d tokens in, %d out", len(s.usage), sum.InputTokens+sum.CachedTokens+sum.CacheWriteTokens, sum.OutputTokens))
		ev.Usage = &sum
		out = append(out, ev)
	}
	return out
}

// runStatus is the run state of the session's process: generating while
// it is busy or waiting for the user (the run is not over), idle, or
// stopped when no process runs it. The registry file found once is read
// alone after that, while it still names the session.
func (f *follower) runStatus() string {
	r, ok := f.registry()
	if !ok {
		return events.StatusStopped
	}
	st, _ := statusOf(r)
	if st == events.StatusWaiting {
		return events.StatusGenerating
	}
	return st
}

// registry is the session's live registry file.
func (f *follower) registry() (registryFile, bool) {
	if f.regPath != "" {
		if data, err := readSmall(f.regPath, 64<<10); err == nil {
			var r registryFile
			if json.Unmarshal(data, &r) == nil && r.SessionID == f.id && f.l.alive(r.PID, r.ProcStart) {
				r.path = f.regPath
				return r, true
			}
		}
		f.regPath = ""
	}
	if !f.regDirty && time.Since(f.regScan) < regRescan {
		return registryFile{}, false // none a moment ago, and none written since
	}
	f.regDirty = false
	r, ok := f.l.registryOf(f.id)
	if ok {
		f.regPath = r.path
	} else {
		f.regScan = time.Now()
	}
	return r, ok
}

// regRescan: a session with no registry file is looked for again this
// often even without an event (one missed in an overflow).
const regRescan = 5 * time.Second

func (f *follower) notice(level events.NoticeLevel, text string) {
	f.on(client.Update{Events: []events.Event{anthropic.Notice(level, events.NoticeInfo, text)}})
}
