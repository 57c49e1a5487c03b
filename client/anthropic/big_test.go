package anthropic_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// TestBigStream: a recording of many megabytes in small deltas imports
// byte-exact and fast (no quadratic building), and so does a request with
// a multi-megabyte tool output.
func TestBigStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const chunks, size = 30000, 100 // 3 MB of text
	chunk := strings.Repeat("x", size-1) + "\n"

	sse := filepath.Join(dir, "big.sse")
	f, err := os.Create(sse)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n")
	fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	delta, _ := json.Marshal(chunk)
	for i := 0; i < chunks; i++ {
		fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", delta)
	}
	fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	output := strings.Repeat("line of tool output\n", 150000) // 3 MB
	out, _ := json.Marshal(output)
	reqPath := filepath.Join(dir, "big.json")
	body := `{"model":"claude-x","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":` + string(out) + `}]}]}`
	if err := os.WriteFile(reqPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	res, err := registry.Run(context.Background(), sse, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := res.Timeline.Items()
	if len(items) != 1 || items[0].Text != strings.Repeat(chunk, chunks) {
		t.Fatalf("stream: %d items, text of %d bytes", len(items), len(items[0].Text))
	}
	res, err = registry.Run(context.Background(), reqPath, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tool *events.Item
	for _, it := range res.Timeline.Items() {
		if it.Kind == events.ItemTool {
			tool = it
		}
	}
	if tool == nil || tool.Tool.Result == nil || tool.Tool.Result.Text != output {
		t.Fatal("request: the tool output is not whole")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("importing 6 MB took %s", d)
	}
}
