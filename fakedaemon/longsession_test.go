package fakedaemon

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
)

// longFrames creates a long session on a fresh daemon and returns its log.
func longFrames(t *testing.T, opts Options, ls LongSession) (LongSessionInfo, [][]byte) {
	t.Helper()
	d := New(opts)
	t.Cleanup(func() { _ = d.Close() })
	info, err := d.AddLongSession(ls)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	tk := d.tasks[info.TaskID]
	d.mu.Unlock()
	frames, err := tk.log.wait(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return info, frames
}

// splitFrame turns one whole SSE frame back into an events.Frame.
func splitFrame(t *testing.T, f []byte) events.Frame {
	t.Helper()
	s := string(f)
	ev, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(ev, "event: ") || !strings.HasPrefix(rest, "data: ") || !strings.HasSuffix(rest, "\n\n") ||
		strings.Count(rest, "\n") != 2 {
		t.Fatalf("malformed frame %.200q", s)
	}
	return events.Frame{Name: strings.TrimPrefix(ev, "event: "), Data: []byte(strings.TrimSuffix(strings.TrimPrefix(rest, "data: "), "\n\n"))}
}

func TestLongSessionEventCount(t *testing.T) {
	for _, n := range []int{MinLongSessionEvents, 41, 42, 43, 44, 45, 46, 47, 50, 57, 64, 99, 100, 101, 250} {
		for _, ls := range []LongSession{{Events: n}, {Events: n, BigOutput: 5000, LongLine: 3000, Seed: 2}} {
			info, frames := longFrames(t, Options{}, ls)
			if info.Events != n || len(frames) != n {
				t.Errorf("%+v: info %d events, log %d", ls, info.Events, len(frames))
			}
			var total int64
			for _, f := range frames {
				total += int64(len(f))
			}
			if info.Bytes != total {
				t.Errorf("%+v: info says %d bytes, log holds %d", ls, info.Bytes, total)
			}
		}
	}
	d := New(Options{})
	defer d.Close()
	if _, err := d.AddLongSession(LongSession{Events: MinLongSessionEvents - 1}); err == nil {
		t.Error("too short a session accepted")
	}
}

func TestLongSessionDeterministic(t *testing.T) {
	ls := LongSession{Events: 300, BigOutput: 1 << 15, LongLine: 1 << 14}
	_, a := longFrames(t, Options{}, ls)
	_, b := longFrames(t, Options{}, ls)
	if !bytes.Equal(bytes.Join(a, nil), bytes.Join(b, nil)) {
		t.Error("the same long session gave different bytes")
	}
	ls.Seed = 9
	_, c := longFrames(t, Options{}, ls)
	if bytes.Equal(bytes.Join(a, nil), bytes.Join(c, nil)) {
		t.Error("another seed gave the same bytes")
	}
}

// TestLongSessionSize checks the calibration: 10,000 events are about 50
// MB, so 2,000 about 10.
func TestLongSessionSize(t *testing.T) {
	info, _ := longFrames(t, Options{}, LongSession{Events: 2000})
	if info.Bytes < 8e6 || info.Bytes > 12e6 {
		t.Errorf("2,000 events make %d bytes, want about 10 MB", info.Bytes)
	}
}

func TestLongSessionDialects(t *testing.T) {
	const n = 800
	for _, dialect := range []Dialect{DialectHead, DialectLegacy, DialectDocs} {
		t.Run(string(dialect), func(t *testing.T) {
			info, frames := longFrames(t, Options{Dialect: dialect}, LongSession{Events: n, BigOutput: 120_000, LongLine: 60_000})
			kinds := map[events.Kind]int{}
			tools := map[string]int{}
			var last events.Event
			var fences, maxQueue, bigOut, longLine int
			outputs := map[string]bool{}
			for i, f := range frames {
				ev := maria.Decode(splitFrame(t, f))
				switch ev.Kind {
				case events.KindInvalid, events.KindUnknown, events.KindForeign:
					t.Fatalf("frame %d decodes as %v: %s (%.200q)", i, ev.Kind, ev.Notice, f)
				case events.KindAssistantMessage:
					last = ev
					if strings.Contains(ev.Text, "```") {
						fences++
					}
				case events.KindQueueSnapshot:
					maxQueue = max(maxQueue, len(ev.Queue))
				case events.KindPostToolCall:
					tools[ev.Tool.Name]++
					out := ev.Tool.Result.Text
					switch {
					case len(out) >= 119_000:
						bigOut++
					case len(out) >= 60_000 && !strings.Contains(strings.TrimSpace(out[strings.Index(out, "===\n")+4:]), "\n"):
						longLine++
					case len(out) < 300 || len(out) > 48<<10:
						t.Errorf("frame %d: %s output of %d bytes", i, ev.Tool.Name, len(out))
					}
					outputs[out] = true
				}
				kinds[ev.Kind]++
			}
			if last.Text != LongSessionFinalReply(n) || len(last.ToolCalls) != 0 || info.FinalReply != last.Text {
				t.Errorf("last reply %q (%d calls), info %q", last.Text, len(last.ToolCalls), info.FinalReply)
			}
			if ev := maria.Decode(splitFrame(t, frames[len(frames)-1])); ev.Kind != events.KindPostConversation || ev.ID != info.LastEventID {
				t.Errorf("last frame %v %q, info names %q", ev.Kind, ev.ID, info.LastEventID)
			}
			for _, k := range []events.Kind{events.KindMessageQueued, events.KindMessageUnqueued, events.KindUserMessage,
				events.KindPreConversation, events.KindPostConversation, events.KindPreToolCall} {
				if kinds[k] == 0 {
					t.Errorf("no %v", k)
				}
			}
			if kinds[events.KindPreConversation] != kinds[events.KindPostConversation] || kinds[events.KindPreConversation] < 10 {
				t.Errorf("%d PreConversation, %d PostConversation", kinds[events.KindPreConversation], kinds[events.KindPostConversation])
			}
			if kinds[events.KindMessageQueued] <= kinds[events.KindPreConversation] || kinds[events.KindMessageQueued] != kinds[events.KindMessageUnqueued] {
				t.Errorf("%d queued, %d unqueued, %d runs: no message was queued mid-run", kinds[events.KindMessageQueued],
					kinds[events.KindMessageUnqueued], kinds[events.KindPreConversation])
			}
			if maxQueue == 0 {
				t.Error("no snapshot shows a queued message")
			}
			for _, name := range []string{"execute_command", "read_file", "search_files", "list_files"} {
				if tools[name] == 0 {
					t.Errorf("no %s call", name)
				}
			}
			if fences < 10 || len(outputs) < kinds[events.KindPostToolCall]*9/10 {
				t.Errorf("%d replies with code fences, %d distinct outputs of %d", fences, len(outputs), kinds[events.KindPostToolCall])
			}
			if bigOut != 1 || longLine != 1 {
				t.Errorf("%d big outputs, %d long lines", bigOut, longLine)
			}
		})
	}
}

// TestLongSessionServed reads the session through the task stream, which
// stays open after the replay, and through RunScenario's banner.
func TestLongSessionServed(t *testing.T) {
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunScenario(ctx, "", Options{}, Scenario{Long: &LongSession{Events: 300}}, out) }()
	re := regexp.MustCompile(`^fake maria daemon \(head\) listening on (http://\S+/v1) \(long-session task ([0-9a-f-]{36}); 300 events, (\d+) bytes, last event ([0-9a-f-]{36})\)\n$`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = re.FindStringSubmatch(out.String())
	}
	if m == nil {
		cancel()
		t.Fatalf("banner %q", out.String())
	}
	e := &env{t: t, url: m[1], client: newEnv(t, Options{}).client}
	s := e.open("/task/" + m[2] + "/events")
	fs := s.take(300)
	total := 0
	for _, f := range fs {
		total += len(f.raw)
	}
	if fmt.Sprint(total) != m[3] || !strings.Contains(fs[299].data, m[4]) {
		t.Errorf("stream %d bytes, banner %s; last frame %.100s", total, m[3], fs[299].data)
	}
	if f, ok := s.next(200 * time.Millisecond); ok {
		t.Errorf("frame after the replay: %.100s", f.raw)
	}
	s.close()
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if err := RunScenario(context.Background(), "", Options{}, Scenario{Replay: "x", Long: &LongSession{Events: 300}}, out); err == nil {
		t.Error("replay and long session together accepted")
	}
}

