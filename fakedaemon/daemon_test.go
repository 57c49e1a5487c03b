package fakedaemon

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

var framePattern = regexp.MustCompile(`\Aevent: [a-z._]+\ndata: [^\n]+\n\n\z`)

func TestFramingHeadersAndReplay(t *testing.T) {
	e := newEnv(t, Options{Seed: 1})
	id, _ := e.createTask("hello there", "")

	resp := e.open("/task/" + id + "/events")
	h := resp.resp.Header
	for k, v := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive",
		"X-Accel-Buffering": "no", "Access-Control-Allow-Origin": "*",
	} {
		if got := h.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if h.Get("Content-Length") != "" || len(resp.resp.TransferEncoding) == 0 || resp.resp.TransferEncoding[0] != "chunked" {
		t.Errorf("want chunked without Content-Length, got %v %q", resp.resp.TransferEncoding, h.Get("Content-Length"))
	}
	first := resp.until(isMsg("PostConversation"))
	if first[0].raw != "event: maria.queued_messages.synchronized\ndata: []\n\n" {
		t.Errorf("first frame %q", first[0].raw)
	}
	for _, f := range first {
		if !framePattern.MatchString(f.raw) {
			t.Errorf("bad frame bytes %q", f.raw)
		}
	}
	// The stream stays open and silent after the run.
	if f, ok := resp.next(150 * time.Millisecond); ok {
		t.Errorf("unexpected frame after PostConversation: %q", f.raw)
	}

	// A second subscriber gets byte-identical frames from index 0.
	second := e.open("/task/" + id + "/events").take(len(first))
	for i := range first {
		if first[i].raw != second[i].raw {
			t.Fatalf("replay frame %d differs:\n%q\n%q", i, first[i].raw, second[i].raw)
		}
	}
	// And live frames reach both.
	e.post(id, "second message")
	a := resp.until(isMsg("PostConversation"))
	b := e.open("/task/" + id + "/events").take(len(first) + len(a))[len(first):]
	for i := range a {
		if a[i].raw != b[i].raw {
			t.Fatalf("live frame %d differs", i)
		}
	}
	eq(t, "received", e.d.Received(id), []string{"hello there", "second message"})
}

