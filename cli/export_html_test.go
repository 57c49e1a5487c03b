package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	"github.com/perch-tui/perch/transcript/redact"
	"github.com/perch-tui/perch/transcript/redact/redacttest"
)

// seededEnv is the Env of a user whose home directory and name the
// seeded corpus holds.
func seededEnv(env *Env) {
	env.Home = redacttest.Home
	env.Getenv = func(k string) string {
		if k == "USER" {
			return redacttest.User
		}
		return ""
	}
}

// hostileText tries to load a remote image, run a script and reorder
// text; the page must show it as text and request nothing.
const hostileText = `<img src="http://127.0.0.1:9/u.png"><script>fetch("http://127.0.0.1:9/x")</script> ` +
	"![pixel](http://127.0.0.1:9/pixel.png) <link rel=stylesheet href=http://127.0.0.1:9/s.css> \u202Eevil\u202C"

// seededFinal is the seeded session's last reply.
const seededFinal = "The login bug was a stale token cache; fixed and tested, quokka."

// writeSeededSession writes a Claude Code session file that carries every
// seeded credential in a tool call's arguments, its output and the
// model's reasoning, the home directory in the working directory and a
// path, and hostile text in the user's message and a reply.
func writeSeededSession(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	line := func(v map[string]any) {
		at = at.Add(5 * time.Second)
		v["timestamp"] = at.Format(time.RFC3339Nano)
		v["sessionId"] = "5e55a0b1-0000-4000-8000-000000000001"
		v["cwd"] = redacttest.Home + "/app"
		v["uuid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", b.Len())
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	usage := map[string]any{"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 100}
	assistant := func(id string, content ...map[string]any) {
		line(map[string]any{"type": "assistant", "message": map[string]any{"id": id, "role": "assistant", "model": "claude-test-1",
			"content": content, "usage": usage, "stop_reason": "end_turn", "type": "message"}})
	}
	line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": "Fix the login bug in " + redacttest.Home + "/app/login.go, please. " + hostileText}})
	for i, s := range redacttest.Secrets() {
		id := fmt.Sprintf("toolu_%02d", i)
		assistant(fmt.Sprintf("msg_%02d", i),
			map[string]any{"type": "thinking", "thinking": "Look at this: " + s.Text, "signature": "sig"},
			map[string]any{"type": "text", "text": "Checking the " + s.Name + " case."},
			map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "grep -r '" + s.Text + "' .", "description": s.Text}})
		line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []map[string]any{
			{"type": "tool_result", "tool_use_id": id, "content": "config.txt: " + s.Text + "\n" + strings.Repeat("more build output\n", 20), "is_error": i%3 == 0}}}})
	}
	assistant("msg_final", map[string]any{"type": "text", "text": hostileText + "\n\n" + seededFinal})
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportHTMLRedacted: perch import --format html takes every seeded
// credential out of a session file, from arguments, outputs, reasoning
// and paths, says on stderr what it took out by kind and count, and
// --no-redact keeps them (so the check can fail).
func TestImportHTMLRedacted(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() { waitHighlightClock(t) })
	dir := t.TempDir()
	src := filepath.Join(dir, "seeded.jsonl")
	writeSeededSession(t, src)
	out := filepath.Join(dir, "s.html")
	r := must(t, runEnv(context.Background(), t, seededEnv, "", "import", src, "--format", "html", "-o", out))
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range redacttest.Secrets() {
		if bytes.Contains(page, []byte(s.Secret)) {
			t.Errorf("%s left in the page", s.Name)
		}
		if strings.Contains(r.stderr, s.Secret) {
			t.Errorf("stderr holds %s", s.Name)
		}
	}
	for _, want := range []string{"perch: redacted ", "github-pat", "home-directory", "private-key"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout with -o: %q", r.stdout)
	}
	if !bytes.Contains(page, []byte(seededFinal)) || !bytes.Contains(page, []byte("<dd>claude-code</dd>")) {
		t.Error("the page lacks the final reply or the system")
	}
	if !bytes.Contains(page, []byte("perch took secrets out of this page: ")) || !bytes.Contains(page, []byte(" github-pat")) {
		t.Error("the page does not say what was taken out")
	}

	// md, json and jsonl redact when asked.
	for _, format := range []string{"md", "json", "jsonl"} {
		r := must(t, runEnv(context.Background(), t, seededEnv, "", "import", src, "--format", format, "--redact"))
		for _, s := range redacttest.Secrets() {
			if strings.Contains(r.stdout, s.Secret) {
				t.Errorf("--format %s --redact: %s left", format, s.Name)
			}
		}
		if format == "jsonl" {
			for l := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
				if !json.Valid([]byte(l)) {
					t.Errorf("--format jsonl --redact: a line is no longer JSON: %.200s", l)
				}
			}
		}
	}
	// Without --redact, md is as it was; --no-redact keeps html whole.
	if r := must(t, runEnv(context.Background(), t, seededEnv, "", "import", src, "--format", "md")); !strings.Contains(r.stdout, redacttest.Secrets()[1].Secret) || strings.Contains(r.stderr, "redact") {
		t.Error("md without --redact changed")
	}
	r = must(t, runEnv(context.Background(), t, seededEnv, "", "import", src, "--format", "html", "--no-redact"))
	if !strings.Contains(r.stdout, redacttest.Secrets()[1].Secret) {
		t.Error("--no-redact took the token out")
	}
	if r := run(t, "", "import", src, "--format", "html", "--redact", "--no-redact"); r.code == 0 {
		t.Error("--redact --no-redact was accepted")
	}
}