// longEpoch is a constant so that the package has nothing to build at
// initialisation; it must stay the instant it names.
func TestLongSessionEpoch(t *testing.T) {
	if want := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC).UnixMilli(); longEpoch != want {
		t.Errorf("longEpoch = %d, want %d (2025-06-02T09:00:00Z)", longEpoch, want)
	}
}

// TestLongSessionFirstMarker checks that the first user message, and no
// other frame, carries LongSessionFirstMarker, in every dialect and also
// when the whole session is its last run.
func TestLongSessionFirstMarker(t *testing.T) {
	for _, dialect := range []Dialect{DialectHead, DialectLegacy, DialectDocs} {
		for _, n := range []int{MinLongSessionEvents, 300} {
			_, frames := longFrames(t, Options{Dialect: dialect}, LongSession{Events: n, BigOutput: 5000, LongLine: 3000})
			marked, first := 0, -1
			for i, f := range frames {
				if bytes.Contains(f, []byte(LongSessionFirstMarker)) {
					marked++
				}
				if ev := maria.Decode(splitFrame(t, f)); first < 0 && ev.Kind == events.KindUserMessage {
					first = i
					if !strings.HasPrefix(ev.Text, LongSessionFirstMarker+" ") {
						t.Errorf("%s, %d events: first user message %.100q", dialect, n, ev.Text)
					}
				}
			}
			if marked != 1 || first < 0 {
				t.Errorf("%s, %d events: the marker is in %d frames (first user message at %d)", dialect, n, marked, first)
			}
		}
	}
}
