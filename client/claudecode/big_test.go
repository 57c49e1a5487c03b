package claudecode_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestBigOutput: a multi-megabyte tool output and a long run of streamed
// deltas import whole.
func TestBigOutput(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	output := strings.Repeat("0123456789abcdef\n", 200000) // 3.4 MB
	out, _ := json.Marshal(output)
	fmt.Fprintln(w, `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat big"}}]},"session_id":"s"}`)
	fmt.Fprintf(w, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":%s}]},"session_id":"s"}`+"\n", out)
	fmt.Fprintln(w, `{"type":"stream_event","event":{"type":"message_start","message":{"id":"m2"}}}`)
	const chunks = 50000
	for i := 0; i < chunks; i++ {
		fmt.Fprintln(w, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}}`)
	}
	fmt.Fprintln(w, `{"type":"stream_event","event":{"type":"message_stop"}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err := registry.Run(context.Background(), path, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := res.Timeline.Items()
	if len(items) != 3 || items[1].Kind != events.ItemTool || items[1].Tool.Result.Text != output {
		t.Fatalf("%d items; the tool output is not whole", len(items))
	}
	if items[2].Text != strings.Repeat("word ", chunks) {
		t.Errorf("streamed text of %d bytes", len(items[2].Text))
	}
}
