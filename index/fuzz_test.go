package index

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"
)

// FuzzLines: every system's billing reader takes any line without
// panicking, and no request the index makes of it counts below zero.
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		`{"type":"assistant","message":{"id":"m","model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2,"cache_creation":{"ephemeral_5m_input_tokens":3}}},"requestId":"r"}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":9},"last_token_usage":{"input_tokens":5,"cached_input_tokens":9}}}}`,
		`{"type":"turn_context","payload":{"model":"gpt-5"}}`,
		`{"type":"user","message":{"content":[{"tool_use_id":"t"}]}}`,
		`not json`, `{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	var readers []func([]byte) ingest.Billing
	for _, k := range registry.Default().Kinds() {
		if k.Billing != nil {
			readers = append(readers, k.Billing)
		}
	}
	if len(readers) == 0 {
		f.Fatal("no system reads billing from its lines")
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, read := range readers {
			b := read(line)
			if r := fromBilling(&b); r != nil && min(r.input, r.output, r.cacheRead, r.cache5m, r.cache1h) < 0 {
				t.Fatalf("request %+v of %q counts below zero", r, line)
			}
		}
	})
}

// FuzzQuery: whatever is typed becomes a query FTS5 reads as words only,
// and snippets of any text are one clean line.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{`flaky test`, `"go test" time*`, `NEAR(a b)`, `a:b -c`, `"unclosed`, "\x00\uE000x\uE001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ftsQuery(s)
		if err == nil && (!strings.HasPrefix(q, `"`) || strings.Count(q, `"`)%2 != 0) {
			t.Fatalf("ftsQuery(%q) = %q", s, q)
		}
		for _, p := range snippetParts(s) {
			if strings.ContainsAny(p.Text, "\x1b\r\n\x00") || !utf8.ValidString(p.Text) {
				t.Fatalf("snippet part %q of %q", p.Text, s)
			}
		}
	})
}

// FuzzChunk: texts and source bytes packed into a chunk read back as
// they were — each text at its place, the source bytes whole — and data
// that is no chunk is an error, never a panic.
func FuzzChunk(f *testing.F) {
	f.Add([]byte("heron\x00lapwing\x00"), []byte(`{"type":"user","message":"heron lapwing"}`+"\n"))
	f.Add([]byte{}, []byte{})
	f.Add([]byte("\x00\x00\xff"), bytes.Repeat([]byte("ab"), 5000))
	enc, err := newEncoder()
	if err != nil {
		f.Fatal(err)
	}
	defer enc.Close()
	f.Fuzz(func(t *testing.T, texts, raw []byte) {
		parts := bytes.Split(texts, []byte{0})
		src := slices.Concat(append(parts, raw)...)
		c := packChunk(enc, src, len(src)-len(raw))
		off := int64(0)
		for _, p := range parts {
			got, err := chunkText(c.data, off, int64(len(p)))
			if err != nil || got != string(p) {
				t.Fatalf("the text at %d: %q, %v; want %q", off, got, err, p)
			}
			off += int64(len(p))
		}
		var out bytes.Buffer
		if err := writeRaw(&out, c.data, c.texts); err != nil || !bytes.Equal(out.Bytes(), raw) {
			t.Fatalf("the source bytes: %d, %v; want %d", out.Len(), err, len(raw))
		}
		// Not a chunk: the source bytes read as one.
		if _, err := chunkText(raw, 0, 1); err == nil && len(raw) > 0 && !bytes.HasPrefix(raw, c.data[:4]) {
			t.Fatalf("%q read as a chunk", raw)
		}
	})
}
