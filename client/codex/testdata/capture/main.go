// Command capture is a fake OpenAI Responses API, on loopback, that serves
// scripted model turns to the real Codex CLI and logs what Codex sends it.
// capture.sh runs it (go run) to record the fixtures of client/codex; it
// lives under testdata so that go build ./... and go vet ./... leave it out.
//
// The script is a JSON array; each POST /v1/responses takes the next entry:
//
//	{"fail": 503}                          answer with that HTTP status
//	{"output": [item, …], "usage": {…}}    stream these output items
//
// A step's "delay" (milliseconds) holds the answer back after its first
// event, so that a recording sees the CLI busy for that long. A request
// that offers no tools (the TUI naming the thread after its first prompt)
// is not a model turn of the script: it gets a short canned title.
//
// An item is {"reasoning": "…"}, {"message": "…"}, {"call": "<function>",
// "args": {…}} or {"custom": "<tool>", "input": "…"}; usage is
// {input, cached, output, reasoning}. Call ids are call_<request>_<index>,
// so that a request's tool outputs can be traced to the call that asked.
//
// Each request is logged as one JSON line: its number, path, what was
// served, and its input items less the developer messages (the system
// prompt, the same in every request and long): the tool outputs Codex sends
// back are the ground truth of what its tools returned.
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
	"sync"
	"time"
)

type step struct {
	Fail   int    `json:"fail"`
	Delay  int    `json:"delay"`
	Output []item `json:"output"`
	Usage  struct {
		Input, Cached, Output, Reasoning int
	} `json:"usage"`
}

type item struct {
	Reasoning string          `json:"reasoning"`
	Message   string          `json:"message"`
	Call      string          `json:"call"`
	Args      json.RawMessage `json:"args"`
	Custom    string          `json:"custom"`
	Input     string          `json:"input"`
}

type server struct {
	mu     sync.Mutex
	script []step
	next   int
	log    *os.File
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "where to listen (loopback only)")
	scriptPath := flag.String("script", "", "the scripted model turns (JSON)")
	logPath := flag.String("log", "requests.jsonl", "where to append the requests")
	flag.Parse()
	b, err := os.ReadFile(*scriptPath)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{}
	if err := json.Unmarshal(b, &s.script); err != nil {
		log.Fatalf("%s: %v", *scriptPath, err)
	}
	if s.log, err = os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		log.Fatalf("%s is not a loopback address", host)
	}
	fmt.Println(ln.Addr().String()) // capture.sh reads the port from here
	log.Fatal(http.Serve(ln, s))
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := s.next
	var st *step
	if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" && !offersTools(body) {
		st = &step{Output: []item{{Message: "A perch recording"}}}
	} else if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" && n < len(s.script) {
		st = &s.script[n]
		s.next++
	}
	s.logRequest(n, r, body, st)
	s.mu.Unlock()
	switch {
	case st == nil:
		http.Error(w, `{"error":{"message":"the script has no turn for this request"}}`, http.StatusNotFound)
	case st.Fail != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st.Fail)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, st.Fail)
	default:
		stream(w, n, st)
	}
}

func (s *server) logRequest(n int, r *http.Request, body []byte, st *step) {
	rec := map[string]any{"n": n, "method": r.Method, "path": r.URL.Path}
	if st != nil && st.Fail != 0 {
		rec["served"] = st.Fail
	} else if st != nil {
		rec["served"] = 200
	}
	var req struct {
		Model string            `json:"model"`
		Input []json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &req) == nil {
		rec["model"] = req.Model
		var kept []json.RawMessage
		for _, in := range req.Input {
			var m struct{ Type, Role string }
			if json.Unmarshal(in, &m) == nil && m.Type == "message" && m.Role == "developer" {
				continue
			}
			kept = append(kept, in)
		}
		rec["input"] = kept
	}
	b, _ := json.Marshal(rec)
	s.log.Write(append(b, '\n'))
}

// offersTools says whether a request offers the model tools: the ones
// that do not are the CLI's side requests (a thread's title).
func offersTools(body []byte) bool {
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	return json.Unmarshal(body, &req) != nil || len(req.Tools) > 0
}

// stream writes one model turn as the Responses API streams it.
func stream(w http.ResponseWriter, n int, st *step) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(ev map[string]any) {
		ev["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	respID := fmt.Sprintf("resp_%d", n)
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	time.Sleep(time.Duration(st.Delay) * time.Millisecond)
	for i, it := range st.Output {
		id := fmt.Sprintf("%d_%d", n, i)
		var out map[string]any
		switch {
		case it.Reasoning != "":
			out = map[string]any{"type": "reasoning", "id": "rs_" + id,
				"summary": []any{map[string]any{"type": "summary_text", "text": it.Reasoning}}}
		case it.Message != "":
			out = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": it.Message, "annotations": []any{}}}}
		case it.Call != "":
			out = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id,
				"name": it.Call, "arguments": string(it.Args), "status": "completed"}
		case it.Custom != "":
			out = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id,
				"name": it.Custom, "input": it.Input, "status": "completed"}
		default:
			continue
		}
		send(map[string]any{"type": "response.output_item.added", "output_index": i, "item": out})
		if it.Message != "" {
			send(map[string]any{"type": "response.output_text.delta", "output_index": i, "item_id": out["id"],
				"content_index": 0, "delta": it.Message})
		}
		send(map[string]any{"type": "response.output_item.done", "output_index": i, "item": out})
	}
	u := st.Usage
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID, "usage": map[string]any{
		"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens": u.Input + u.Output}}})
}
