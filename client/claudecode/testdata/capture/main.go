//go:build ignore

// Command capture is a fake Anthropic Messages API on loopback that serves
// scripted model turns to the real Claude Code CLI, so that
// client/claudecode/testdata/capture.sh can record what the CLI really
// writes. It is run only by that script (go run), never built by go build.
//
// A conversation is told apart by its first user message: the main prompt
// of a scenario, or the prompt a Task/Agent call gives a subagent. Its
// step is the number of assistant messages the request already holds, so
// the Nth request of a conversation gets the Nth scripted turn. Requests
// of no scripted conversation (titles, summaries, checks the CLI makes on
// its own) get a short plain answer.
//
// Every request of a scripted conversation is logged (-log) with the last
// message it sends: the tool results the CLI returns to the model, the
// ground truth of what its tools produced.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// block is one content block of a scripted turn.
type block struct {
	Type     string         `json:"type"` // text, thinking, tool_use
	Text     string         `json:"text,omitempty"`
	Thinking string         `json:"thinking,omitempty"`
	Name     string         `json:"name,omitempty"`
	Input    map[string]any `json:"input,omitempty"`
}

// turn is one scripted reply: blocks, or an HTTP error.
type turn struct {
	Blocks []block
	Status int    // an HTTP error status instead of a reply
	Error  string // its message
	Then   *turn  // what a retry of the same request gets
	// Delay holds the reply back (its headers included) so that a live
	// state (busy) lasts long enough to be seen.
	Delay time.Duration
}

func text(s string) block  { return block{Type: "text", Text: s} }
func think(s string) block { return block{Type: "thinking", Thinking: s} }
func call(name string, input map[string]any) block {
	return block{Type: "tool_use", Name: name, Input: input}
}

// The prompts the capture script passes to claude -p. They key the
// conversations below.
const (
	promptTools    = "Set up notes.txt, check it, and try the build."
	promptSubagent = "How many files are in this directory? Ask a subagent."
	promptError    = "Print the date, then summarize."
	subagentPrompt = "Count the files in the current directory with ls and wc, and report the number."
	// promptLive drives the interactive session of capture.sh's live
	// scenario through idle -> busy -> waiting (a Bash call that writes,
	// so the CLI asks) -> busy -> idle, then answers two follow-ups sent
	// through the messaging socket (one at idle, one while busy).
	promptLive = "Walk through the live states."
)

