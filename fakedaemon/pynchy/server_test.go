package pynchy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perch-tui/perch/internal/ingest"
)

func TestDumps(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{obj{{"b", 1}, {"a", "x"}}, `{"b": 1, "a": "x"}`},
		{[]any{math.NaN(), math.Inf(1), math.Inf(-1), 2.0, 0.0123, nil, true}, `[NaN, Infinity, -Infinity, 2.0, 0.0123, null, true]`},
		{"é\u2028😀\"\\\n\x01\x7f", `"\u00e9\u2028\ud83d\ude00\"\\\n\u0001` + "\x7f" + `"`},
		{obj{}, `{}`},
	} {
		if got := string(dumps(c.v)); got != c.want {
			t.Errorf("dumps(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
	// What Python writes, Go reads back (NaN once repaired).
	var v any
	if err := json.Unmarshal(ingest.Repair(dumps(obj{{"s", "é😀"}, {"n", math.NaN()}})), &v); err != nil {
		t.Fatal(err)
	}
	if m := v.(map[string]any); m["s"] != "é😀" || m["n"] != nil {
		t.Errorf("read back %v", m)
	}
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w.Code, w.Body.String()
}

func post(t *testing.T, h http.Handler, target, body string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, target, strings.NewReader(body)))
	return w.Code, w.Body.String()
}

func TestAPI(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := New(Options{StepDelay: -1, Chats: []Chat{{JID: "tg:1", Name: "One"}}})
	defer s.Close()
	h := s.Handler()
	if code, body := get(t, h, "/api/messages"); code != 400 || !strings.Contains(body, "jid parameter required") {
		t.Errorf("no jid: %d %s", code, body)
	}
	if code, body := get(t, h, "/api/messages?jid=tg:none"); code != 200 || body != "[]" {
		t.Errorf("unknown jid: %d %s", code, body)
	}
	if code, body := post(t, h, "/api/send", `{"jid":"tg:1"}`); code != 400 || !strings.Contains(body, "jid and content required") {
		t.Errorf("no content: %d %s", code, body)
	}
	if code, _ := post(t, h, "/api/send", `{"jid":"tg:none","content":"hi"}`); code != 404 {
		t.Errorf("unknown chat: %d", code)
	}
	if code, body := post(t, h, "/api/send", `{"jid":"tg:1","content":"hi"}`); code != 200 || body != `{"status": "ok"}` {
		t.Errorf("send: %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Active("tg:1") {
		if time.Now().After(deadline) {
			t.Fatal("the run never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, body := get(t, h, "/api/messages?jid=tg:1&limit=2")
	var rows []map[string]any
	if err := json.Unmarshal(ingest.Repair([]byte(body)), &rows); err != nil {
		t.Fatal(err)
	}
	// The newest two, oldest first: the run's result and its reply, with
	// the same timestamp.
	if len(rows) != 2 || rows[0]["sender_name"] != "result_meta" || rows[1]["sender_name"] != "pynchy" || rows[0]["timestamp"] != rows[1]["timestamp"] {
		t.Errorf("limit=2: %s", body)
	}
	if code, body := get(t, h, "/api/groups"); code != 200 || body != `[{"jid": "tg:1", "name": "One", "folder": "tg-1", "trigger": "@pynchy"}]` {
		t.Errorf("groups: %d %s", code, body)
	}
	if _, body := get(t, h, "/health"); !strings.Contains(body, `"channels_connected": true`) {
		t.Errorf("health: %s", body)
	}
}

// slowGet bounds a test's stream read: a fake that stops sending fails
// the test instead of hanging it.
var slowGet = &http.Client{Timeout: time.Minute}

// readFrames reads an event stream until it ends or n frames came.
func readFrames(t *testing.T, r io.Reader, n int) []string {
	t.Helper()
	var frames []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			frames = append(frames, strings.Join(cur, "\n"))
			cur = nil
			if len(frames) == n {
				break
			}
			continue
		}
		if !strings.HasPrefix(line, "data: ") {
			t.Errorf("a line that is not data: %q", line)
		}
		cur = append(cur, strings.TrimPrefix(line, "data: "))
	}
	return frames
}

// TestStreamAndHistory: a run's stored events are its history rows, in
// order; text, user_input and activity are never stored.
func TestStreamAndHistory(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := New(Options{StepDelay: time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-served
		_ = s.Close()
	}()
	base := "http://" + ln.Addr().String()
	resp, err := slowGet.Get(base + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	s.Hold() // nothing moves until the stream reader is ready
	if err := s.Say("tui:main", "list the files"); err != nil {
		t.Fatal(err)
	}
	s.Release()
	frames := readFrames(t, resp.Body, 12)
	var stored []string
	for _, f := range frames {
		var ev map[string]any
		if err := json.Unmarshal(ingest.Repair([]byte(f)), &ev); err != nil {
			t.Fatalf("frame %s: %v", f, err)
		}
		switch tt, _ := ev["trace_type"].(string); {
		case ev["type"] == "message":
			stored = append(stored, ev["sender_name"].(string))
		case tt == "text" || tt == "user_input" || ev["type"] == "agent_activity":
		default:
			stored = append(stored, tt)
		}
	}
	if last := frames[len(frames)-1]; last != `{"type": "agent_activity", "chat_jid": "tui:main", "active": false}` {
		t.Errorf("the run does not end with activity off: %s", last)
	}
	hr, err := http.Get(base + "/api/messages?jid=tui:main")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	var rows []map[string]any
	if err := json.Unmarshal(ingest.Repair(body), &rows); err != nil {
		t.Fatal(err)
	}
	var senders []string
	for _, r := range rows {
		senders = append(senders, r["sender_name"].(string))
	}
	if strings.Join(senders, " ") != strings.Join(stored, " ") {
		t.Errorf("history %v, stored events of the stream %v", senders, stored)
	}
	if !bytes.Contains(body, []byte(`"sender_name": "tool_use", "content": "{\"tool_name\": \"Bash\"`)) {
		t.Errorf("trace rows do not hold their data JSON-encoded: %s", body)
	}
}

func TestDropEvery(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := New(Options{StepDelay: time.Millisecond, DropEvery: 4})
	hs := httptest.NewServer(s.Handler())
	defer func() {
		hs.Close()
		_ = s.Close()
	}()
	resp, err := slowGet.Get(hs.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := s.Say("tui:main", "list the files"); err != nil {
		t.Fatal(err)
	}
	if n := len(readFrames(t, resp.Body, 100)); n != 4 {
		t.Errorf("%d frames before the cut, want 4", n)
	}
}

func TestRunBanner(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "127.0.0.1:0", Options{StepDelay: -1}, pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "fake pynchy server listening on http://127.0.0.1:") || !strings.Contains(line, "--backend pynchy") {
		t.Errorf("banner %q, %v", line, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
