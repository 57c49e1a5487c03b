package maria

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/tools"
)

func env(desc string) events.Frame {
	return events.Frame{Name: "maria", Data: []byte(`{"id":"e1","created":1774598400000,"desc":` + desc + `}`)}
}

func flat(body string) events.Frame { return events.Frame{Name: "maria", Data: []byte(body)} }

func TestDecodeVariants(t *testing.T) {
	tc := `{"id":"toolu_1","function":{"name":"execute_command","arguments":"{\"command\": \"ls\"}"},"type":"function"}`
	cases := []struct {
		name  string
		frame events.Frame
		check func(t *testing.T, ev events.Event)
	}{
		{"head ModelLoaded", env(`{"msg":"ModelLoaded","name":"anthropic/claude-sonnet-4.5"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindModelLoaded && ev.Model == "anthropic/claude-sonnet-4.5" && ev.Dialect == events.DialectHead && ev.ID == "e1" && ev.Created.UnixMilli() == 1774598400000, ev)
		}},
		{"head SystemPromptSet", env(`{"msg":"SystemPromptSet","prompt":"You are"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindSystemPromptSet && ev.Text == "You are", ev)
		}},
		{"head SystemPromptSet cleared", env(`{"msg":"SystemPromptSet"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindSystemPromptSet && ev.Text == "", ev)
		}},
		{"head ToolAdded", env(`{"msg":"ToolAdded","tool":{"name":"list_files","description":"d","schema":{}}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindToolAdded && ev.ToolName == "list_files", ev)
		}},
		{"head MessageQueued", env(`{"msg":"MessageQueued","message":{"id":"m1"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindMessageQueued && ev.MessageID == "m1", ev)
		}},
		{"head MessageUnqueued", env(`{"msg":"MessageUnqueued","message":{"id":"m1"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindMessageUnqueued && ev.MessageID == "m1", ev)
		}},
		{"head PreConversation", env(`{"msg":"PreConversation"}`), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindPreConversation, ev) }},
		{"head PostConversation", env(`{"msg":"PostConversation"}`), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindPostConversation, ev) }},
		{"head UserMessage", env(`{"msg":"UserMessage","content":"hi"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && ev.Text == "hi", ev)
		}},
		{"head TokenCounted", env(`{"msg":"TokenCounted","token_count":9211}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindTokenCounted && ev.TokenCount == 9211, ev)
		}},
		{"head ContextPruned", env(`{"msg":"ContextPruned","origin_token_count":9211,"pruned_token_count":8000}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindContextPruned && ev.TokenCount == 9211 && ev.PrunedTo == 8000, ev)
		}},
		{"head Pruned", env(`{"msg":"Pruned","id":"p1"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindPruned && ev.PrunedID == "p1" && ev.ID == "e1", ev)
		}},
		{"head AssistantMessage", env(`{"msg":"AssistantMessage","tool_calls":[` + tc + `],"content":"Let me look.","usage":{"completion_tokens":61,"prompt_tokens":9211,"prompt_tokens_details":{"cached_tokens":9100},"total_tokens":9272}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAssistantMessage && ev.Text == "Let me look." && len(ev.ToolCalls) == 1 &&
				ev.ToolCalls[0].Name == "execute_command" && string(ev.ToolCalls[0].Args) == `{"command":"ls"}` &&
				ev.Usage != nil && *ev.Usage == events.Usage{InputTokens: 9211, OutputTokens: 61, CachedTokens: 9100, TotalTokens: 9272}, ev)
		}},
		{"head AssistantMessage without usage", env(`{"msg":"AssistantMessage","tool_calls":[],"content":"done"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAssistantMessage && ev.Usage == nil && len(ev.ToolCalls) == 0, ev)
		}},
		{"head PreToolCall", env(`{"msg":"PreToolCall","tool_call":` + tc + `,"name":"execute_command","args":{"command":"ls"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindPreToolCall && ev.Tool.Call.ID == "toolu_1" && ev.Tool.Name == "execute_command", ev)
		}},
		{"head PreToolCall bad args", env(`{"msg":"PreToolCall","tool_call":{"id":"t2","function":{"name":"read_file","arguments":"{\"path\": "},"type":"function"},"name":"read_file","args":"{\"path\": ","error":["JsonDecodeError","eof"]}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindPreToolCall && ev.Tool.Call.Args == nil && ev.Tool.Call.ArgsRaw == `{"path": ` && ev.Tool.Call.ArgsErr != "", ev)
		}},
		{"head PostToolCall string result", env(`{"msg":"PostToolCall","tool_call":` + tc + `,"name":"execute_command","result":"Command ls exited with status 0.\n=== STDOUT (2 lines) ===\na\nb","text":"Command ls exited with status 0.\n=== STDOUT (2 lines) ===\na\nb"}`), func(t *testing.T, ev events.Event) {
			r := ev.Tool.Result
			want(t, ev.Kind == events.KindPostToolCall && ev.Dialect == events.DialectHead && !r.IsError && r.Command != nil &&
				*r.Command.ExitCode == 0 && r.Command.Stdout == "a\nb" && r.Command.Command == "ls", ev)
		}},
		{"head PostToolCall error", env(`{"msg":"PostToolCall","tool_call":` + tc + `,"name":"read_file","error":["ToolFailure","Error reading file: File not found: x"],"text":"Error reading file: File not found: x"}`), func(t *testing.T, ev events.Event) {
			r := ev.Tool.Result
			want(t, r.IsError && r.ErrorText == "Error reading file: File not found: x", ev)
		}},
		{"head Cancelled", env(`{"msg":"Cancelled"}`), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindCancelled, ev) }},
		{"head Failed", env(`{"msg":"Failed","error":["HttpError",{"code":401,"body":"{\"error\":{\"message\":\"No auth credentials found\",\"code\":401}}"}]}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindFailed && ev.Text == "HttpError 401: No auth credentials found", ev)
		}},
		{"snapshot", events.Frame{Name: "maria.queued_messages.synchronized", Data: []byte(`[{"id":"q1","message":{"role":"user","content":"Also add a CHANGELOG"},"web_search":true}]`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindQueueSnapshot && len(ev.Queue) == 1 && ev.Queue[0] == events.QueuedMessage{ID: "q1", Text: "Also add a CHANGELOG", WebSearch: true}, ev)
		}},
		{"snapshot empty", events.Frame{Name: "maria.queued_messages.synchronized", Data: []byte(`[]`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindQueueSnapshot && len(ev.Queue) == 0, ev)
		}},
		// docs dialect
		{"docs MessageAdded string", flat(`{"id":7,"msg":"MessageAdded","message":{"role":"user","content":"hello"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && ev.Text == "hello" && ev.ID == "7" && ev.Dialect == events.DialectDocs, ev)
		}},
		{"docs MessageAdded typed parts", flat(`{"id":"s8","msg":"MessageAdded","message":{"role":"user","content":[{"type":"text","text":"he"},{"type":"text","text":"llo"}]}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && ev.Text == "hello" && ev.ID == "s8", ev)
		}},
		{"docs MessageAdded untyped parts", flat(`{"id":9,"msg":"MessageAdded","message":{"role":"user","content":[{"text":"hi"}]}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && ev.Text == "hi", ev)
		}},
		{"docs MessageAdded assistant", flat(`{"id":10,"msg":"MessageAdded","message":{"role":"assistant","content":[{"type":"text","text":"Let me"}],"tool_calls":[` + tc + `]}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAssistantMessage && ev.Text == "Let me" && len(ev.ToolCalls) == 1 && ev.Variant == "MessageAdded", ev)
		}},
		{"docs MessageAdded system", flat(`{"msg":"MessageAdded","message":{"role":"system","content":"You are"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindSystemMessage && ev.ID == "" && ev.Fingerprint != 0, ev)
		}},
		{"docs MessageAdded tool", flat(`{"id":11,"msg":"MessageAdded","message":{"role":"tool","content":[{"type":"text","text":"out"}],"tool_call_id":"toolu_1"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindToolMessage && ev.Tool.Call.ID == "toolu_1" && ev.Tool.Result.Text == "out", ev)
		}},
		{"docs RequestCompleted null usage", flat(`{"id":12,"msg":"RequestCompleted","usage":null,"message":{"content":"ok","role":"assistant","tool_calls":[]}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAssistantMessage && ev.Usage == nil && ev.Text == "ok", ev)
		}},
		{"docs RequestCompleted usage array", flat(`{"id":13,"msg":"RequestCompleted","usage":[{"prompt_tokens":10,"completion_tokens":2},{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}],"message":{"content":"ok","role":"assistant","tool_calls":[]}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Usage != nil && *ev.Usage == events.Usage{InputTokens: 15, OutputTokens: 3, CachedTokens: 4, TotalTokens: 18}, ev)
		}},
		{"docs RequestCompleted usage object", flat(`{"id":14,"msg":"RequestCompleted","usage":{"input_tokens":10,"output_tokens":2,"cache_read_tokens":3},"message":{"content":"ok","role":"assistant"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Usage != nil && *ev.Usage == events.Usage{InputTokens: 10, OutputTokens: 2, CachedTokens: 3, TotalTokens: 12}, ev)
		}},
		{"docs TodoUpdated", flat(`{"id":15,"msg":"TodoUpdated","todos":[{"content":"Write tests","id":"ac8a366d","priority":"High","status":"InProgress"}],"created_at":"2026-03-27T08:00:12"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindTodoUpdated && len(ev.Todos) == 1 && ev.Todos[0] == events.Todo{ID: "ac8a366d", Content: "Write tests", Status: "in_progress", Priority: "high"}, ev)
		}},
		{"docs PostToolCall flat", flat(`{"id":16,"msg":"PostToolCall","tool_call":` + tc + `,"name":"execute_command","result":"x","text":"x"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindPostToolCall && ev.Dialect == events.DialectDocs && ev.Tool.Result.Text == "x", ev)
		}},
		{"docs MessageUnqueued", flat(`{"id":17,"msg":"MessageUnqueued","message":{"id":"m9"}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindMessageUnqueued && ev.MessageID == "m9", ev)
		}},
		{"docs PostConversation", flat(`{"id":18,"msg":"PostConversation"}`), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindPostConversation, ev) }},
		// daemon events
		{"daemon tasks synchronized", events.Frame{Name: "daemon.tasks.synchronized", Data: []byte(`{"tasks":[{"name":"N","id":"t1","cwd":"/x","status":"stopped","created":1774400000000,"updated":1774403600000,"web_search":false},{"id":"t2","cwd":"/y","port":5,"status":"idle","created":1,"updated":1,"web_search":true,"queued_messages":[{"id":"q","message":{"role":"user","content":"c"}}],"model":"m"}]}`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindTasksSynced && len(ev.Tasks) == 2 && ev.Tasks[0].Name == "N" && ev.Tasks[1].Name == "" &&
				ev.Tasks[1].QueuedMessages[0].Text == "c" && ev.Tasks[1].Model == "m" && ev.Tasks[0].Updated.UnixMilli() == 1774403600000, ev)
		}},
		{"daemon task changed", events.Frame{Name: "daemon.task.changed", Data: []byte(`{"task":{"id":"t1","cwd":"/x","status":"generating","created":1,"updated":1,"web_search":false}}`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindTaskChanged && ev.Task.Status == events.StatusGenerating, ev)
		}},
		{"auth status", events.Frame{Name: "auth.status.changed", Data: []byte(`{"provider":"copilot","authenticated":true}`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAuth && ev.Auth.Provider == "copilot" && ev.Auth.Authenticated && ev.Auth.Event == "status.changed", ev)
		}},
		{"auth failed", events.Frame{Name: "auth.login.failed", Data: []byte(`{"provider":"codex","message":"denied"}`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAuth && ev.Auth.Message == "denied", ev)
		}},
		// bad input
		{"malformed JSON", flat(`{"id":"x","desc":{"msg":"UserMe`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindInvalid && strings.Contains(ev.Notice, "not valid JSON") && strings.Contains(ev.Notice, `{"id":"x"`), ev)
		}},
		{"non-object", flat(`[1,2,3]`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindInvalid && strings.Contains(ev.Notice, "not a JSON object"), ev)
		}},
		{"empty", flat(``), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindInvalid, ev) }},
		{"unknown variant", env(`{"msg":"SubagentSpawned","x":1}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUnknown && strings.Contains(ev.Notice, "SubagentSpawned"), ev)
		}},
		{"unknown event name", events.Frame{Name: "weird", Data: []byte(`hello`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindForeign && strings.Contains(ev.Notice, "weird") && !strings.Contains(ev.Notice, "hello"), ev)
		}},
		{"msg not a string", env(`{"msg":42}`), func(t *testing.T, ev events.Event) { want(t, ev.Kind == events.KindInvalid, ev) }},
		{"wrong field types", env(`{"msg":"AssistantMessage","tool_calls":"nope","content":7,"usage":"x"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindAssistantMessage && ev.Text == "" && ev.ToolCalls == nil && ev.Usage == nil, ev)
		}},
		{"queued without id", env(`{"msg":"MessageQueued","message":{}}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindInvalid && strings.Contains(ev.Notice, "no message id"), ev)
		}},
		{"invalid UTF-8", env("{\"msg\":\"UserMessage\",\"content\":\"a\xffb\"}"), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && utf8.ValidString(ev.Text), ev)
		}},
		{"deep nesting", env(`{"msg":"UserMessage","content":"x","deep":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindInvalid && len(ev.Notice) < 400, ev)
		}},
		{"several MB kept whole", env(`{"msg":"UserMessage","content":"` + strings.Repeat("a", 6<<20) + `é"}`), func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindUserMessage && ev.Text == strings.Repeat("a", 6<<20)+"é", ev)
		}},
		{"snapshot not a list", events.Frame{Name: "maria.queued_messages.synchronized", Data: []byte(`{"x":1}`)}, func(t *testing.T, ev events.Event) {
			want(t, ev.Kind == events.KindInvalid, ev)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, Decode(c.frame)) })
	}
}

