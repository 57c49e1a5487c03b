package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The index measure: perch's memory across sessions (perch index, search
// and usage) on a generated corpus of Claude Code session files in the
// CLI's layout (a config directory of projects/<project>/<session>.jsonl),
// each reply written as the CLI writes it (a line per content block, the
// usage on each). Words follow a Zipf law over a fixed vocabulary, so
// that the commonest word is in most messages; one made-up word is in
// selectiveHits messages only.
//
//	first index of the corpus               ≤ 60 s per GB
//	index size                              ≤ 0.5× the session files
//	+10 MiB appended to one file, indexed    ≤ 2 s, reading only them
//	perch search of the rare word           ≤ 100 ms, ≤ 60 MB peak RSS
//	perch search of the commonest, 50 hits  ≤ 300 ms
//	perch usage --by day                    ≤ 1 s per 3 GB
//
// Each search and usage is a new process (cold for perch; the page cache
// is the machine's, not emptied: the shared machine's is not ours).

const (
	selectiveWord = "xylophonequartz"
	selectiveHits = 20
	sessionBytes  = 2 << 20 // a session file's size
	appendBytes   = 10 << 20
)

// corpus writes about size bytes of session files under dir (a Claude
// config directory) and returns the commonest word and the last file.
func writeCorpus(dir string, size int64) (common, last string, err error) {
	vocab := vocabulary(4096)
	sessions := int(max(1, size/sessionBytes))
	r := rand.New(rand.NewPCG(7, 11))
	planted := map[int]bool{}
	for len(planted) < selectiveHits {
		planted[r.IntN(sessions*sessionBytes/3500)] = true // a message of the corpus, by its number
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := 0
	for s := range sessions {
		proj := filepath.Join(dir, "projects", fmt.Sprintf("-home-dev-project%d", s%12))
		if err := os.MkdirAll(proj, 0o755); err != nil {
			return "", "", err
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", s, s)
		last = filepath.Join(proj, id+".jsonl")
		at := start.Add(time.Duration(s) * 90 * 24 * time.Hour / time.Duration(sessions))
		if err := writeSession(last, id, proj, at, sessionBytes, vocab, rand.New(rand.NewPCG(uint64(s), 3)), func() bool {
			msg++
			return planted[msg]
		}); err != nil {
			return "", "", err
		}
	}
	return vocab[0], last, nil
}

// writeSession writes (or, when the file exists, appends) about size
// bytes of turns; plant says whether the next message holds the rare word.
func writeSession(path, id, proj string, at time.Time, size int64, vocab []string, r *rand.Rand, plant func() bool) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	zipf := rand.NewZipf(r, 1.2, 2, uint64(len(vocab)-1))
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[zipf.Uint64()])
		}
		if plant() {
			b.WriteString(" " + selectiveWord)
		}
		return b.String()
	}
	cwd := "/home/dev/" + strings.TrimPrefix(filepath.Base(proj), "-home-dev-")
	written := int64(0)
	n := 0
	for written < size {
		n++
		turn := fmt.Sprintf("%s-%d-%d", id[:8], at.UnixNano(), n)
		// The fields every line of the CLI's carries.
		common := func() string {
			at = at.Add(7 * time.Second)
			return fmt.Sprintf(`"parentUuid":"p-%[1]s-%[2]d","isSidechain":false,"userType":"external","entrypoint":"cli","uuid":"u-%[1]s-%[2]d","timestamp":"%[3]s","cwd":"%[4]s","sessionId":"%[5]s","version":"2.1.332","gitBranch":"main"`,
				turn, r.Uint32(), at.Format("2006-01-02T15:04:05.000Z"), cwd, id)
		}
		output := text(1500)
		usage := func(out int) string {
			return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%[2]d,"ephemeral_1h_input_tokens":0}}`,
				r.IntN(3000), r.IntN(2000), r.IntN(150000), out)
		}
		lines := []string{
			fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"%s"},%s}`, text(200), common()),
			fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%s","model":"claude-sonnet-4-5-20250929","role":"assistant","type":"message","content":[{"type":"text","text":"%s"}],"stop_reason":null,"usage":%[3]s},"requestId":"req_%[1]s",%[4]s}`,
				turn, text(600), usage(1), common()),
			fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%s","model":"claude-sonnet-4-5-20250929","role":"assistant","type":"message","content":[{"type":"tool_use","id":"toolu_%[1]s","name":"Bash","input":{"command":"%[2]s"}}],"stop_reason":"tool_use","usage":%[3]s},"requestId":"req_%[1]s",%[4]s}`,
				turn, text(60), usage(100+r.IntN(800)), common()),
			// A Bash result: the output to the model, and again as the tool's result.
			fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%[1]s","content":"%[2]s","is_error":false}]},"toolUseResult":{"stdout":"%[2]s","stderr":"","interrupted":false,"isImage":false},%[3]s}`,
				turn, output, common()),
		}
		for _, l := range lines {
			w.WriteString(l)
			w.WriteByte('\n')
			written += int64(len(l) + 1)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// vocabulary makes n pronounceable words, the same every time.
func vocabulary(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	syll := []string{"ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "fa", "gu", "ho", "ji", "be", "zo", "wy"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// benchIndex runs the index measure on a corpus of mb MiB.
func (h *harness) benchIndex(mb int) error {
	scope := fmt.Sprintf("index %d MiB", mb)
	dir := filepath.Join(h.tmp, "index")
	claude := filepath.Join(dir, "claude")
	state := filepath.Join(dir, "state")
	defer os.RemoveAll(dir)
	progress("%s: writing the corpus", scope)
	size := int64(mb) << 20
	common, last, err := writeCorpus(claude, size)
	if err != nil {
		return err
	}
	source := dirSize(filepath.Join(claude, "projects"))
	h.childEnv = []string{"CLAUDE_CONFIG_DIR=" + claude, "XDG_STATE_HOME=" + state, "CODEX_HOME=" + filepath.Join(dir, "codex")}
	defer func() { h.childEnv = nil }()
	gb := float64(source) / (1 << 30)

	progress("%s: perch index", scope)
	var out bytes.Buffer
	el, rss, err := h.runTimed(h.loadTimeout, &out, h.perch, "index")
	if err != nil {
		return err
	}
	goal := time.Duration(gb * float64(60*time.Second))
	h.add(row{scope: scope, name: "first index: perch index", value: fmtDur(el), base: fmtMB(source) + " of session files",
		cmp: fmt.Sprintf("%.0f MB/s", float64(source)/1e6/el.Seconds()), goal: "≤ 60 s/GB (" + fmtDur(goal) + ")", verdict: verdict(el <= goal)})
	h.add(row{scope: scope, name: "first index: CPU (user + system)", value: fmtDur(h.lastCPU), base: fmtDur(el) + " wall",
		cmp: fmt.Sprintf("%.0f MB/s of CPU", float64(source)/1e6/h.lastCPU.Seconds())})
	h.add(row{scope: scope, name: "first index: peak RSS", value: fmtMB(rss)})
	ixBytes := dirSize(filepath.Join(state, "perch"))
	h.add(row{scope: scope, name: "index size", value: fmtMB(ixBytes), base: fmtMB(source) + " of session files",
		cmp: fmt.Sprintf("%.2f×", float64(ixBytes)/float64(source)), goal: "≤ 0.5×", verdict: verdict(float64(ixBytes) <= 0.5*float64(source))})
	messages := "?"
	if m := heldMessages.FindStringSubmatch(out.String()); m != nil {
		messages = m[1] + " messages"
	}

	progress("%s: append %d MiB to one file", scope, appendBytes>>20)
	id := strings.TrimSuffix(filepath.Base(last), ".jsonl")
	if err := writeSession(last, id, filepath.Dir(last), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), appendBytes, vocabulary(4096),
		rand.New(rand.NewPCG(99, 3)), func() bool { return false }); err != nil {
		return err
	}
	out.Reset()
	el, _, err = h.runTimed(h.loadTimeout, &out, h.perch, "index")
	if err != nil {
		return err
	}
	appendCPU := h.lastCPU
	read := "?"
	if f := strings.Fields(out.String()); len(f) > 3 {
		read = f[1] + " " + f[2]
	}
	h.add(row{scope: scope, name: fmt.Sprintf("+%d MiB appended: perch index", appendBytes>>20), value: fmtDur(el), base: "read " + read,
		goal: "≤ 2 s", verdict: verdict(el <= 2*time.Second)})
	h.add(row{scope: scope, name: fmt.Sprintf("+%d MiB appended: CPU (user + system)", appendBytes>>20), value: fmtDur(appendCPU)})

	searches := []struct {
		name, word string
		goal       time.Duration
	}{
		{"search a rare word (" + fmt.Sprint(selectiveHits) + " hits)", selectiveWord, 100 * time.Millisecond},
		{"search the commonest word, newest 50", common, 300 * time.Millisecond},
	}
	for _, s := range searches {
		// Each search is a new process, its figures medians of -runs.
		var els []time.Duration
		var peak int64
		for i := range h.runs {
			progress("%s: %s %d/%d", scope, s.name, i+1, h.runs)
			out.Reset()
			el, rss, err := h.runTimed(h.loadTimeout, &out, h.perch, "search", s.word, "--limit", "50")
			if err != nil {
				return err
			}
			if n := strings.Count(out.String(), "\n"); n == 0 {
				return fmt.Errorf("perch search %s: no hits", s.word)
			}
			els, peak = append(els, el), max(peak, rss)
		}
		el := median(els)
		h.add(row{scope: scope, name: s.name, value: fmtDur(el), base: messages, goal: "≤ " + fmtDur(s.goal), verdict: verdict(el <= s.goal)})
		if s.word == selectiveWord {
			h.add(row{scope: scope, name: s.name + ": peak RSS", value: fmtMB(peak), goal: "≤ 60 MB", verdict: verdict(peak <= 60<<20)})
		}
	}
	var els []time.Duration
	for i := range h.runs {
		progress("%s: perch usage %d/%d", scope, i+1, h.runs)
		out.Reset()
		el, _, err := h.runTimed(h.loadTimeout, &out, h.perch, "usage", "--by", "day")
		if err != nil {
			return err
		}
		els = append(els, el)
	}
	el = median(els)
	ugoal := time.Duration(float64(time.Second) * gb / 3)
	h.add(row{scope: scope, name: "perch usage --by day", value: fmtDur(el), base: fmtMB(source) + " indexed",
		goal: "≤ 1 s per 3 GB (" + fmtDur(ugoal) + ")", verdict: verdict(el <= ugoal)})
	return nil
}

// heldMessages reads the message count of perch index's last line.
var heldMessages = regexp.MustCompile(`the index holds .*?, (\d+) message\(s\)`)

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
