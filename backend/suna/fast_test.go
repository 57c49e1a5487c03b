package suna

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/ingest"
)

// fastSeeds are chunk frames in the shapes the fast path must read as the
// general one does, and shapes it must leave to it.
var fastSeeds = []string{
	`{"message_id": null, "thread_id": "t", "type": "assistant", "is_llm_message": true, "content": "{\"role\": \"assistant\", \"content\": \"Hello \"}", "metadata": "{\"thread_run_id\": \"r\", \"stream_status\": \"chunk\"}", "_event_id": "1-0"}`,
	`{"message_id": null, "type": "reasoning", "content": "{\"reasoning_content\": \"I think \"}", "metadata": "{\"stream_status\": \"reasoning_chunk\"}", "_event_id": "1-1"}`,
	`{"message_id": null, "type": "reasoning", "content": "", "metadata": "{\"stream_status\": \"reasoning_chunk\"}"}`,
	`{"message_id": null, "type": "reasoning", "content": "plain thought", "metadata": {"stream_status": "reasoning_chunk"}}`,
	`{"message_id": null, "type": "assistant", "content": {"content": ["a"]}, "metadata": {"stream_status": "chunk", "reasoning_content": "old"}}`,
	`{"message_id": null, "type": "assistant", "content": "{\"role\": \"assistant\", \"content\": NaN}", "metadata": "{\"stream_status\": \"chunk\"}"}`,
	`{"message_id": null, "type": "user", "content": "{\"role\": \"assistant\", \"content\": \"x\"}", "metadata": "{\"stream_status\": \"chunk\"}"}`,
	`{"message_id": null, "type": "assistant", "content": "{\"content\": \"\\u00e9\\ud800\"}", "metadata": " {\"stream_status\": \"chunk\"}"}`,
	`{"message_id": null, "type": "assistant", "content": 12, "metadata": "{\"stream_status\": \"chunk\", \"stream_status\": \"x\"}"}`,
	`{"message_id": null, "type": "assistant", "content": [1], "metadata": "{\"stream_status\": \"chunk\"}", "content": "{}"}`,
	`{"message_id": null, "type": "assistant", "content": "{\"role\": \"assistant\", \"content\": \"\"}", "metadata": "{\"stream_status\": \"tool_call_chunk\", \"tool_calls\": [{\"tool_call_id\": \"streaming_tool_0\", \"function_name\": \"f\", \"arguments_delta\": \"{\\\"a\\\"\", \"is_delta\": true, \"index\": 0}]}", "_event_id": "1-2"}`,
	`{"message_id": null, "type": "assistant", "content": "{}", "metadata": "{\"stream_status\": \"tool_call_chunk\", \"tool_calls\": [{\"tool_call_id\": \"toolu_1\", \"arguments\": {\"a\": 1}, \"is_delta\": false}]}", "_event_id": "1-2"}`,
	`{"thread_id": "t", "metadata": {"stream_status": "chunk"}}`,
	`{"type": "assistant", "metadata": {"stream_status": "chunk"}, "content": "x\xff"}`,
	`{"type": "tool_output_stream", "tool_call_id": "toolu_1", "tool_name": "execute_command", "output": "line 1\n", "is_final": false, "_event_id": "2-0"}`,
	`{"type": "tool_output_stream", "tool_call_id": "toolu_1", "tool_name": "execute_command", "output": "line 1\n", "is_final": false, "_event_id": "2-0"}`,
	`{"type": "tool_output_stream", "tool_call_id": "toolu_1", "output": "", "is_final": true}`,
	`{"type": "ping"}`,
	`{"type": "ping", "model": "m1", "output": "x"}`,
	`{"type": "tool_output_stream", "content": "row", "output": "x", "metadata": "{}"}`,
	`{"type": "status", "status": "ping"}`,
	`{"type": "ping", "chunk": 1} x`,
	`{"message_id": null, "content": "x", "metadata": "{\"stream_status\": \"chunk\"}"} trailing`,
}

// FuzzFastChunk: the frames of the input, decoded with and without the
// fast path, give the same events.
func FuzzFastChunk(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.sse")
	for _, p := range paths {
		var frames [][]byte
		_ = ingest.EachFrame(p, func(fr events.Frame) error {
			frames = append(frames, fr.Data)
			return nil
		})
		f.Add(bytes.Join(frames, []byte("\n")))
	}
	f.Add([]byte(joinLines(fastSeeds)))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, deltas := range []bool{false, true} {
			fast, slow := &Decoder{Deltas: deltas}, &Decoder{Deltas: deltas, slow: true}
			for i, line := range bytes.Split(in, []byte("\n")) {
				a, b := fast.Decode(line), slow.Decode(line)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("deltas %v, frame %d %q:\nfast %+v\nslow %+v", deltas, i+1, line, a, b)
				}
			}
			if a, b := fast.Flush(), slow.Flush(); !reflect.DeepEqual(a, b) {
				t.Fatalf("deltas %v, flush:\nfast %+v\nslow %+v", deltas, a, b)
			}
		}
	})
}

func joinLines(ls []string) string {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestFastChunkTakesChunks guards the fast path's reason to be: the
// stream's chunk frames go through it (a change that sent them all the
// general way would pass the comparison above).
func TestFastChunkTakesChunks(t *testing.T) {
	taken := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 6: true, 7: true, 9: true, 10: true, 11: true, 12: true, 14: true, 15: true, 16: true, 17: true, 18: true}
	for i, s := range fastSeeds {
		d := &Decoder{Deltas: true}
		d.init()
		if got := d.fastChunk([]byte(s)); got != taken[i] {
			t.Errorf("seed %d %s: taken %v, want %v", i, s, got, taken[i])
		}
	}
}
