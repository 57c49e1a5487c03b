package suna

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Model is the model the scripted agents name.
const Model = "anthropic/claude-sonnet-4-5"

// script is a scripted agent: it drives a run through its steps.
type script func(a *agentRun) error

// errStopped ends a script when its run is stopped.
var errStopped = fmt.Errorf("stopped")

// pick chooses the agent by the prompt's words: "fail" fails the run,
// "slow" streams a long answer slowly (to be stopped), "bench N" streams
// about N frames as fast as it can; anything else is the demo agent.
func pick(prompt string) script {
	words := strings.Fields(strings.ToLower(prompt))
	for i, w := range words {
		switch w {
		case "fail":
			return failing(prompt)
		case "slow":
			return slow
		case "bench":
			n := BenchFrames
			if i+1 < len(words) {
				if v, err := strconv.Atoi(words[i+1]); err == nil && v > 0 {
					n = v
				}
			}
			return bench(n)
		}
	}
	return demo(prompt)
}

// BenchFrames is the size of the benchmark run ("bench" without a number).
const BenchFrames = 20000

// agentRun is a run's agent as it works: the stream it writes and the
// rows it will store.
type agentRun struct {
	s     *Server
	r     *run
	pace  time.Duration
	resp  string // the current llm_response_id
	n     int    // LLM responses so far
	turn  turnState
	frame int
}

type turnState struct {
	text, reasoning strings.Builder
	calls           []toolCall
}

type toolCall struct {
	id, name string
	args     obj
}

func (s *Server) agent(r *run, sc script) {
	defer s.agents.Done()
	a := &agentRun{s: s, r: r, pace: s.opts.FrameDelay}
	err := sc(a)
	switch {
	case err == errStopped:
		// A stop writes nothing to the stream (the executor leaves its loop
		// first); what the turn had so far is stored.
		a.saveTurn("cancelled")
		s.finish(r, "stopped", "Stopped by cancellation_event")
	case err != nil:
		s.finish(r, "failed", err.Error())
	default:
		s.finish(r, "completed", "")
	}
}

// wait paces the run; false when it was stopped meanwhile.
func (a *agentRun) wait(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-a.r.stop:
			return false
		case <-a.s.stopAll:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.r.stop:
		return false
	case <-a.s.stopAll:
		return false
	case <-t.C:
		return true
	}
}

// hold waits for Release when the run started while holding (Hold,
// Options.Hold).
func (a *agentRun) hold() bool {
	if a.r.held == nil {
		return true
	}
	select {
	case <-a.r.stop:
		return false
	case <-a.s.stopAll:
		return false
	case <-a.r.held:
		return true
	}
}

// emit writes a bare frame to the stream and paces.
func (a *agentRun) emit(payload obj) error {
	if !a.wait(a.pace) {
		return errStopped
	}
	a.s.append(a.r, payload)
	a.frame++
	return nil
}

func (a *agentRun) meta(extra ...kv) obj {
	m := obj{{"thread_run_id", a.r.id}}
	return append(m, extra...)
}

// chunk streams a message row that is never stored (message_id null).
func (a *agentRun) chunk(typ string, content, meta obj) error {
	if !a.wait(a.pace) {
		return errStopped
	}
	s := a.s
	s.mu.Lock()
	at := s.now().Format("2006-01-02T15:04:05.000000+00:00")
	s.appendLocked(a.r, obj{{"message_id", nil}, {"thread_id", a.r.threadID}, {"type", typ},
		{"is_llm_message", true}, {"content", string(pyDumps(content))}, {"metadata", string(pyDumps(meta))},
		{"created_at", at}, {"updated_at", at}})
	s.mu.Unlock()
	a.frame++
	return nil
}

// both streams a row and stores it (same message id) for the history.
func (a *agentRun) both(typ string, content, meta obj) (string, error) {
	return a.bothAs("", typ, content, meta)
}

// bothAs is both with the row's message id given ("": a new one).
func (a *agentRun) bothAs(id, typ string, content, meta obj) (string, error) {
	if !a.wait(a.pace) {
		return "", errStopped
	}
	s := a.s
	s.mu.Lock()
	if id == "" {
		id = s.newID('m')
	}
	row := s.rowAs(id, a.r.threadID, typ, true, content, meta)
	a.keepLocked(storeRow(row))
	wire := append(obj(nil), row...)
	wire = wire.with("content", string(pyDumps(content))).with("metadata", string(pyDumps(meta)))
	s.appendLocked(a.r, wire)
	s.mu.Unlock()
	a.frame++
	return row.get("message_id").(string), nil
}