// TestImportHTMLEmails: e-mail addresses go only with --redact-emails.
func TestImportHTMLEmails(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() { waitHighlightClock(t) })
	src := filepath.Join(t.TempDir(), "mail.jsonl")
	if err := os.WriteFile(src, []byte(`{"type":"user","message":{"role":"user","content":"write to jane.doe@example.org"},"uuid":"u1","timestamp":"2026-03-01T09:00:00Z","sessionId":"s"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := must(t, run(t, "", "import", src, "--format", "html")); !strings.Contains(r.stdout, "jane.doe@example.org") {
		t.Error("an address went without --redact-emails")
	}
	r := must(t, run(t, "", "import", src, "--format", "html", "--redact-emails"))
	if strings.Contains(r.stdout, "jane.doe") || !strings.Contains(r.stdout, redact.Marker(redact.KindEmail)) || !strings.Contains(r.stderr, "1 email") {
		t.Errorf("--redact-emails: stderr %q", r.stderr)
	}
}

// TestExportHTMLDemo: perch export --format html -o writes the demo task
// of the fake daemon as a page with its tools, diff, todos and failed
// command, heading included.
func TestExportHTMLDemo(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", fastSpeed)
	id, err := d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s.html")
	t.Cleanup(func() { waitHighlightClock(t) })
	must(t, run(t, "", "export", id, "--url", base, "--format", "html", "--until-idle", "-o", out))
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<dd>maria</dd>", "<dt>Model</dt>", "<dt>Tokens</dt>", `class="i t fail"`, `<pre class="diff">`, `<ul class="todos">`, `<pre class="chroma">`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the demo's page lacks %q", want)
		}
	}
}

// TestExportHTMLLongSize: a 10,000-event session's page is at most 1.5
// times its jsonl export.
func TestExportHTMLLongSize(t *testing.T) {
	// Not parallel: a 10,000-event export would slow the timing-sensitive
	// tests that run in parallel.
	t.Cleanup(func() { waitHighlightClock(t) })
	info, base := longSessionDaemon(t, 7, fakedaemon.LongSession{Events: 10000, Seed: 3})
	dir := t.TempDir()
	page, jsonl := filepath.Join(dir, "long.html"), filepath.Join(dir, "long.jsonl")
	must(t, run(t, "", "export", info.TaskID, "--url", base, "--format", "html", "-o", page))
	must(t, run(t, "", "export", info.TaskID, "--url", base, "--format", "jsonl", "-o", jsonl))
	ph, pj := fileSize(t, page), fileSize(t, jsonl)
	t.Logf("10,000 events: html %d bytes, jsonl %d bytes (%.2f×)", ph, pj, float64(ph)/float64(pj))
	if float64(ph) > 1.5*float64(pj) {
		t.Errorf("html %d bytes > 1.5 × jsonl %d bytes", ph, pj)
	}
}

// waitHighlightClock waits for the clock goroutine that chroma's regexp2
// lexers start to stop (a second after the last match anywhere), which
// goleak's check at the end of the package would otherwise see when this
// test ends last. Tests running beside it may keep the clock going: it
// then gives up quietly, and whichever highlights last is waited for.
func waitHighlightClock(t *testing.T) {
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 1<<20)
	for time.Now().Before(deadline) {
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("regexp2.runClock")) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Log("regexp2's clock goroutine still runs (other tests highlight code)")
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