func TestStreamA(t *testing.T) {
	e := newEnv(t, Options{Seed: 2})
	dir := t.TempDir()
	msg := "What does this project do? Look at the README."
	st, hdr, body := e.do("POST", "/task", `{"name":"`+msg+`","model":"anthropic/claude-sonnet-4.5","message":{"role":"user","content":"`+msg+`"},"cwd":"`+dir+`","web_search":false}`)
	if st != 201 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("create: %d %s", st, body)
	}
	if !strings.HasPrefix(body, "{\n  \"task\": {\n    \"id\": \"") || !strings.Contains(body, "\n  \"message\": {\n    \"id\": ") {
		t.Errorf("create body not pretty-printed:\n%s", body)
	}
	var cr struct {
		Task    map[string]any
		Message struct {
			ID     string
			Queued *bool
		}
	}
	if err := json.Unmarshal([]byte(body), &cr); err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`(?m)^    "([a-z_]+)":`).FindAllStringSubmatch(body, -1)
	var order []string
	for _, k := range keys {
		order = append(order, k[1])
	}
	eq(t, "task key order", order, []string{"id", "cwd", "port", "status", "created", "updated", "web_search", "queued_messages", "model", "name", "id", "queued"})
	if cr.Task["status"] != "idle" || cr.Task["name"] != msg || cr.Message.Queued == nil || *cr.Message.Queued {
		t.Errorf("create reply %s", body)
	}
	id := cr.Task["id"].(string)

	fs := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	eq(t, "stream A shape", shape(fs), []string{
		"snap:[]", "ModelLoaded", "SystemPromptSet", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded",
		"MessageQueued", "snap:[]", "PreConversation", "MessageUnqueued", "snap:[]", "UserMessage",
		"AssistantMessage", "PreToolCall", "PostToolCall", "AssistantMessage", "PreToolCall", "PostToolCall",
		"AssistantMessage", "PostConversation",
	})
	var tools []string
	for _, f := range fs[3:9] {
		tools = append(tools, f.desc()["tool"].(map[string]any)["name"].(string))
	}
	eq(t, "tools", tools, []string{"execute_command", "list_files", "read_file", "todo", "search_files", "write_to_file"})
	if !regexp.MustCompile(`^\{"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}","created":\d{13},"desc":\{"msg":"ModelLoaded","name":"anthropic/claude-sonnet-4.5"\}\}$`).MatchString(fs[1].data) {
		t.Errorf("envelope %s", fs[1].data)
	}
	if p := fs[2].desc()["prompt"].(string); len(p) < 1500 || !strings.Contains(p, "\n") {
		t.Errorf("system prompt too short (%d)", len(p))
	}
	mid := fs[9].desc()["message"].(map[string]any)["id"]
	if mid != cr.Message.ID || fs[12].desc()["message"].(map[string]any)["id"] != mid {
		t.Errorf("message ids %v %v %v", mid, cr.Message.ID, fs[12].data)
	}
	eq(t, "user message", fs[14].desc()["content"], msg)
	if !strings.Contains(fs[15].data, `"tool_calls":[{"id":"toolu_01`) || !strings.Contains(fs[15].data, `"function":{"name":"list_files","arguments":"{\"path\": \".\"}"},"type":"function"}],"content":"I'll start by looking at the project structure."`) {
		t.Errorf("assistant 1: %s", fs[15].data)
	}
	u1 := fs[15].desc()["usage"].(map[string]any)
	if _, ok := u1["prompt_tokens_details"]; ok {
		t.Errorf("first usage has cached tokens: %v", u1)
	}
	u2 := fs[18].desc()["usage"].(map[string]any)
	if u2["prompt_tokens_details"] == nil || u2["prompt_tokens"].(float64) <= u1["prompt_tokens"].(float64) ||
		u2["total_tokens"].(float64) != u2["prompt_tokens"].(float64)+u2["completion_tokens"].(float64) {
		t.Errorf("usage 2: %v", u2)
	}
	eq(t, "pre args", fs[16].desc()["args"], map[string]any{"path": "."})
	post := fs[17].desc()
	wantList := "Directory: .\nTotal: 5 items (4 files, 1 directories)\n\n📄 Makefile\n📄 README.md\n📄 go.mod\n📁 internal\n📄 main.go"
	if post["result"] != wantList || post["text"] != wantList {
		t.Errorf("list_files post: %v", post)
	}
	read := fs[20].desc()["text"].(string)
	if !strings.HasPrefix(read, "File: README.md (lines 1-14 (14 lines))\n L01 | # wordfreq\n L02 | \n") {
		t.Errorf("read_file text: %q", read)
	}
	final := fs[21].desc()["content"].(string)
	for _, want := range []string{"## ", "\n- ", "```", "| --- |"} {
		if !strings.Contains(final, want) {
			t.Errorf("final answer lacks %q:\n%s", want, final)
		}
	}
	if len(fs[21].desc()["tool_calls"].([]any)) != 0 {
		t.Error("final reply has tool calls")
	}
	// GET task is fresh.
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.HasPrefix(tb, `{"task":{"id":"`+id+`","cwd":"`+dir+`","port":`) || !strings.Contains(tb, `"status":"idle"`) {
		t.Errorf("get task: %s", tb)
	}
}