// store keeps a row for the history without streaming it.
func (a *agentRun) store(typ string, content, meta obj) {
	s := a.s
	s.mu.Lock()
	a.keepLocked(storeRow(s.row(a.r.threadID, typ, true, content, meta)))
	s.mu.Unlock()
}

// keepLocked puts a row in the history now (Options.RowsAsMade) or when
// the run ends. s.mu is held.
func (a *agentRun) keepLocked(row storedRow) {
	if !a.s.opts.RowsAsMade {
		a.r.pending.add(row)
		return
	}
	var l rowList
	l.add(row)
	a.s.threads[a.r.threadID].keep(&l)
}

// newMessageID makes a message id ahead of its row.
func (a *agentRun) newMessageID() string {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	return a.s.newID('m')
}

func (a *agentRun) stamp() string {
	return a.s.opts.Clock().UTC().Format("2006-01-02T15:04:05.000000+00:00")
}

func (a *agentRun) begin() error {
	if err := a.emit(obj{{"type", "status"}, {"status", "initializing"}, {"message", "Starting execution..."}}); err != nil {
		return err
	}
	_, err := a.both("status", obj{{"status_type", "thread_run_start"}}, a.meta())
	return err
}

func (a *agentRun) llmStart() error {
	a.n++
	a.s.mu.Lock()
	a.resp = a.s.newID('l')
	a.s.mu.Unlock()
	_, err := a.both("llm_response_start", obj{{"llm_response_id", a.resp}, {"auto_continue_count", a.n - 1},
		{"model", Model}, {"timestamp", a.stamp()}}, a.meta(kv{"llm_response_id", a.resp}))
	return err
}

