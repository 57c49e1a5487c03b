package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/gentranscript"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// benchSize is the size of each benchmark input: 50 MB, or
// PERCH_BENCH_MB megabytes (500 shows whether memory stays flat).
func benchSize(b *testing.B) int {
	v := os.Getenv("PERCH_BENCH_MB")
	if v == "" {
		return 50 << 20
	}
	mb, err := strconv.Atoi(v)
	if err != nil || mb < 1 {
		b.Fatalf("PERCH_BENCH_MB=%q: not a size in megabytes", v)
	}
	return mb << 20
}

// TestGeneratedInputsImport checks the benchmark inputs at a small size:
// each is detected as its kind and imports to turns, calls with output and
// no warnings.
func TestGeneratedInputsImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, g := range gentranscript.All() {
		p := filepath.Join(dir, g.Name)
		if err := g.Write(p, 256<<10); err != nil {
			t.Fatal(err)
		}
		if err := stdlibParse(p, g.Shape); err != nil {
			t.Errorf("%s: not valid JSON for the baseline: %v", g.Name, err)
			continue
		}
		res, err := Run(context.Background(), p, "", ingest.Options{})
		if err != nil {
			t.Errorf("%s: %v", g.Name, err)
			continue
		}
		if res.Kind != g.Kind {
			t.Errorf("%s: detected as %s, want %s", g.Name, res.Kind, g.Kind)
		}
		count := map[events.ItemKind]int{}
		withOutput := 0
		for _, it := range res.Timeline.Items() {
			count[it.Kind]++
			if it.Kind == events.ItemNotice && it.Level != events.LevelInfo {
				t.Errorf("%s: %s notice %q", g.Name, it.Level, events.Excerpt([]byte(it.Text), 200))
			}
			if it.Kind == events.ItemTool && it.Tool.Result != nil && len(it.Tool.Result.Text) >= 100 {
				withOutput++
			}
		}
		if count[events.ItemAssistant] < 5 || count[events.ItemTool] < 5 {
			t.Errorf("%s: only %v items", g.Name, count)
		}
		switch g.Name {
		case "anthropic-stream", "openai-stream": // a model's stream: no prompts, no results
		default:
			if withOutput < count[events.ItemTool]-1 {
				t.Errorf("%s: %d of %d tools have output", g.Name, withOutput, count[events.ItemTool])
			}
		}
		switch g.Name {
		case "anthropic-stream", "openai-stream", "suna-stream", "claude-code", "codex": // no prompts
		default:
			if count[events.ItemUser] < 2 {
				t.Errorf("%s: %d user turns", g.Name, count[events.ItemUser])
			}
		}
	}
}

// importOnce is `perch import path` with its output discarded.
func importOnce(path string) error {
	res, err := Run(context.Background(), path, "", ingest.Options{})
	if err != nil {
		return err
	}
	return transcript.WriteJSONL(io.Discard, res.Timeline)
}

// stdlibParse is the baseline: encoding/json parses every JSON value of the
// file into an any, and nothing else happens: each line of JSON lines, the
// data of each SSE frame, or the whole document.
func stdlibParse(path, shape string) error {
	if shape == "json" {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var v any
		return json.Unmarshal(b, &v)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var data []byte
	parse := func(b []byte) error {
		if len(b) == 0 || string(b) == "[DONE]" {
			return nil
		}
		var v any
		return json.Unmarshal(b, &v)
	}
	for {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = r.ReadSlice('\n')
			line = append(append([]byte(nil), line...), more...)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case shape == "jsonl":
			if err := parse(line); err != nil {
				return err
			}
		case len(line) == 0:
			if err := parse(data); err != nil {
				return err
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		if err != nil {
			return parse(data)
		}
	}
}

// benchInput writes g's input (benchSize) into dir once per benchmark run.
func benchInput(b *testing.B, dir string, g gentranscript.Gen) string {
	b.Helper()
	size := benchSize(b)
	p := filepath.Join(dir, fmt.Sprintf("%s-%dMB", g.Name, size>>20))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if err := g.Write(p, size); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchDir holds the inputs for all the benchmarks of one test binary run
// (PERCH_BENCH_DIR keeps them between runs).
func benchDir(b *testing.B) string {
	if d := os.Getenv("PERCH_BENCH_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		return d
	}
	return b.TempDir()
}

// BenchmarkImport imports a 50 MB input of every kind's main shape, and
// reports the time against the time encoding/json takes merely to parse the
// same JSON values (x-stdlib; the target is at most 2). ns/op is the
// import's alone. Both run in every iteration, alternately, so that noise
// touches both.
func BenchmarkImport(b *testing.B) {
	dir := benchDir(b)
	for _, g := range gentranscript.All() {
		b.Run(g.Name, func(b *testing.B) {
			p := benchInput(b, dir, g)
			st, _ := os.Stat(p)
			b.SetBytes(st.Size())
			b.ResetTimer()
			var imp, std, impCPU, stdCPU []time.Duration
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				t0, c0 := time.Now(), cpuTime()
				if err := stdlibParse(p, g.Shape); err != nil {
					b.Fatal(err)
				}
				std, stdCPU = append(std, time.Since(t0)), append(stdCPU, cpuTime()-c0)
				runtime.GC()
				b.StartTimer()
				t1, c1 := time.Now(), cpuTime()
				if err := importOnce(p); err != nil {
					b.Fatal(err)
				}
				imp, impCPU = append(imp, time.Since(t1)), append(impCPU, cpuTime()-c1)
			}
			b.ReportMetric(float64(median(imp))/float64(median(std)), "x-stdlib")
			b.ReportMetric(float64(median(std))/1e6, "stdlib-ms")
			if c := median(stdCPU); c > 0 {
				// Processor time (GC workers included) is less disturbed by
				// other processes on a busy machine.
				b.ReportMetric(float64(median(impCPU))/float64(c), "x-stdlib-cpu")
			}
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
