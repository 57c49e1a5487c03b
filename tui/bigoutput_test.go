package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
)

// bigOutputSession is a short session whose last tool printed size bytes
// of log lines, with a marker line at three quarters of it (beyond what
// PlainText keeps), and a final reply under it.
func bigOutputSession(size int) (evs [][]events.Event, marker string) {
	var b strings.Builder
	b.Grow(size + 100)
	for i := 0; b.Len() < size; i++ {
		if b.Len() >= size*3/4 && marker == "" {
			marker = "PANIC: zebra " + strconv.Itoa(i)
			b.WriteString(marker + "\n")
			continue
		}
		b.WriteString("2026-01-01T00:00:00Z INFO request handled in 12ms path=/api/v1/things id=" + strconv.Itoa(i) + "\n")
	}
	return [][]events.Event{session(40),
		{preTool("t1", "call-big", "execute_command", `{"command":"cat server.log"}`),
			postTool("t2", "call-big", "execute_command", b.String(), false),
			assistant("t3", "That is the whole log.")}}, marker
}

// TestBigOutputExpandScrollSearch: with a 30 MB tool output, selecting,
// expanding, paging through it and searching it each lay out about a
// screen of rows, stay well under a generous time bound, and show what
// they should: the expanded output, and the row holding a match found
// deep inside it.
func TestBigOutputExpandScrollSearch(t *testing.T) {
	hs := newHarness(t, 100, 30, Config{TaskID: "task-1"})
	cr := countItems(hs)
	size, bound := 30<<20, 2*time.Second
	if raceEnabled {
		size, bound = 8<<20, 20*time.Second
	}
	evs, marker := bigOutputSession(size)
	for _, batch := range evs {
		hs.events(batch...)
	}
	hs.m.View()
	step := func(name string, do func()) string {
		t.Helper()
		cr.rows = 0
		start := time.Now()
		do()
		v := hs.view()
		// Generous: -race on a loaded 2-core machine. Unbounded layout of
		// 30 MB takes seconds.
		if d := time.Since(start); d > bound {
			t.Errorf("%s took %v", name, d)
		}
		if cr.rows > 300 {
			t.Errorf("%s laid out %d rows", name, cr.rows)
		}
		checkFrame(t, hs.m)
		t.Logf("%s: %d rows laid out in %v", name, cr.rows, time.Since(start))
		return v
	}
	step("focus transcript", func() { hs.key("esc") })
	step("select", func() { hs.key("[") })
	v := step("select the tool", func() { hs.key("[") })
	if !strings.Contains(v, "execute_command cat server.log") {
		t.Fatalf("the tool is not selected:\n%s", v)
	}
	v = step("expand", func() { hs.key("enter") })
	if !strings.Contains(v, "id=0") || !strings.Contains(v, "id=20") {
		t.Fatalf("expanding did not show the output's first lines:\n%s", v)
	}
	for range 3 {
		step("page down", func() { hs.key("pgdown") })
	}
	if v := hs.view(); strings.Contains(v, "id=0\n") || !strings.Contains(v, "id=80") {
		t.Fatalf("paging did not move through the output:\n%s", v)
	}
	v = step("search", func() {
		hs.key("/")
		hs.typ("zebra")
		hs.key("enter")
	})
	if !strings.Contains(v, marker) {
		t.Fatalf("search did not show the match %q:\n%s", marker, v)
	}
	if !strings.Contains(hs.m.flash.text, "match on line") {
		t.Errorf("flash %q", hs.m.flash.text)
	}
	step("page up", func() { hs.key("pgup") })
	step("bottom", func() { hs.key("G") })
	step("top", func() { hs.key("g") })
}
