package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cc writes Claude Code session-file lines, as the CLI writes them.
type cc struct {
	session, cwd string
	t            time.Time
	lines        []string
	n            int
}

func newCC(session string, t time.Time) *cc {
	return &cc{session: session, cwd: "/home/ana/shop", t: t}
}

func (c *cc) tick() string {
	c.t = c.t.Add(time.Second)
	return c.t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (c *cc) line(v map[string]any) {
	v["sessionId"], v["cwd"], v["timestamp"] = c.session, c.cwd, c.tick()
	if _, ok := v["uuid"]; !ok {
		c.n++
		v["uuid"] = fmt.Sprintf("%s-%d-u%d", c.session, c.t.UnixNano(), c.n)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	c.lines = append(c.lines, string(b))
}

func (c *cc) user(text string) {
	c.line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
}

// usage is one usage record: input, output, cache read, 5m and 1h writes.
type usage struct{ in, out, read, w5, w1 int64 }

func (u usage) record() map[string]any {
	return map[string]any{"input_tokens": u.in, "output_tokens": u.out, "cache_read_input_tokens": u.read,
		"cache_creation_input_tokens": u.w5 + u.w1,
		"cache_creation":              map[string]any{"ephemeral_5m_input_tokens": u.w5, "ephemeral_1h_input_tokens": u.w1}}
}

// reply writes one assistant line: a content block of message id, with
// the usage and stop reason ("" for a line written before the reply ended).
func (c *cc) reply(id, req, model, text string, u usage, stop string, extra map[string]any) {
	m := map[string]any{"id": id, "model": model, "role": "assistant", "type": "message",
		"content": []any{map[string]any{"type": "text", "text": text}}, "usage": u.record()}
	if stop != "" {
		m["stop_reason"] = stop
	} else {
		m["stop_reason"] = nil
	}
	v := map[string]any{"type": "assistant", "message": m, "requestId": req}
	for k, x := range extra {
		v[k] = x
	}
	c.line(v)
}

func (c *cc) text() string { return strings.Join(c.lines, "\n") + "\n" }

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func openTemp(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(context.Background(), filepath.Join(t.TempDir(), "state", FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func mustIndex(t testing.TB, ix *Index, path string) FileResult {
	t.Helper()
	r, err := ix.IndexFile(context.Background(), Source{Path: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func search(t testing.TB, ix *Index, q Query) []Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}