// words splits text into pieces of a few words (whitespace kept), the way
// a provider streams tokens.
func words(text string, per int) []string {
	var out []string
	start, n := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' || text[i] == '\n' {
			for i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n') {
				i++
			}
			n++
			if n == per {
				out = append(out, text[start:i+1])
				start, n = i+1, 0
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func (a *agentRun) think(text string) error {
	for _, w := range words(text, 3) {
		a.turn.reasoning.WriteString(w)
		if err := a.chunk("reasoning", obj{{"reasoning_content", w}}, a.meta(kv{"stream_status", "reasoning_chunk"})); err != nil {
			return err
		}
	}
	return nil
}

func (a *agentRun) say(text string) error {
	for _, w := range words(text, 3) {
		a.turn.text.WriteString(w)
		if err := a.chunk("assistant", obj{{"role", "assistant"}, {"content", w}}, a.meta(kv{"stream_status", "chunk"})); err != nil {
			return err
		}
	}
	return nil
}

// call streams a tool call's arguments in pieces.
func (a *agentRun) call(name string, args obj) (string, error) {
	a.s.mu.Lock()
	a.s.ids++
	id := fmt.Sprintf("toolu_%04d", a.s.ids)
	a.s.mu.Unlock()
	index := len(a.turn.calls)
	a.turn.calls = append(a.turn.calls, toolCall{id: id, name: name, args: args})
	raw := string(pyDumps(args))
	for i := 0; i < len(raw); i += 12 {
		part := raw[i:min(i+12, len(raw))]
		tc := obj{{"tool_call_id", id}, {"function_name", name}, {"arguments_delta", part},
			{"is_delta", true}, {"index", index}, {"source", "native"}}
		if err := a.chunk("assistant", obj{{"role", "assistant"}, {"content", ""}},
			a.meta(kv{"stream_status", "tool_call_chunk"}, kv{"tool_calls", []obj{tc}})); err != nil {
			return "", err
		}
	}
	return id, nil
}

// complete ends the turn: its whole assistant row, then the finish status.
func (a *agentRun) complete(finish string) (string, error) {
	return a.completeAs("", finish)
}

// completeAs is complete with the assistant row's message id given.
func (a *agentRun) completeAs(id, finish string) (string, error) {
	content, meta := a.turnRow()
	id, err := a.bothAs(id, "assistant", content, meta)
	if err != nil {
		return "", err
	}
	a.turn = turnState{}
	_, err = a.both("status", obj{{"status_type", "finish"}, {"finish_reason", finish}}, a.meta())
	return id, err
}

func (a *agentRun) turnRow() (obj, obj) {
	content := obj{{"role", "assistant"}, {"content", a.turn.text.String()}}
	meta := a.meta(kv{"stream_status", "complete"})
	if len(a.turn.calls) > 0 {
		var openai, unified []obj
		for _, c := range a.turn.calls {
			openai = append(openai, obj{{"id", c.id}, {"type", "function"},
				{"function", obj{{"name", c.name}, {"arguments", string(pyDumps(c.args))}}}})
			unified = append(unified, obj{{"source", "native"}, {"arguments", c.args},
				{"tool_call_id", c.id}, {"function_name", c.name}})
		}
		content = content.with("tool_calls", openai)
		meta = meta.with("tool_calls", unified)
	}
	if a.turn.reasoning.Len() > 0 {
		meta = meta.with("reasoning_content", a.turn.reasoning.String())
	}
	return content, meta
}

// saveTurn stores what a stopped or failed turn had streamed.
func (a *agentRun) saveTurn(finish string) {
	if a.turn.text.Len() == 0 && a.turn.reasoning.Len() == 0 && len(a.turn.calls) == 0 {
		return
	}
	content, meta := a.turnRow()
	a.store("assistant", content, meta)
	a.store("status", obj{{"status_type", "finish"}, {"finish_reason", finish}}, a.meta())
	a.turn = turnState{}
}

// tool runs a called tool: started, streamed output, its row, finished.
func (a *agentRun) tool(id, name string, output []string, success bool, result any, assistantID string) error {
	if err := a.chunkStatus(obj{{"status_type", "tool_started"}, {"tool_call_id", id}, {"function_name", name}, {"tool_index", 0}}); err != nil {
		return err
	}
	for _, o := range output {
		if err := a.emit(obj{{"type", "tool_output_stream"}, {"tool_call_id", id}, {"tool_name", name},
			{"output", o}, {"is_final", false}}); err != nil {
			return err
		}
	}
	if err := a.emit(obj{{"type", "tool_output_stream"}, {"tool_call_id", id}, {"tool_name", name},
		{"output", ""}, {"is_final", true}}); err != nil {
		return err
	}
	res := obj{{"success", success}, {"output", result}, {"error", nil}}
	if !success {
		res = res.with("error", "the command failed")
	}
	text, _ := json.Marshal(result)
	if s, ok := result.(string); ok {
		text = []byte(s)
	}
	if _, err := a.both("tool", obj{{"role", "tool"}, {"name", name}, {"tool_call_id", id}, {"content", string(text)}},
		obj{{"result", res}, {"tool_call_id", id}, {"function_name", name}, {"return_format", "native"},
			{"assistant_message_id", assistantID}}); err != nil {
		return err
	}
	st := "tool_completed"
	if !success {
		st = "tool_failed"
	}
	return a.chunkStatus(obj{{"status_type", st}, {"tool_call_id", id}, {"function_name", name}, {"tool_index", 0}})
}

// callAndRun ends a turn that calls a tool and runs the tool: the
// assistant row then the tool (the older pipeline), or, with
// Options.ToolsDuringReply, the tool first and the assistant row, whose id
// the tool row names, after it (the current one).
func (a *agentRun) callAndRun(id, name string, output []string, success bool, result any) error {
	if a.s.opts.ToolsDuringReply {
		aid := a.newMessageID()
		if err := a.tool(id, name, output, success, result, aid); err != nil {
			return err
		}
		_, err := a.completeAs(aid, "tool_calls")
		return err
	}
	aid, err := a.complete("tool_calls")
	if err != nil {
		return err
	}
	return a.tool(id, name, output, success, result, aid)
}

// chunkStatus streams a status row that is not stored.
func (a *agentRun) chunkStatus(content obj) error {
	return a.chunk("status", content, a.meta())
}

func (a *agentRun) llmEnd(prompt, completion, cached int) error {
	if err := a.emit(obj{{"type", "llm_response_end"}, {"timestamp", a.stamp()}, {"thread_run_id", a.r.id}}); err != nil {
		return err
	}
	usage := obj{{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion},
		{"cache_read_input_tokens", cached}, {"prompt_tokens_details", obj{{"cached_tokens", cached}}}}
	a.store("llm_response_end", obj{{"llm_response_id", a.resp}, {"usage", usage}, {"model", Model}},
		a.meta(kv{"llm_response_id", a.resp}))
	return nil
}

// end writes the run's last frame (after Release when held).
func (a *agentRun) end() error {
	if !a.hold() {
		return errStopped
	}
	a.store("status", obj{{"status_type", "thread_run_end"}}, a.meta())
	return a.emit(obj{{"type", "status"}, {"status", "completed"}, {"message", "Worker run completed successfully"}})
}

func demo(prompt string) script {
	return func(a *agentRun) error {
		steps := []func() error{
			a.begin, a.llmStart,
			func() error {
				return a.think("The user asks: " + oneLine(prompt) + ". I should look at the workspace before I answer.")
			},
			func() error { return a.say("Let me look at the workspace first.") },
		}
		for _, st := range steps {
			if err := st(); err != nil {
				return err
			}
		}
		id, err := a.call("execute_command", obj{{"command", "ls -la /workspace"}, {"folder", "/workspace"}})
		if err != nil {
			return err
		}
		out := []string{"total 16\n", "-rw-r--r-- 1 root root  812 notes.md\n", "-rw-r--r-- 1 root root 2048 main.go\n",
			"drwxr-xr-x 2 root root 4096 \x1b[1;34mdocs\x1b[0m\n"}
		if err := a.callAndRun(id, "execute_command", out, true,
			obj{{"output", strings.Join(out, "")}, {"exit_code", 0}, {"cwd", "/workspace"}}); err != nil {
			return err
		}
		if err := a.llmEnd(1200, 60, 1000); err != nil {
			return err
		}
		if a.s.opts.Pause > 0 && !a.wait(a.s.opts.Pause) {
			return errStopped
		}
		if err := a.llmStart(); err != nil {
			return err
		}
		if err := a.say(answer); err != nil {
			return err
		}
		if _, err := a.complete("stop"); err != nil {
			return err
		}
		if err := a.llmEnd(1500, 140, 1200); err != nil {
			return err
		}
		return a.end()
	}
}

const answer = "## What is here\n\nThe workspace holds **three** entries:\n\n" +
	"- `notes.md` — your notes (812 bytes)\n- `main.go` — a small Go program\n- `docs/` — a folder of documents\n\n" +
	"To build the program:\n\n```sh\ngo build ./...\n```\n\nTell me if you want me to *read* one of them — café ☕ ready."

func failing(prompt string) script {
	return func(a *agentRun) error {
		if err := a.begin(); err != nil {
			return err
		}
		if err := a.llmStart(); err != nil {
			return err
		}
		if err := a.think("Trying to answer: " + oneLine(prompt)); err != nil {
			return err
		}
		if err := a.say("I will try that now, one moment"); err != nil {
			return err
		}
		if !a.hold() {
			return errStopped
		}
		const msg = "LLM provider error: rate limit exceeded (429)"
		a.saveTurn("stop")
		a.store("status", obj{{"status_type", "error"}, {"message", msg}}, a.meta())
		if err := a.emit(obj{{"type", "status"}, {"status", "error"}, {"message", msg}, {"error_type", "LLMError"}}); err != nil {
			return err
		}
		return fmt.Errorf("%s", msg)
	}
}

// slow streams a long answer a few words at a time: a run to stop.
func slow(a *agentRun) error {
	if err := a.begin(); err != nil {
		return err
	}
	if err := a.llmStart(); err != nil {
		return err
	}
	for i := 1; i <= 400; i++ {
		if err := a.say(fmt.Sprintf("Step %d of the long answer. ", i)); err != nil {
			return err
		}
		if i == 5 && !a.hold() {
			return errStopped // held here, a test stops it at a known point
		}
	}
	if _, err := a.complete("stop"); err != nil {
		return err
	}
	if err := a.llmEnd(900, 2400, 0); err != nil {
		return err
	}
	return a.end()
}

// bench streams about n frames as fast as it can: reasoning, markdown in
// chunks of a few words, tool calls with streamed arguments and output.
func bench(n int) script {
	return func(a *agentRun) error {
		a.pace = -1
		if err := a.begin(); err != nil {
			return err
		}
		for cycle := 1; a.frame < n-40; cycle++ {
			if err := a.llmStart(); err != nil {
				return err
			}
			if err := a.think(fmt.Sprintf("Cycle %d: I read the next file and summarize what it does before moving on. ", cycle)); err != nil {
				return err
			}
			para := fmt.Sprintf("### Part %d\n\nThis part covers *section %d* of the report, with a list:\n\n- first point about item %d\n- second point with `code %d`\n\n", cycle, cycle, cycle, cycle)
			for i := 0; i < 6 && a.frame < n-40; i++ {
				if err := a.say(para); err != nil {
					return err
				}
			}
			id, err := a.call("execute_command", obj{{"command", fmt.Sprintf("wc -l part%d.txt", cycle)}})
			if err != nil {
				return err
			}
			var out []string
			for i := 0; i < 20; i++ {
				out = append(out, fmt.Sprintf("line %d of part %d\n", i, cycle))
			}
			if err := a.callAndRun(id, "execute_command", out, true, strings.Join(out, "")); err != nil {
				return err
			}
			if err := a.llmEnd(1000+cycle, 200, 900); err != nil {
				return err
			}
		}
		if err := a.llmStart(); err != nil {
			return err
		}
		if err := a.say("## Done\n\nAll parts are summarized above. **The end.**"); err != nil {
			return err
		}
		if _, err := a.complete("stop"); err != nil {
			return err
		}
		if err := a.llmEnd(3000, 20, 2900); err != nil {
			return err
		}
		return a.end()
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = title(s)
	}
	return s
}