var scripts = map[string][]turn{
	promptLive: {
		{Delay: 2 * time.Second, Blocks: []block{
			text("I'll make a file."),
			call("Bash", map[string]any{"command": "touch made.txt", "description": "Make a file"}),
		}},
		{Delay: 2 * time.Second, Blocks: []block{text("Made the file.")}},
		{Delay: 3 * time.Second, Blocks: []block{text("Got the first follow-up.")}},
		{Delay: time.Second, Blocks: []block{text("Got the second follow-up.")}},
	},
	promptTools: {
		{Blocks: []block{
			think("Plan the work as tasks first."),
			text("I'll track this as tasks."),
			call("TaskCreate", map[string]any{"subject": "Write notes.txt", "description": "Create notes.txt with two lines", "activeForm": "Writing notes.txt"}),
			call("TaskCreate", map[string]any{"subject": "Run the build", "description": "Run make and report", "activeForm": "Running the build"}),
		}},
		{Blocks: []block{
			call("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}),
			call("Write", map[string]any{"file_path": "@CWD@/notes.txt", "content": "alpha\nbeta\n"}),
		}},
		{Blocks: []block{
			call("Read", map[string]any{"file_path": "@CWD@/notes.txt"}),
			call("Edit", map[string]any{"file_path": "@CWD@/notes.txt", "old_string": "beta", "new_string": "gamma"}),
		}},
		{Blocks: []block{
			call("Bash", map[string]any{"command": "cat notes.txt && ls", "description": "Show the notes and the directory"}),
			call("Bash", map[string]any{"command": "echo building >&2; exit 3", "description": "Run the build"}),
		}},
		{Blocks: []block{
			call("WebFetch", map[string]any{"url": "http://127.0.0.1:9/docs", "prompt": "Summarize the build docs"}),
			call("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
			call("TaskList", map[string]any{}),
		}},
		{Blocks: []block{
			text("notes.txt now reads alpha and gamma."),
			text("The build failed with exit code 3, and fetching the docs was not allowed."),
		}},
	},
	promptSubagent: {
		{Blocks: []block{
			text("I'll ask a subagent to count them."),
			call("Agent", map[string]any{"description": "Count files", "prompt": subagentPrompt,
				"subagent_type": "general-purpose", "run_in_background": false}),
		}},
		{Blocks: []block{text("The subagent found no files here.")}},
	},
	subagentPrompt: {
		{Blocks: []block{call("Bash", map[string]any{"command": "ls | wc -l", "description": "Count the files"})}},
		{Blocks: []block{text("There are 0 files in the current directory.")}},
	},
	promptError: {
		{Blocks: []block{call("Bash", map[string]any{"command": "date -u -d @0 +%Y", "description": "Print a fixed date"})}},
		// Overloaded once (the CLI retries), then refused for good.
		{Status: 529, Error: "Overloaded", Then: &turn{Status: 400, Error: "The fake provider refused this request."}},
	},
}

type server struct {
	cwd  string
	mu   sync.Mutex
	log  *os.File
	dump *os.File
	n    int // replies given, for ids
	// attempts counts the requests of each (conversation, step): a
	// retry of a step gets its turn's Then.
	attempts map[string]int
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	logPath := flag.String("log", "requests.jsonl", "where the requests of scripted conversations are logged")
	cwd := flag.String("cwd", "", "the scratch directory claude runs in (replaces @CWD@)")
	portFile := flag.String("port-file", "", "write the port here once listening")
	dump := flag.String("dump", "", "also write every request body whole to this file (debugging)")
	trim := flag.Bool("trim-session", false, "copy the session file in the first argument to the second without the CLI's own prompt text, then exit")
	record := flag.String("record", "", "record the changes of this config directory's registry files and transcripts to -record-out until -record-stop exists, then exit")
	recordOut := flag.String("record-out", "", "where -record writes")
	recordStop := flag.String("record-stop", "", "the file whose existence ends -record")
	sendTo := flag.String("send", "", "send the text in the first argument to the one running session of this config directory through its messaging socket, then exit")
	flag.Parse()
	if *record != "" {
		if err := recordDir(*record, *recordOut, *recordStop); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *sendTo != "" {
		if err := sendPeer(*sendTo, flag.Arg(0)); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *trim {
		if err := trimSession(flag.Arg(0), flag.Arg(1)); err != nil {
			log.Fatal(err)
		}
		return
	}
	f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{cwd: *cwd, log: f, attempts: map[string]int{}}
	if *dump != "" {
		if s.dump, err = os.Create(*dump); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *portFile != "" {
		port := ln.Addr().(*net.TCPAddr).Port
		if err := os.WriteFile(*portFile, []byte(fmt.Sprint(port)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, s))
}

// request is what the fake reads of a Messages API request.
type request struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if s.dump != nil {
		s.mu.Lock()
		s.dump.Write(append(body, '\n'))
		s.mu.Unlock()
	}
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		// count_tokens and anything else: a plausible empty answer.
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens":100}`)
			return
		}
		log.Printf("unknown path %s", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
		return
	}
	key := firstText(req.Messages[0].Content)
	script, scripted := scripts[key]
	step := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			step++
		}
	}
	if !scripted || step >= len(script) {
		log.Printf("unscripted request (%d messages, stream %v): %.80q", len(req.Messages), req.Stream, lastText(req.Messages[len(req.Messages)-1].Content))
		s.reply(w, req, turn{Blocks: []block{text("OK")}}, "end_turn", 0)
		return
	}
	s.logRequest(key, step, req.Model, req.Messages[len(req.Messages)-1].Content)
	t := script[step]
	time.Sleep(t.Delay)
	s.mu.Lock()
	attempt := fmt.Sprint(key, "\x00", step)
	for i := s.attempts[attempt]; i > 0 && t.Then != nil; i-- {
		t = *t.Then
	}
	s.attempts[attempt]++
	s.mu.Unlock()
	if t.Status != 0 {
		kind := "invalid_request_error"
		if t.Status == 529 {
			kind = "overloaded_error"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]any{"type": kind, "message": t.Error}})
		return
	}
	stop := "end_turn"
	for _, b := range t.Blocks {
		if b.Type == "tool_use" {
			stop = "tool_use"
		}
	}
	s.reply(w, req, t, stop, step)
}

