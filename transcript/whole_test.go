package transcript

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
)

// oddText is n bytes of everything encoding/json escapes or rewrites:
// quotes, backslashes, controls, HTML characters (not escaped here), U+2028
// and U+2029, invalid UTF-8, and runes of every length, so that the pieces
// a large text is written in are cut at every kind of place.
func oddText(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	parts := []string{"a", "bc", " ", "\n", "\t", "\"", "\\", "<", ">", "&", "\x00", "\x1f", "\x7f",
		"\u2028", "\u2029", "é", "中", "😀", "\xff", "\xe4\xb8", "\xed\xa0\x80", "\x80"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(parts[r.Intn(len(parts))])
	}
	return b.String()
}

// timelineWith is a run whose user text, tool output and queued message
// are the given texts.
func timelineWith(t *testing.T, user, output, queued string) *events.Timeline {
	t.Helper()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tl := events.NewTimeline()
	for _, data := range []string{
		`{"id":"1","desc":{"msg":"PreConversation"}}`,
		`{"id":"2","desc":{"msg":"UserMessage","content":` + q(user) + `}}`,
		`{"id":"3","desc":{"msg":"AssistantMessage","content":"","tool_calls":[{"id":"c1","function":{"name":"execute_command","arguments":"{\"command\":\"cat x\"}"}}]}}`,
		`{"id":"4","desc":{"msg":"PostToolCall","tool_call":{"id":"c1","function":{"name":"execute_command","arguments":"{\"command\":\"cat x\"}"}},"name":"execute_command","result":` + q(output) + `,"text":` + q(output) + `}}`,
		`{"id":"5","desc":{"msg":"MessageQueued","message":{"id":"m1","role":"user","content":` + q(queued) + `}}}`,
	} {
		if ev := maria.Decode(events.Frame{Name: "maria", Data: []byte(data)}); ev.Kind == events.KindInvalid {
			t.Fatal(ev.Notice)
		} else {
			tl.Apply(ev)
		}
	}
	return tl
}

// TestLargeTextsStreamedAsEncodingJSON: texts written in pieces come out
// exactly as encoding/json writes them whole, in jsonl and json.
func TestLargeTextsStreamedAsEncodingJSON(t *testing.T) {
	for _, n := range []int{10, textPiece - 1, textPiece, 3*textPiece + 7, 1 << 20} {
		tl := timelineWith(t, oddText(n, 1), oddText(n, 2), oddText(n, 3))
		var got, want bytes.Buffer
		if err := WriteJSONL(&got, tl); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		for _, r := range Records(tl) {
			enc.Encode(r)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("jsonl, texts of %d bytes: differs from encoding/json", n)
		}
		got.Reset()
		want.Reset()
		if err := WriteJSON(&got, tl); err != nil {
			t.Fatal(err)
		}
		recs := Records(tl)
		enc = json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Items []Record `json:"items"`
			State Record   `json:"state"`
		}{recs[:len(recs)-1], recs[len(recs)-1]})
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("json, texts of %d bytes: differs from encoding/json", n)
		}
	}
}

// TestMarkdownFull: Markdown cuts a long tool output with a marker; the
// full form quotes it whole (sanitized).
func TestMarkdownFull(t *testing.T) {
	out := strings.Repeat("line of output \x1b[31mred\x1b[0m\n", 2000)
	tl := timelineWith(t, "hi", out, "later")
	var md, full bytes.Buffer
	if err := WriteMarkdown(&md, tl, "t"); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdownFull(&full, tl, "t"); err != nil {
		t.Fatal(err)
	}
	if md.Len() > 2*MaxMarkdownOutput || !strings.Contains(md.String(), "more bytes; --full shows everything") {
		t.Errorf("md: %d bytes, or no marker", md.Len())
	}
	whole := strings.TrimRight(sanitize.Text(out), "\n")
	if !strings.Contains(full.String(), whole) || strings.Contains(full.String(), "more bytes") {
		t.Errorf("md full: output not whole")
	}
}
