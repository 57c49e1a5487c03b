package pynchy_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileServer is a pynchy whose stream carries what a broken or hostile
// server could send: frames that are not JSON, not objects, of another
// chat, with control sequences, NaN, a data key that replaced the trace's
// type, and unknown types. Its history holds the rows the stream stored.
type hostileServer struct {
	mu     sync.Mutex
	rows   []string
	frames chan string
}

func (h *hostileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/groups":
		fmt.Fprint(w, `[{"jid": "tui:main", "name": "\u001b[2JMain"}, {"jid": "bad\u001b]0;x\u0007", "name": "x"}, {"name": "no jid"}, 7]`)
	case "/api/messages":
		h.mu.Lock()
		fmt.Fprintf(w, "[%s]", strings.Join(h.rows, ", "))
		h.mu.Unlock()
	case "/api/events":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case f := <-h.frames:
				fmt.Fprintf(w, "data: %s\n\n", f)
				w.(http.Flusher).Flush()
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// send publishes a frame; row, when not "", is stored first.
func (h *hostileServer) send(frame, row string) {
	if row != "" {
		h.mu.Lock()
		h.rows = append(h.rows, row)
		h.mu.Unlock()
	}
	h.frames <- frame
}

func TestLiveHostileStream(t *testing.T) {
	noLeaks(t)
	h := &hostileServer{frames: make(chan string)}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	b := openBackend(t, hs.URL)
	tasks, err := b.Sessions(t.Context())
	if err != nil || len(tasks) != 1 || tasks[0].ID != chat || strings.ContainsRune(tasks[0].Name, 0x1b) {
		t.Errorf("Sessions = %+v, %v", tasks, err)
	}
	f := follow(t, b, chat)
	f.waitStream(t)
	ts := "2026-11-22T10:00:00.000001+00:00"
	for _, s := range []struct{ frame, row string }{
		{`not json at all`, ""},
		{`[1, 2]`, ""},
		{`{"type": "agent_activity", "chat_jid": "tui:main", "active": "maybe"}`, ""},
		{`{"type": "agent_activity", "chat_jid": "tui:main", "active": true}`, ""},
		{`{"type": "message", "chat_jid": "tui:main", "sender_name": "You", "content": "hi \u001b]0;pwned\u0007", "timestamp": "` + ts + `", "is_bot": false}`,
			`{"sender_name": "You", "content": "hi \u001b]0;pwned\u0007", "timestamp": "` + ts + `", "is_from_me": false}`},
		{`{"type": "message", "chat_jid": "other", "sender_name": "You", "content": "elsewhere", "timestamp": "` + ts + `", "is_bot": false}`, ""},
		{`{"type": "agent_trace", "chat_jid": "tui:main", "trace_type": "tool_use", "tool_name": "Bash", "tool_input": {"command": "ls", "n": NaN}}`,
			`{"sender_name": "tool_use", "content": "{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": \"ls\", \"n\": NaN}}", "timestamp": "` + ts + `", "is_from_me": true}`},
		{`{"type": "stats", "chat_jid": "tui:main", "trace_type": "thinking", "thinking": "a data key replaced the type"}`,
			`{"sender_name": "thinking", "content": "{\"type\": \"stats\", \"thinking\": \"a data key replaced the type\"}", "timestamp": "` + ts + `", "is_from_me": true}`},
		{`{"type": "agent_trace", "chat_jid": "tui:main", "trace_type": "text", "text": "streamed"}`, ""},
		{`{"type": "surprise", "chat_jid": "tui:main"}`, ""},
		{`{"type": "agent_trace", "chat_jid": "tui:main", "trace_type": "result_meta", "subtype": "success", "total_cost_usd": NaN, "usage": {"input_tokens": Infinity, "output_tokens": 3}}`,
			`{"sender_name": "result_meta", "content": "{\"subtype\": \"success\", \"total_cost_usd\": NaN, \"usage\": {\"input_tokens\": Infinity, \"output_tokens\": 3}}", "timestamp": "` + ts + `", "is_from_me": true}`},
		{`{"type": "message", "chat_jid": "tui:main", "sender_name": "pynchy", "content": "done \u001b[31mred", "timestamp": "` + ts + `", "is_bot": true}`,
			`{"sender_name": "pynchy", "content": "done \u001b[31mred", "timestamp": "` + ts + `", "is_from_me": true}`},
		{`{"type": "agent_activity", "chat_jid": "tui:main", "active": false}`, ""},
	} {
		h.send(s.frame, s.row)
	}
	want := importHistory(t, hs.URL, chat)
	deadline := time.Now().Add(waitFor)
	for !bytes.Equal(f.export(t), want) {
		if time.Now().After(deadline) {
			t.Fatalf("live:\n%s\nimport:\n%s", f.export(t), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := get(f, func(f *follower) int { return f.resets }); r != 0 {
		t.Errorf("%d resets", r)
	}
}