func (s *server) logRequest(key string, step int, model string, last json.RawMessage) {
	var blocks []map[string]any
	json.Unmarshal(last, &blocks)
	var results []map[string]any
	for _, b := range blocks {
		if b["type"] == "tool_result" {
			b["content"] = withoutReminders(b["content"])
			results = append(results, b)
		}
	}
	if len(results) == 0 {
		return // the prompt: nothing a tool returned
	}
	conv := "main"
	if key == subagentPrompt {
		conv = "subagent"
	}
	line, _ := json.Marshal(map[string]any{"conversation": conv, "step": step, "model": model, "tool_results": results})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.Write(append(line, '\n'))
}

// withoutReminders drops the <system-reminder> sections the CLI appends to
// a tool result (its own prompt text, not what the tool returned) from a
// result's content, a string or a list of blocks.
func withoutReminders(content any) any {
	cut := func(s string) string {
		for {
			i := strings.Index(s, "<system-reminder>")
			if i < 0 {
				return s
			}
			j := strings.Index(s[i:], "</system-reminder>")
			if j < 0 {
				return strings.TrimRight(s[:i], "\n")
			}
			rest := strings.TrimLeft(s[i+j+len("</system-reminder>"):], "\n")
			if rest == "" {
				s = strings.TrimRight(s[:i], "\n") // appended: the newlines before it go too
			} else {
				s = s[:i] + rest
			}
		}
	}
	switch c := content.(type) {
	case string:
		return cut(c)
	case []any:
		var out []any
		for _, b := range c {
			if bo, ok := b.(map[string]any); ok && bo["type"] == "text" {
				t := cut(bo["text"].(string))
				if t == "" {
					continue
				}
				bo["text"] = t
			}
			out = append(out, b)
		}
		return out
	}
	return content
}

// firstText is the first text of a message's content (a string or blocks),
// less the system reminders the CLI puts before the prompt.
func firstText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return strings.TrimSpace(str)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	for _, b := range blocks {
		t := strings.TrimSpace(b.Text)
		if b.Type == "text" && t != "" && !strings.HasPrefix(t, "<system-reminder>") {
			return t
		}
	}
	return ""
}

func lastText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