func want(t *testing.T, ok bool, ev events.Event) {
	t.Helper()
	if !ok {
		ev.Text = events.Excerpt([]byte(ev.Text), 200)
		t.Fatalf("unexpected event: %+v", ev)
	}
}

func TestToolCallShapes(t *testing.T) {
	for _, raw := range []string{
		`{"id":"c1","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"},"type":"function"}`,
		`{"id":"c1","function":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"id":"c1","name":"read_file","arguments":{"path":"a"}}`,
		`{"id":"c1","name":"read_file","input":{"path":"a"}}`,
	} {
		c := parseToolCall(json.RawMessage(raw))
		if c.ID != "c1" || c.Name != "read_file" || string(c.Args) != `{"path":"a"}` || (&events.ToolItem{Name: c.Name, Call: c}).KeyArg() != "a" {
			t.Errorf("%s → %+v", raw, c)
		}
	}
	c := parseToolCall(json.RawMessage(`{"id":"c2","function":{"name":"x"}}`))
	if c.Args != nil || c.ArgsRaw != "" || c.ArgsErr != "" {
		t.Errorf("absent arguments → %+v", c)
	}
}

// Legacy structured results of docs/protocol.md §7, one per tool.
func TestLegacyResults(t *testing.T) {
	post := func(name, args, result, text string) *events.ToolResult {
		b, _ := json.Marshal(text)
		ev := Decode(env(`{"msg":"PostToolCall","tool_call":{"id":"c","function":{"name":"` + name + `","arguments":` + args + `},"type":"function"},"name":"` + name + `","result":` + result + `,"text":` + string(b) + `}`))
		if ev.Kind != events.KindPostToolCall || ev.Dialect != events.DialectLegacy {
			t.Fatalf("%s: %+v", name, ev)
		}
		return ev.Tool.Result
	}
	r := post("execute_command", `"{\"command\": \"moon build\"}"`, `["Completed",{"command":"moon build","status":1,"stdout":"","stderr":"boom\n","max_output_lines":100}]`, "Command moon build exited with status 1.")
	if r.Command == nil || *r.Command.ExitCode != 1 || r.Command.Stderr != "boom\n" || r.IsError {
		t.Errorf("execute_command: %+v", r.Command)
	}
	r = post("execute_command", `"{\"command\": \"sleep 5\"}"`, `["TimedOut",{"command":"sleep 5","timeout":1000,"stdout":"","stderr":"","max_output_lines":100}]`, "Command sleep 5 timed out after 1000 seconds.")
	if r.Command == nil || !r.Command.TimedOut || r.Command.ExitCode != nil {
		t.Errorf("timed out: %+v", r.Command)
	}
	r = post("list_files", `"{\"path\": \".\"}"`, `{"path":".","entries":[{"name":"README.md","kind":"file","is_hidden":false},{"name":"src","kind":"directory","is_hidden":false},{"name":".git","kind":"directory","is_hidden":true}],"total_count":3,"file_count":1,"directory_count":2}`, "Directory: .")
	if r.Listing == nil || len(r.Listing.Entries) != 3 || r.Listing.Entries[1].Kind != "directory" || !r.Listing.Entries[2].Hidden {
		t.Errorf("list_files: %+v", r.Listing)
	}
	r = post("read_file", `"{\"path\": \"a.go\", \"start_line\": 2, \"end_line\": 3}"`, `{"path":"a.go","content":"l1\nl2\nl3\nl4","start_line":2,"end_line":3}`, "File: a.go (lines 2-3 (2 lines))\n L2 | l2\n L3 | l3")
	if r.File == nil || r.File.Plain() != "l2\nl3" || r.File.StartLine != 2 {
		t.Errorf("read_file: %+v", r.File)
	}
	// Without a text that shows the rows, the range of the whole file.
	r = post("read_file", `"{\"path\": \"a.go\", \"start_line\": 2, \"end_line\": 3}"`, `{"path":"a.go","content":"l1\nl2\nl3\nl4","start_line":2,"end_line":3}`, "")
	if r.File == nil || r.File.Content != "l2\nl3" || r.File.Numbered || r.File.StartLine != 2 || r.File.EndLine != 3 {
		t.Errorf("read_file without text: %+v", r.File)
	}
	r = post("search_files", `"{\"path\": \".\", \"regex\": \"x\", \"kind\": \"regex\"}"`, `["SearchResultData",{"kind":"Regex","query":"x","path":".","file_pattern":"*","context_lines":2,"total_matches":1,"results":[{"context":"1: a\n2: x","line_number":2,"match_line":"x","path":"notes.txt"}],"truncated":false,"message":"Search completed. Found 1 matches."}]`, "Search completed. Found 1 matches.")
	if r.Search == nil || r.Search.Total != 1 || r.Search.Hits[0].Path != "notes.txt" || r.Search.Hits[0].Line != 2 {
		t.Errorf("search: %+v", r.Search)
	}
	r = post("todo", `"{\"action\": \"read\"}"`, `["Read",{"todos":[{"content":"A","created_at":"2026-03-27T08:00:12","id":"a1","priority":"Low","status":"Completed","updated_at":"2026-03-27T08:00:12"}]}]`, "…")
	if len(r.Todos) != 1 || r.Todos[0].Status != "completed" || r.Todos[0].Priority != "low" {
		t.Errorf("todo read: %+v", r.Todos)
	}
	r = post("todo", `"{\"action\": \"create\"}"`, `["Write",{"todos":[{"content":"A","id":"a1","priority":"High","status":"Pending"},{"content":"B","id":"b2","priority":"Medium","status":"InProgress"}],"message":"Created 2 new todo items","updated_todos":[],"is_new_creation":true}]`, "…")
	if len(r.Todos) != 2 || r.Todos[1].Status != "in_progress" {
		t.Errorf("todo write: %+v", r.Todos)
	}
	r = post("write_to_file", `"{\"path\": \"a\"}"`, `{"path":"/abs/a"}`, "Content written to file at path: /abs/a")
	if r.Write == nil || r.Write.Path != "/abs/a" {
		t.Errorf("write: %+v", r.Write)
	}
	r = post("meta_write_to_file", `"{\"path\": \"a\"}"`, `{"path":"a","message":"ok","diff":"-x\n+y"}`, "ok")
	if r.Patch == nil || r.Patch.Diff != "-x\n+y" {
		t.Errorf("meta_write: %+v", r.Patch)
	}
}

