//go:build ignore

// Command genlocal writes a Claude Code config directory of many
// sessions for benchmarks (testdata/bench-local.sh): -sessions transcripts
// under projects/ of -bytes in all, their lines shaped as the CLI's
// (bookkeeping lines, the prompt, replies of up to 100 KB), modified over
// the past year; and for each pid of -live a registry file that names a
// session, with the process's real start time, so that perch takes it
// for a running CLI.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", "", "the config directory to write")
	n := flag.Int("sessions", 5000, "how many transcripts")
	total := flag.Int64("bytes", 3<<30, "their size in all")
	live := flag.String("live", "", "comma-separated pids to register as running sessions")
	reuse := flag.Bool("reuse", false, "keep the transcripts there; only register -live (again)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	per := *total / int64(*n)
	words := strings.Fields("the build fails because the test waits on a timer that never fires so we move the clock into the fake and run it again")
	body := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	now := time.Now()
	var ids []string
	if *reuse {
		*n = 0
		files, _ := filepath.Glob(filepath.Join(*dir, "projects", "*", "*.jsonl"))
		for _, f := range files {
			ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
		}
		os.RemoveAll(filepath.Join(*dir, "sessions"))
	}
	for i := 0; i < *n; i++ {
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
		ids = append(ids, id)
		cwd := fmt.Sprintf("/home/user/project%02d", i%50)
		p := filepath.Join(*dir, "projects", strings.ReplaceAll(cwd, "/", "-"), id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			log.Fatal(err)
		}
		at := now.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		line := func(v map[string]any) int {
			v["sessionId"], v["cwd"], v["timestamp"] = id, cwd, at.UTC().Format(time.RFC3339Nano)
			b, _ := json.Marshal(v)
			f.Write(append(b, '\n'))
			return len(b) + 1
		}
		var written int64
		for _, t := range []string{"mode", "permission-mode", "atis-latch"} {
			written += int64(line(map[string]any{"type": t}))
		}
		written += int64(line(map[string]any{"type": "user", "uuid": fmt.Sprintf("u%d", i),
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("Task %d: %s", i, body(80))}}))
		for k := 0; written < per; k++ {
			size := min(int(per-written), 1000+rng.IntN(100_000))
			written += int64(line(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("a%d-%d", i, k),
				"message": map[string]any{"id": fmt.Sprintf("msg_%d_%d", i, k), "role": "assistant", "model": "claude-sonnet-4-5",
					"content":     []any{map[string]any{"type": "text", "text": body(size)}},
					"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 1200, "output_tokens": size / 4}}}))
		}
		f.Close()
		os.Chtimes(p, at, at)
	}
	if *live == "" {
		return
	}
	sessions := filepath.Join(*dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		log.Fatal(err)
	}
	for i, s := range strings.Split(*live, ",") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			log.Fatal(err)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			log.Fatal(err)
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		reg, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": ids[i%len(ids)], "cwd": fmt.Sprintf("/home/user/project%02d", i%50),
			"procStart": fields[19], "version": "2.1.332", "kind": "interactive", "name": fmt.Sprintf("live-%d", i),
			"status": "idle", "updatedAt": now.UnixMilli(), "statusUpdatedAt": now.UnixMilli()})
		if err := os.WriteFile(filepath.Join(sessions, s+".json"), reg, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