func TestStreamBQueuedInSameRun(t *testing.T) {
	e := newEnv(t, Options{Seed: 3, Speed: 20})
	id, _ := e.createTask("Run the slow benchmarks please.", "")
	s := e.open("/task/" + id + "/events")
	s.until(func(f sseFrame) bool { return f.msg() == "PreToolCall" && strings.Contains(f.data, "-bench") })

	qid, queued := e.post(id, "Also add a CHANGELOG entry for today's fix.")
	if !queued {
		t.Fatal("second message not queued")
	}
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.Contains(tb, `"status":"generating"`) || !strings.Contains(tb, `"queued_messages":[{"id":"`+qid+`","message":{"role":"user","content":"Also add a CHANGELOG entry for today's fix."}}]`) {
		t.Errorf("get task while queued: %s", tb)
	}
	_, _, qb := e.do("GET", "/task/"+id+"/queued-messages", "")
	if want := `[{"id":"` + qid + `","message":{"role":"user","content":"Also add a CHANGELOG entry for today's fix."}}]`; qb != want {
		t.Errorf("queued-messages: %s", qb)
	}
	if _, _, sb := e.do("GET", "/task/"+id+"/status", ""); sb != `{"status":"generating","web_search":false}` {
		t.Errorf("status: %s", sb)
	}

	fs := s.until(isMsg("PostConversation"))
	eq(t, "stream B shape", shape(fs), []string{
		"MessageQueued",
		`snap:[{"id":"` + qid + `","message":{"role":"user","content":"Also add a CHANGELOG entry for today's fix."},"web_search":false}]`,
		"PostToolCall", "AssistantMessage", "MessageUnqueued", "snap:[]", "UserMessage",
		"AssistantMessage", "PreToolCall", "PostToolCall", "AssistantMessage", "PostConversation",
	})
	if !strings.Contains(fs[2].desc()["text"].(string), "Command go test -bench . exited with status 0.\n=== STDOUT (7 lines) ===\n") {
		t.Errorf("bench text %q", fs[2].desc()["text"])
	}
	eq(t, "unqueued id", fs[4].desc()["message"], map[string]any{"id": qid})
	if !strings.HasSuffix(fs[9].desc()["text"].(string), "/CHANGELOG.md") {
		t.Errorf("write_to_file: %v", fs[9].desc())
	}
	// Exactly one Pre/PostConversation pair in the whole log.
	all := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	n := 0
	for _, f := range all {
		if f.msg() == "PreConversation" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PreConversation frames", n)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, Options{Seed: 4, Speed: 20})
	id, _ := e.createTask("bench it", "")
	s := e.open("/task/" + id + "/events")
	s.until(func(f sseFrame) bool { return f.msg() == "PreToolCall" })
	qid, queued := e.post(id, "Actually, only run the parser benchmarks.")
	if !queued {
		t.Fatal("not queued")
	}
	st, _, body := e.do("POST", "/task/"+id+"/cancel", "")
	want := `{"pending_messages":[{"id":"` + qid + `","message":{"role":"user","content":"Actually, only run the parser benchmarks."},"web_search":false}]}`
	if st != 200 || body != want {
		t.Errorf("cancel: %d %s", st, body)
	}
	fs := s.until(func(f sseFrame) bool { return f.event == eventSnapshot && f.data == "[]" })
	eq(t, "cancel shape", shape(fs), []string{"MessageQueued", "snap:" + want[len(`{"pending_messages":`):len(want)-1], "Cancelled", "MessageUnqueued", "snap:[]"})
	// The agent really stopped: no PostToolCall or PostConversation follows.
	if f, ok := s.next(600 * time.Millisecond); ok {
		t.Errorf("frame after cancel: %s", f.raw)
	}
	st, _, body = e.do("POST", "/task/"+id+"/cancel", "{}")
	if st != 404 || body != `{"error":{"code":-1,"message":"No running task to cancel."}}` {
		t.Errorf("idle cancel: %d %s", st, body)
	}
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.Contains(tb, `"status":"idle","created"`) || !strings.Contains(tb, `"queued_messages":[]`) {
		t.Errorf("after cancel: %s", tb)
	}
	// A new message starts a new run.
	if _, q := e.post(id, "hello"); q {
		t.Error("post after cancel queued")
	}
	fs = s.until(isMsg("PostConversation"))
	eq(t, "after cancel", shape(fs)[:3], []string{"MessageQueued", "snap:[]", "PreConversation"})
}

func TestProviderFailure(t *testing.T) {
	e := newEnv(t, Options{Seed: 5})
	id, _ := e.createTask("trigger a provider error", "")
	fs := e.open("/task/" + id + "/events").until(isMsg("Failed"))
	if !strings.HasSuffix(fs[len(fs)-1].data, `"desc":{"msg":"Failed","error":["HttpError",{"code":401,"body":"{\"error\":{\"message\":\"No auth credentials found\",\"code\":401}}"}]}}`) {
		t.Errorf("failed: %s", fs[len(fs)-1].data)
	}
	eq(t, "before failed", shape(fs[len(fs)-2:len(fs)-1]), []string{"UserMessage"})
	time.Sleep(50 * time.Millisecond)
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.Contains(tb, `"status":"idle"`) {
		t.Errorf("status after failure: %s", tb)
	}
}

func TestErrorsAndRouting(t *testing.T) {
	e := newEnv(t, Options{Seed: 6})
	dir := t.TempDir()
	id, _ := e.createTask("hi", dir)
	missing := "3f2b0c1d-0000-4000-8000-000000000000"
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/task/nope", "", 400, `{"error":{"code":-1,"message":"Invalid UUID: nope"}}`},
		{"GET", "/task/" + missing, "", 404, `{"error":{"code":-1,"message":"Task not found: ` + missing + `"}}`},
		{"GET", "/task/nope/events", "", 400, `{"error":{"code":-1,"message":"Invalid UUID: nope"}}`},
		{"GET", "/task/" + missing + "/events", "", 404, `{"error":{"code":-1,"message":"Task not found: ` + missing + `"}}`},
		{"POST", "/task/" + missing + "/message", `{}`, 404, `{"error":{"code":-1,"message":"Task not found: ` + missing + `"}}`},
		{"POST", "/task", `{"name":`, 400, `{"error":{"code":400,"message":"Invalid JSON in request body","data":{}}}`},
		{"POST", "/task", `{"name":5}`, 400, `{"error":{"code":400,"message":"Invalid request body","data":{}}}`},
		{"POST", "/task/" + id + "/message", `{"message":`, 400, `{"error":{"code":400,"message":"Invalid JSON in request body","data":{}}}`},
		{"POST", "/task/" + id + "/message", `{"message":{"role":"user"}}`, 400, `{"error":{"code":400,"message":"Invalid request body","data":{}}}`},
		{"POST", "/task/" + id + "/message", `{"web_search":true}`, 400, `{"error":{"code":400,"message":"Invalid request body","data":{}}}`},
		{"POST", "/task", `{"cwd":"/definitely/not/here"}`, 404, `{"error":{"code":-1,"message":"Specified 'cwd' path does not exist: /definitely/not/here","metadata":{"cwd":"/definitely/not/here"}}}`},
		{"POST", "/task", `{"cwd":"` + dir + `"}`, 409, `{"error":{"code":-1,"message":"A running task already exists for the specified 'cwd': ` + dir + `","metadata":{"cwd":"` + dir + `"}}}`},
		{"POST", "/task", `{"model":"x"}`, 404, `{"error":{"code":-1,"message":"Model not found: Some(\"x\")"}}`},
		{"GET", "/tasks?x=1", "", 404, `{"error":{"code":-1,"message":"Unknown endpoint: v1/tasks?x=1","metadata":{"method":"GET","path":"v1/tasks?x=1"}}}`},
		{"GET", "/tasks/", "", 404, `{"error":{"code":-1,"message":"Unknown endpoint: v1/tasks/","metadata":{"method":"GET","path":"v1/tasks/"}}}`},
		{"PUT", "/x", "", 404, `{"error":{"code":-1,"message":"Unknown endpoint: /v1/x","metadata":{"method":"PUT","path":"/v1/x"}}}`},
		{"GET", "/models", "", 200, `{"models":[{"name":"anthropic/claude-sonnet-4.5"},{"name":"openai/gpt-4.1"},{"name":"qwen/qwen3-coder"},{"name":"local-sonnet"}]}`},
		{"GET", "/task/" + id + "/tools", "", 200, `{"execute_command":{"enabled":true},"list_files":{"enabled":true},"read_file":{"enabled":true},"todo":{"enabled":true},"search_files":{"enabled":true},"write_to_file":{"enabled":true}}`},
		{"GET", "/task/" + id + "/status?x=1", "", 200, `{"status":"idle","web_search":false}`},
		{"POST", "/task/" + id + "/status", "", 405, ``},
		{"GET", "/task/" + id + "/nothing-here", "", 404, ``},
		{"POST", "/shutdown", "", 200, `{}`},
	}
	// Let the first task's run end so its status is stable.
	e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	for _, c := range cases {
		st, h, body := e.do(c.method, c.path, c.body)
		if st != c.status || body != c.want {
			t.Errorf("%s %s %s:\n got %d %s\nwant %d %s", c.method, c.path, c.body, st, body, c.status, c.want)
		}
		if h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: no CORS header", c.method, c.path)
		}
	}
	select {
	case <-e.d.ShutdownRequested():
	default:
		t.Error("shutdown not signalled")
	}
	if st, _ := e.rawDo("GET", "/v1/task/"+id+"?x"); st != 400 {
		t.Errorf("task id with query: %d", st)
	}
	for _, p := range []string{"/v1/anything", "/", "/v1/task/" + id} {
		st, h, body := e.do("OPTIONS", strings.TrimPrefix(p, "/v1"), "")
		if st != 204 || body != "" || h.Get("Access-Control-Allow-Methods") != "*" || h.Get("Access-Control-Allow-Headers") != "*" {
			t.Errorf("OPTIONS %s: %d %q %v", p, st, body, h)
		}
	}
	st, h, body := e.do("GET", "/task/"+id+"/README.md", "")
	_ = h
	if st != 404 || body != "" {
		t.Errorf("static miss: %d %q", st, body)
	}
	if err := os.WriteFile(dir+"/notes.txt", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _, body := e.do("GET", "/task/"+id+"/notes.txt", ""); st != 200 || body != "hello" {
		t.Errorf("static file: %d %q", st, body)
	}
	// Go API errors use the same path.
	if _, err := e.d.CreateTask(CreateRequest{Model: "nope"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("CreateTask unknown model: %v", err)
	}
}

func TestDaemonEvents(t *testing.T) {
	e := newEnv(t, Options{Seed: 7})
	s := e.open("/events")
	f := s.take(1)[0]
	if f.raw != "event: daemon.tasks.synchronized\ndata: {\"tasks\":[]}\n\n" {
		t.Errorf("sync: %q", f.raw)
	}
	id, _ := e.createTask("hi", "")
	e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	ch := s.take(2)
	for _, c := range ch {
		if c.event != "daemon.task.changed" || !strings.HasPrefix(c.data, `{"task":{"id":"`+id+`"`) {
			t.Errorf("changed: %s", c.raw)
		}
	}
	if !strings.Contains(ch[1].data, `"status":"idle"`) {
		t.Errorf("last change not idle: %s", ch[1].data)
	}
	// A late subscriber gets the sync, then every change replayed with the
	// task's current state.
	late := e.open("/events").take(3)
	if late[0].event != "daemon.tasks.synchronized" || !strings.Contains(late[0].data, `"status":"idle"`) {
		t.Errorf("late sync: %s", late[0].raw)
	}
	for _, c := range late[1:] {
		if c.event != "daemon.task.changed" || !strings.Contains(c.data, `"status":"idle"`) {
			t.Errorf("late change: %s", c.raw)
		}
	}
	eq(t, "received", e.d.Received(id), []string{"hi"})
}

func TestStoppedTaskResume(t *testing.T) {
	e := newEnv(t, Options{Seed: 8})
	id, err := e.d.AddStoppedTask("Old chat")
	if err != nil {
		t.Fatal(err)
	}
	_, _, tl := e.do("GET", "/tasks", "")
	if !regexp.MustCompile(`^\{"tasks":\[\{"name":"Old chat","id":"` + id + `","cwd":"[^"]+","status":"stopped","created":\d+,"updated":\d+,"web_search":false\}\]\}$`).MatchString(tl) {
		t.Errorf("stopped task json: %s", tl)
	}
	s := e.open("/task/" + id + "/events")
	old := s.until(func(f sseFrame) bool {
		return f.msg() == "AssistantMessage" && len(f.desc()["tool_calls"].([]any)) == 0
	})
	got := map[string]int{}
	for _, f := range old {
		if f.event != eventMaria {
			t.Errorf("non-maria frame in stopped replay: %s", f.raw)
		}
		got[f.msg()]++
	}
	if got["TokenCounted"] == 0 || got["ContextPruned"] == 0 || got["ModelLoaded"] != 0 || got["PostConversation"] != 0 || old[0].msg() != "SystemPromptSet" {
		t.Errorf("stopped replay variants %v", got)
	}
	if f, ok := s.next(200 * time.Millisecond); ok {
		t.Fatalf("stopped stream not silent: %s", f.raw)
	}

	// Any forwarded request resumes it; a message then runs.
	e.post(id, "hello again")
	resumed := s.until(isMsg("PostConversation"))
	if resumed[0].raw != "event: maria.queued_messages.synchronized\ndata: []\n\n" || resumed[1].msg() != "ModelLoaded" {
		t.Errorf("resume starts with %v", shape(resumed[:2]))
	}
	i := 2
	for _, f := range old {
		if f.msg() == "TokenCounted" || f.msg() == "ContextPruned" {
			continue
		}
		if resumed[i].raw != f.raw {
			t.Fatalf("resumed history frame %d differs:\n%s\n%s", i, resumed[i].raw, f.raw)
		}
		i++
	}
	eq(t, "after history", shape(resumed[i:i+11]), []string{"SystemPromptSet", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded", "ToolAdded",
		"MessageQueued", "snap:[]", "PreConversation", "MessageUnqueued"})
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.Contains(tb, `"status":"idle"`) || !strings.Contains(tb, `"model":"anthropic/claude-sonnet-4.5","name":"Old chat"`) || !strings.Contains(tb, `"port":`) {
		t.Errorf("resumed task: %s", tb)
	}
}

func TestStoppedResumedByGet(t *testing.T) {
	e := newEnv(t, Options{Seed: 9})
	id, _ := e.d.AddStoppedTask("")
	st, _, body := e.do("GET", "/task/"+id+"/status", "")
	if st != 200 || body != `{"status":"idle","web_search":false}` {
		t.Errorf("status: %d %s", st, body)
	}
	_, _, tb := e.do("GET", "/task/"+id, "")
	if !strings.Contains(tb, `"name":"New Conversation"`) || !strings.Contains(tb, `"status":"idle"`) {
		t.Errorf("task: %s", tb)
	}
}

func TestDialectLegacy(t *testing.T) {
	e := newEnv(t, Options{Seed: 10, Dialect: DialectLegacy})
	id, _ := e.createTask("Read the README, run the tests, build it, plan, write the changelog, show the diff and grep for funcs", "")
	fs := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	results := map[string][]any{}
	var failure map[string]any
	for _, f := range fs {
		if f.msg() != "PostToolCall" {
			continue
		}
		d := f.desc()
		if d["error"] != nil {
			failure = d
			continue
		}
		if _, ok := d["text"].(string); !ok {
			t.Errorf("no text: %s", f.data)
		}
		results[d["name"].(string)] = append(results[d["name"].(string)], d["result"])
	}
	ec := results["execute_command"]
	if len(ec) != 3 {
		t.Fatalf("execute_command results: %v", ec)
	}
	c0 := ec[0].([]any)
	eq(t, "completed tag", c0[0], "Completed")
	eq(t, "completed keys", keysOf(c0[1]), []string{"command", "max_output_lines", "status", "stderr", "stdout"})
	if ec[1].([]any)[1].(map[string]any)["status"].(float64) != 1 {
		t.Errorf("build status: %v", ec[1])
	}
	eq(t, "list_files", keysOf(results["list_files"][0]), []string{"directory_count", "entries", "file_count", "path", "total_count"})
	rf := results["read_file"][0].(map[string]any)
	if rf["path"] != "README.md" || rf["content"] != readmeText || rf["start_line"].(float64) != 1 {
		t.Errorf("read_file: %v", rf)
	}
	eq(t, "search tag", results["search_files"][0].([]any)[0], "SearchResultData")
	todo := results["todo"]
	if len(todo) != 2 {
		t.Fatalf("todo: %v", todo)
	}
	w := todo[0].([]any)
	eq(t, "todo tag", w[0], "Write")
	eq(t, "todo keys", keysOf(w[1]), []string{"is_new_creation", "message", "todos", "updated_todos"})
	item := w[1].(map[string]any)["todos"].([]any)[0]
	eq(t, "todo item keys", keysOf(item), []string{"content", "created_at", "id", "priority", "status", "updated_at"})
	if w2 := todo[1].([]any)[1].(map[string]any); w2["is_new_creation"] != false || w2["todos"].([]any)[0].(map[string]any)["status"] != "InProgress" {
		t.Errorf("mark_progress: %v", w2)
	}
	eq(t, "write_to_file", keysOf(results["write_to_file"][0]), []string{"path"})
	eq(t, "failure", failure["error"], []any{"ToolFailure", "Error reading file: File not found: src/parser.go"})
	eq(t, "failure text", failure["text"], "Error reading file: File not found: src/parser.go")
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func TestDialectHeadTexts(t *testing.T) {
	e := newEnv(t, Options{Seed: 11})
	id, _ := e.createTask("run the tests, then make a plan", "")
	fs := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	var texts []string
	for _, f := range fs {
		if f.msg() == "PostToolCall" {
			d := f.desc()
			if d["result"] != d["text"] {
				t.Errorf("head result != text: %s", f.data)
			}
			texts = append(texts, d["text"].(string))
		}
		if f.msg() == "PreToolCall" && strings.Contains(f.data, "go test") &&
			!strings.Contains(f.data, `"arguments":"{\"command\": \"go test ./...\", \"timeout\": 600000}"`) {
			t.Errorf("arguments format: %s", f.data)
		}
	}
	if len(texts) != 3 {
		t.Fatalf("texts: %q", texts)
	}
	if texts[0] != "Command go test ./... exited with status 0.\n=== STDOUT (3 lines) ===\n?   \tgithub.com/example/wordfreq\t[no test files]\nok  \tgithub.com/example/wordfreq/internal/count\t0.008s\n" {
		t.Errorf("command text %q", texts[0])
	}
	if !strings.HasPrefix(texts[1], "✅ Operation completed: Created 3 new todo items\n\n📝 Newly created todos:\n  🟡 ⏳ [") ||
		!strings.HasSuffix(texts[1], "📊 Current summary: Total 3 items | Pending 3 | In Progress 0 | Completed 0") {
		t.Errorf("todo create text %q", texts[1])
	}
	if !strings.Contains(texts[2], "Marked task as in progress: Fix the typo") || !strings.Contains(texts[2], "✨ Updated items:\n  🟡 🔄 [") {
		t.Errorf("todo progress text %q", texts[2])
	}
}

func TestDialectDocs(t *testing.T) {
	e := newEnv(t, Options{Seed: 12, Dialect: DialectDocs})
	id, _ := e.createTask("make a plan and run the tests", "")
	fs := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	e.post(id, "second")
	s := e.open("/task/" + id + "/events")
	s.take(len(fs))
	fs = append(fs, s.until(isMsg("PostConversation"))...)
	e.post(id, "third")
	fs = append(fs, s.until(isMsg("PostConversation"))...)

	last := 0.0
	var users []any
	var usages []string
	todoUpdated := 0
	for i, f := range fs {
		if f.event == eventSnapshot {
			continue
		}
		var top map[string]any
		if err := json.Unmarshal([]byte(f.data), &top); err != nil {
			t.Fatal(err)
		}
		if _, ok := top["desc"]; ok {
			t.Fatalf("docs frame has an envelope: %s", f.data)
		}
		n, ok := top["id"].(float64)
		if !ok || n <= last {
			t.Errorf("id not increasing int: %s", f.data)
		}
		last = n
		switch top["msg"] {
		case "UserMessage", "AssistantMessage":
			t.Errorf("head variant in docs: %s", f.data)
		case "MessageAdded":
			m := top["message"].(map[string]any)
			if m["role"] != "user" {
				t.Errorf("role: %s", f.data)
			}
			users = append(users, m["content"])
		case "RequestCompleted":
			m := top["message"].(map[string]any)
			if m["role"] != "assistant" || m["tool_calls"] == nil {
				t.Errorf("RequestCompleted: %s", f.data)
			}
			switch top["usage"].(type) {
			case []any:
				usages = append(usages, "array")
			case nil:
				usages = append(usages, "null")
			case map[string]any:
				usages = append(usages, "object")
			}
		case "TodoUpdated":
			todoUpdated++
			if fs[i-1].msg() != "PostToolCall" || !strings.Contains(fs[i-1].data, `"name":"todo"`) {
				t.Errorf("TodoUpdated not after todo PostToolCall")
			}
			if top["created_at"] == nil || top["updated_at"] == nil || len(top["todos"].([]any)) != 3 {
				t.Errorf("TodoUpdated: %s", f.data)
			}
		case "PostToolCall":
			if _, ok := top["result"].(string); !ok {
				t.Errorf("docs PostToolCall result not a string: %s", f.data)
			}
		}
	}
	eq(t, "user content shapes", users, []any{
		"make a plan and run the tests",
		[]any{map[string]any{"type": "text", "text": "second"}},
		[]any{map[string]any{"text": "third"}},
	})
	if len(usages) < 3 || usages[0] != "array" || usages[1] != "null" || usages[2] != "object" {
		t.Errorf("usage shapes %v", usages)
	}
	if todoUpdated != 2 {
		t.Errorf("%d TodoUpdated", todoUpdated)
	}
}

func TestLoadRecording(t *testing.T) {
	src := newEnv(t, Options{Seed: 13})
	id, _ := src.createTask("run the tests", "")
	rec := src.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	var raw strings.Builder
	for _, f := range rec {
		raw.WriteString(f.raw)
	}

	e := newEnv(t, Options{Seed: 14, Speed: 100})
	ev := e.open("/events")
	ev.take(1)
	rid, err := e.d.LoadRecording(strings.NewReader(strings.ReplaceAll(raw.String(), "\n", "\r\n")), "recorded")
	if err != nil {
		t.Fatal(err)
	}
	got := e.open("/task/" + rid + "/events").take(len(rec))
	for i := range rec {
		if got[i].raw != rec[i].raw {
			t.Fatalf("replayed frame %d:\n%q\nwant %q", i, got[i].raw, rec[i].raw)
		}
	}
	ch := ev.take(2)
	if !strings.Contains(ch[1].data, `"status":"idle"`) || !strings.Contains(ch[1].data, `"name":"recorded"`) {
		t.Errorf("replay status changes: %v", ch)
	}
	if _, err := e.d.LoadRecording(strings.NewReader(""), "empty"); err == nil {
		t.Error("empty recording accepted")
	}
}

func TestDeterminism(t *testing.T) {
	clock := func() time.Time { return time.UnixMilli(1774598400000) }
	run := func(seed int64) (string, []string) {
		e := newEnv(t, Options{Seed: seed, Clock: clock})
		id, _ := e.createTask("search the code and write a changelog", "/tmp")
		var out []string
		for _, f := range e.open("/task/" + id + "/events").until(isMsg("PostConversation")) {
			out = append(out, f.raw)
		}
		return id, out
	}
	id1, a := run(42)
	id2, b := run(42)
	id3, c := run(43)
	if id1 != id2 || id1 == id3 {
		t.Errorf("task ids %s %s %s", id1, id2, id3)
	}
	eq(t, "same seed, same stream", a, b)
	if strings.Join(a, "") == strings.Join(c, "") {
		t.Error("different seeds gave the same stream")
	}
}

func TestSeedDemoAndRun(t *testing.T) {
	e := newEnv(t, Options{Seed: 15})
	id, err := e.d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	fs := e.open("/task/" + id + "/events").until(isMsg("PostConversation"))
	all := ""
	for _, f := range fs {
		all += f.data + "\n"
	}
	for _, want := range []string{`"name":"list_files"`, `"name":"read_file"`, `exited with status 0.`, `exited with status 1.`,
		`"error":["ToolFailure"`, `"name":"todo"`, `diff --git`, "```", "| --- |"} {
		if !strings.Contains(all, want) {
			t.Errorf("demo lacks %s", want)
		}
	}
}

// HoldSlowTools: the slow tool runs until ReleaseSlowTools, whatever the
// speed; then the run ends as it would have.
func TestHoldSlowTools(t *testing.T) {
	e := newEnv(t, Options{Seed: 3, Speed: 1000, HoldSlowTools: true})
	id, _ := e.createTask("Run the slow benchmarks please.", "")
	s := e.open("/task/" + id + "/events")
	s.until(func(f sseFrame) bool { return f.msg() == "PreToolCall" && strings.Contains(f.data, "-bench") })
	if f, ok := s.next(200 * time.Millisecond); ok {
		t.Fatalf("the held slow tool went on: %s", f.msg())
	}
	e.d.ReleaseSlowTools()
	fs := s.until(isMsg("PostConversation"))
	if fs[0].msg() != "PostToolCall" || !strings.Contains(fs[0].data, "-bench") {
		t.Fatalf("after the release: %v", shape(fs))
	}
}