// HEAD text formats of docs/protocol.md §7 parsed into details.
func TestHeadTextDetails(t *testing.T) {
	post := func(name, args, text string) *events.ToolResult {
		b, _ := json.Marshal(text)
		ev := Decode(env(`{"msg":"PostToolCall","tool_call":{"id":"c","function":{"name":"` + name + `","arguments":` + args + `},"type":"function"},"name":"` + name + `","result":` + string(b) + `,"text":` + string(b) + `}`))
		if ev.Dialect != events.DialectHead {
			t.Fatalf("dialect %v", ev.Dialect)
		}
		return ev.Tool.Result
	}
	r := post("execute_command", `"{\"command\": \"go test\"}"`, "Command go test exited with status 2.\n=== STDOUT (2 lines) ===\nok\n\n=== STDERR (1 lines) ===\nFAIL")
	if r.Command == nil || *r.Command.ExitCode != 2 || r.Command.Stdout != "ok\n" || r.Command.Stderr != "FAIL" {
		t.Errorf("command: %+v", r.Command)
	}
	r = post("execute_command", `"{\"command\": \"sleep 9\"}"`, "Command sleep 9 timed out after 1000 seconds.")
	if r.Command == nil || !r.Command.TimedOut {
		t.Errorf("timeout: %+v", r.Command)
	}
	r = post("read_file", `"{\"path\": \"README.md\"}"`, "File: README.md (lines 1-3 (3 lines))\n L1 | # wordfreq\n L2 | \n L3 | A tiny")
	if r.File == nil || r.File.Path != "README.md" || r.File.Plain() != "# wordfreq\n\nA tiny" || !r.File.Numbered {
		t.Errorf("read: %+v", r.File)
	}
	r = post("list_files", `"{\"path\": \".\"}"`, "Directory: .\nTotal: 3 items (1 files, 2 directories)\n\n📄 README.md\n📁 src\n📁 .git [hidden]")
	// A listing and a search are read from the text when asked for: the
	// timeline keeps the text only.
	if l := r.FileListing(); r.Listing != nil || l == nil || len(l.Entries) != 3 || !l.Entries[2].Hidden || l.Entries[2].Name != ".git" {
		t.Errorf("list: kept %+v, read %+v", r.Listing, l)
	}
	if w := events.WithDetails(r, tools.FormatListing, events.ToolCall{}); w != r {
		t.Errorf("WithDetails copied a result whose listing is read from its text")
	}
	r = post("search_files", `"{\"regex\": \"foo\"}"`, "Search completed. Found 2 matches.\n\nsrc/a.go:12\n11: x\n12: foo\n\nsrc/b.go:3\n3: foo\n")
	if s := r.SearchResult(); r.Search != nil || s == nil || s.Total != 2 || len(s.Hits) != 2 || s.Hits[0].Context != "11: x\n12: foo" {
		t.Errorf("search: kept %+v, read %+v", r.Search, s)
	}
	r = post("todo", `"{\"action\": \"create\", \"content\": \"A\\nB\"}"`, "✅ Operation completed: Created 2 new todo items\n\n📝 Newly created todos:\n  🟡 ⏳ [a1b2c3d4] Write tests\n  🔴 🔄 [e5f6a7b8] Fix bug\n\n📊 Current summary: Total 2 items | Pending 1 | In Progress 1 | Completed 0")
	if len(r.Todos) != 2 || r.Todos[0] != (events.Todo{ID: "a1b2c3d4", Content: "Write tests", Status: "pending", Priority: "medium"}) || r.Todos[1].Status != "in_progress" {
		t.Errorf("todo create: %+v", r.Todos)
	}
	r = post("todo", `"{\"action\": \"mark_completed\", \"task_id\": \"a1\"}"`, "✅ Operation completed: Marked task as completed: A\n\n📝 Current todo list:\n  🟡 ✅ [a1] A\n  🟢 ⏳ [b2] B\n\n✨ Updated items:\n  🟡 ✅ [a1] A\n\n📊 Current summary: Total 2 items | Pending 1 | In Progress 0 | Completed 1")
	if len(r.Todos) != 2 || r.Todos[0].Status != "completed" || r.Todos[1].Priority != "low" {
		t.Errorf("todo update: %+v", r.Todos)
	}
	r = post("todo", `"{\"action\": \"read\"}"`, "=== Current Session Todo List ===\n\n1. ⏳ 🔴 [a1] A\n   └─ 📝 note\n2. ✅ 🟢 [b2] B\n\n📊 Summary: Total: 2 | ✅ Completed: 1 | ⏳ Pending: 1")
	if len(r.Todos) != 2 || r.Todos[0].Notes != "note" || r.Todos[0].Priority != "high" || r.Todos[1].Status != "completed" {
		t.Errorf("todo read: %+v", r.Todos)
	}
	r = post("todo", `"{\"action\": \"create\", \"content\": \"- one\\n- two\"}"`, "unparseable")
	if len(r.Todos) != 2 || r.Todos[0].Content != "one" {
		t.Errorf("todo from args: %+v", r.Todos)
	}
	r = post("apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch"}`, "{\n  \"success\": true,\n  \"message\": \"Success.\",\n  \"added\": [],\n  \"modified\": [\"a.py\"],\n  \"deleted\": []\n}")
	if r.Patch == nil || len(r.Patch.Modified) != 1 || !strings.Contains(r.Patch.Diff, "+y") {
		t.Errorf("patch: %+v", r.Patch)
	}
	r = post("write_to_file", `"{\"path\": \"CHANGELOG.md\"}"`, "Content written to file at path: /home/a/CHANGELOG.md")
	if r.Write == nil || r.Write.Path != "/home/a/CHANGELOG.md" {
		t.Errorf("write: %+v", r.Write)
	}
}

func TestErrorText(t *testing.T) {
	for raw, wantText := range map[string]string{
		`["ToolFailure","boom"]`: "boom",
		`"plain"`:                "plain",
		`["HttpError",{"code":500,"body":"oops"}]`: "HttpError 500: oops",
		`{"message":"m"}`:                          "m",
		`["Timeout"]`:                              "Timeout",
		`[1,2]`:                                    "[1,2]",
		`{"weird":true}`:                           `{"weird":true}`,
		`["HttpError",{"code":429,"body":"{\"error\":{\"message\":\"rate limited\"}}"}]`: "HttpError 429: rate limited",
	} {
		if got := ErrorText(json.RawMessage(raw)); got != wantText {
			t.Errorf("%s → %q, want %q", raw, got, wantText)
		}
	}
}

func TestDecodeNeverPanicsOnCorpusMutations(t *testing.T) {
	base := `{"id":"e","created":1,"desc":{"msg":"PostToolCall","tool_call":{"id":"c","function":{"name":"execute_command","arguments":"{}"}},"name":"execute_command","result":["Completed",{"status":"x","stdout":5}],"text":3}}`
	for i := 0; i <= len(base); i++ {
		Decode(events.Frame{Name: "maria", Data: []byte(base[:i])})
	}
}