func (s *server) reply(w http.ResponseWriter, req request, t turn, stop string, step int) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	id := fmt.Sprintf("msg_fake%04d", n)
	var content []map[string]any
	for i, b := range t.Blocks {
		switch b.Type {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case "thinking":
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": "sig" + id})
		case "tool_use":
			in := map[string]any{}
			for k, v := range b.Input {
				if sv, ok := v.(string); ok {
					v = strings.ReplaceAll(sv, "@CWD@", s.cwd)
				}
				in[k] = v
			}
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake%04d_%d", n, i), "name": b.Name, "input": in})
		}
	}
	inTok := 1200 + 300*step
	outTok := 0
	for _, c := range content {
		j, _ := json.Marshal(c)
		outTok += len(j)/4 + 1
	}
	usage := map[string]any{"input_tokens": inTok, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": outTok}
	if step > 0 {
		usage["cache_read_input_tokens"] = 9000
	}
	model := req.Model
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(event string, data any) {
		j, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, j)
		if fl != nil {
			fl.Flush()
		}
	}
	startUsage := map[string]any{}
	for k, v := range usage {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": startUsage}})
	send("ping", map[string]any{"type": "ping"})
	for i, c := range content {
		switch c["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range split(c["text"].(string)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
			}
		case "thinking":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, piece := range split(c["thinking"].(string)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": piece}})
			}
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": c["signature"]}})
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			j, _ := json.Marshal(c["input"])
			for _, piece := range split(string(j)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTok}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// trimSession copies a session file without the lines that hold the CLI's
// own prompt text and request records (attachment, api-request*): they are
// large, not the conversation, and not ours to publish. Every other line
// is kept byte for byte.
func trimSession(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var kept []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		var head struct {
			Type string `json:"type"`
		}
		json.Unmarshal([]byte(line), &head)
		if head.Type == "attachment" || strings.HasPrefix(head.Type, "api-request") {
			continue
		}
		kept = append(kept, line...)
	}
	return os.WriteFile(out, kept, 0o644)
}

// split cuts s in two pieces (at a rune boundary) so that deltas really
// arrive in parts.
func split(s string) []string {
	r := []rune(s)
	if len(r) < 2 {
		return []string{s}
	}
	return []string{string(r[:len(r)/2]), string(r[len(r)/2:])}
}

// recordDir polls a config directory every 5 ms and writes one JSON line
// per change, with the milliseconds since it began: a registry file
// (sessions/*.json) written whole or removed, the bytes appended to a
// transcript (projects/**.jsonl, subagents too), a key file or a socket
// appearing (their contents are not recorded: the token is a secret).
// The transcript's appends are kept byte for byte, less the lines
// trimSession drops (the CLI's own prompt text), so a test can replay
// the files as the CLI wrote them, with their timing.
func recordDir(dir, out, stop string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	start := time.Now()
	content := map[string]string{}
	sizes := map[string]int64{}
	partial := map[string]string{}
	emit := func(op, rel, data string) {
		enc.Encode(map[string]any{"ms": time.Since(start).Milliseconds(), "op": op, "path": rel, "data": data})
	}
	for {
		seen := map[string]bool{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			switch {
			case strings.HasPrefix(rel, "sessions/") && strings.HasSuffix(rel, ".json"):
				seen[rel] = true
				data, err := os.ReadFile(p)
				if err != nil || !json.Valid(data) {
					return nil
				}
				if content[rel] != string(data) {
					content[rel] = string(data)
					emit("write", rel, string(data))
				}
			case strings.HasPrefix(rel, "sessions/") && strings.HasSuffix(rel, ".key"):
				seen[rel] = true
				if _, ok := content[rel]; !ok {
					content[rel] = ""
					emit("key", rel, "")
				}
			case strings.HasPrefix(rel, "projects/") && strings.HasSuffix(rel, ".jsonl"):
				seen[rel] = true
				fi, err := os.Stat(p)
				if err != nil || fi.Size() == sizes[rel] {
					return nil
				}
				fh, err := os.Open(p)
				if err != nil {
					return nil
				}
				buf := make([]byte, fi.Size()-sizes[rel])
				n, _ := fh.ReadAt(buf, sizes[rel])
				fh.Close()
				sizes[rel] += int64(n)
				text := partial[rel] + string(buf[:n])
				cut := strings.LastIndexByte(text, '\n') + 1
				partial[rel] = text[cut:]
				var kept strings.Builder
				for _, line := range strings.SplitAfter(text[:cut], "\n") {
					var head struct {
						Type string `json:"type"`
					}
					json.Unmarshal([]byte(line), &head)
					if head.Type == "attachment" || strings.HasPrefix(head.Type, "api-request") {
						continue
					}
					kept.WriteString(line)
				}
				if kept.Len() > 0 {
					emit("append", rel, kept.String())
				}
			}
			return nil
		})
		for rel := range content {
			if !seen[rel] {
				delete(content, rel)
				emit("remove", rel, "")
			}
		}
		if _, err := os.Stat(stop); err == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sendPeer sends text to the one running session of a config directory
// as another client would: an auth line with the key file's token, then
// the message, on the registry's messaging socket.
func sendPeer(dir, text string) error {
	regs, _ := filepath.Glob(filepath.Join(dir, "sessions", "*.json"))
	if len(regs) != 1 {
		return fmt.Errorf("want one registry file in %s, have %d", dir, len(regs))
	}
	var reg struct {
		PID       int    `json:"pid"`
		SessionID string `json:"sessionId"`
		Socket    string `json:"messagingSocketPath"`
	}
	data, err := os.ReadFile(regs[0])
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return err
	}
	keys, _ := filepath.Glob(filepath.Join(dir, "sessions", fmt.Sprintf("%d.*.key", reg.PID)))
	var key struct {
		Token string `json:"peerToken"`
	}
	if len(keys) == 1 {
		kd, _ := os.ReadFile(keys[0])
		json.Unmarshal(kd, &key)
	}
	c, err := net.Dial("unix", reg.Socket)
	if err != nil {
		return err
	}
	defer c.Close()
	enc := json.NewEncoder(c)
	if key.Token != "" {
		if err := enc.Encode(map[string]any{"type": "auth", "token": key.Token}); err != nil {
			return err
		}
	}
	return enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text},
		"session_id": reg.SessionID, "from": "capture"})
}
