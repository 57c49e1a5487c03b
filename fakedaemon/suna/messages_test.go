package suna

import (
	"fmt"
	"testing"
	"time"
)

// oldMessages is the messages route's body as the fake wrote it before
// rows kept their encodings: every row built again as an obj and the
// whole answer encoded on each request. The route must answer these
// bytes exactly.
func oldMessages(rows []obj, asc, optimized bool) []byte {
	out := make([]obj, 0, len(rows))
	for _, row := range rows {
		if optimized && row.get("type") != "user" {
			cp := make(obj, 0, len(row))
			for _, p := range row {
				if p.k != "content" {
					cp = append(cp, p)
				}
			}
			row = cp
		}
		out = append(out, row)
	}
	if !asc {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	b, err := appendJSON(nil, obj{{"messages", out}})
	if err != nil {
		panic(err)
	}
	return b
}

// TestMessagesSameBytes holds the history route, which joins each row's
// stored encoding, to the old encoding of the same rows: threads with
// user prompts that need escaping (quotes, HTML characters, control
// characters, invalid UTF-8, emoji), tool calls and results, a failed
// run, an empty thread, in both orders, optimized or not.
func TestMessagesSameBytes(t *testing.T) {
	t.Parallel()
	h := start(t, Options{FrameDelay: -1})
	var tids []string
	for _, p := range []string{
		"hello",
		"tools <b>&amp;</b> \"quoted\" \\ back\tslash \x01 ctrl \xff\xfe bad é😀 \u2028",
		"please fail now",
		"bench 300",
	} {
		tid, rid, err := h.s.Start("", p)
		if err != nil {
			t.Fatal(err)
		}
		waitEnded(t, h.s, rid)
		tids = append(tids, tid)
	}
	// A second run on the first thread.
	_, rid, err := h.s.Start(tids[0], "again, with a <script> tag")
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, h.s, rid)
	// A thread without rows (a blank prompt stores none).
	tid, rid, err := h.s.Start("", "   ")
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, h.s, rid)
	tids = append(tids, tid)

	total := 0
	for _, tid := range tids {
		h.s.mu.Lock()
		var rows []obj
		for _, r := range h.s.threads[tid].rows {
			rows = append(rows, r.row)
		}
		h.s.mu.Unlock()
		total += len(rows)
		for _, q := range []struct {
			query    string
			asc, opt bool
		}{
			{"", false, true},
			{"?order=asc", true, true},
			{"?optimized=false", false, false},
			{"?optimized=false&order=asc", true, false},
		} {
			code, body := h.get("/threads/"+tid+"/messages"+q.query, "")
			want := oldMessages(rows, q.asc, q.opt)
			if code != 200 || string(body) != string(want) {
				t.Errorf("thread %s%s: %d\n got %s\nwant %s", tid, q.query, code, clip(body), clip(want))
			}
		}
	}
	if total < 20 {
		t.Fatalf("only %d rows in all: the comparison proves little", total)
	}
}

func clip(b []byte) string {
	if len(b) > 400 {
		return fmt.Sprintf("%s… (%d bytes)", b[:400], len(b))
	}
	return string(b)
}

// waitEnded waits until the run is no longer running.
func waitEnded(t *testing.T, s *Server, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.RunStatus(id) == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("run %s is still running", id)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
