package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/perch-tui/perch/internal/pricing"
	"github.com/perch-tui/perch/internal/tally"
)

// FuzzLocalFiles: a transcript's bytes cut anywhere into two writes give
// the tail the same whole lines as one write; a head or registry file of
// any content never panics listing.
func FuzzLocalFiles(f *testing.F) {
	if b, err := os.ReadFile("testdata/real/live.record.jsonl"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			var op recOp
			if json.Unmarshal(line, &op) == nil {
				f.Add([]byte(op.Data), uint(len(op.Data)/2))
			}
		}
	}
	f.Add([]byte("a\n\nb\nc"), uint(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		cut %= uint(len(data) + 1)
		var one, two tail
		var r1, r2 tailRead
		one.feed(data, &r1)
		two.feed(data[:cut], &r2)
		two.feed(data[cut:], &r2)
		if len(r1.lines) != len(r2.lines) {
			t.Fatalf("%d lines in one write, %d in two", len(r1.lines), len(r2.lines))
		}
		for i := range r1.lines {
			if !bytes.Equal(r1.lines[i], r2.lines[i]) {
				t.Fatalf("line %d differs", i)
			}
		}
		if !bytes.Equal(one.partial, two.partial) {
			t.Fatal("the half line differs")
		}
		var h headInfo
		for _, line := range bytes.Split(data, []byte("\n")) {
			headLine(&h, line)
		}
		var e tally.Entry
		for _, line := range bytes.Split(data, []byte("\n")) {
			countLine(&e, line)
		}
		if e.Split().Total() != e.Tokens() || e.Tokens() < 0 {
			t.Fatalf("the split counts %d tokens, the entry %d", e.Split().Total(), e.Tokens())
		}
		if c, ok := pricing.DefaultPrices().SplitCost(e.Split()); ok && !(c >= 0) {
			t.Fatalf("cost %v", c)
		}
		var r registryFile
		if json.Unmarshal(data, &r) == nil {
			statusOf(r)
		}
	})
}
