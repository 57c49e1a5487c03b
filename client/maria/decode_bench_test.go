package maria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sse"
)

// benchStreamFrames returns every frame of the recorded streams.
func benchStreamFrames(b testing.TB) []events.Frame {
	files, err := filepath.Glob("testdata/streams/*.sse")
	if err != nil || len(files) == 0 {
		b.Fatalf("no recorded streams: %v", err)
	}
	var frames []events.Frame
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := sse.ReadFrames(bytes.NewReader(data), func(f events.Frame) error {
			frames = append(frames, f)
			return nil
		}); err != nil {
			b.Fatalf("%s: %v", p, err)
		}
	}
	return frames
}

// benchBigPost is a HEAD PostToolCall of execute_command with a ~200 KB
// output, carried twice (result and text) as maria sends it.
func benchBigPost() events.Frame {
	var out strings.Builder
	out.WriteString("Command go test ./... exited with status 0.\n=== STDOUT (4000 lines) ===\n")
	for i := 0; out.Len() < 200<<10; i++ {
		fmt.Fprintf(&out, "ok  \tgithub.com/example/pkg%d\t0.%03ds\t\"cached\" – ünïcode\n", i, i%1000)
	}
	text, _ := json.Marshal(out.String())
	data := `{"id":"big-1","created":1774598400003,"desc":{"msg":"PostToolCall","tool_call":{"id":"toolu_big","function":{"name":"execute_command","arguments":"{\"command\": \"go test ./...\"}"},"type":"function"},"name":"execute_command","args":{"command":"go test ./..."},"result":` +
		string(text) + `,"text":` + string(text) + `}}`
	return events.Frame{Name: "maria", Data: []byte(data)}
}

// BenchmarkDecode measures Decode on a realistic mix: every frame of the
// recorded streams, and one PostToolCall with a 200 KB output.
func BenchmarkDecode(b *testing.B) {
	frames := benchStreamFrames(b)
	big := benchBigPost()
	if ev := Decode(big); ev.Kind != events.KindPostToolCall || ev.Tool.Result.Command == nil {
		b.Fatalf("big PostToolCall decoded as %v", ev.Kind)
	}
	size := func(fs ...events.Frame) (n int64) {
		for _, f := range fs {
			n += int64(len(f.Data))
		}
		return n
	}
	run := func(name string, fs []events.Frame) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size(fs...))
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range fs {
					Decode(f)
				}
			}
		})
	}
	run("streams", frames)
	run("post200k", []events.Frame{big})
	run("mix", append(append([]events.Frame(nil), frames...), big))
}
