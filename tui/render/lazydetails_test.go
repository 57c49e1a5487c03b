package render

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/perch-tui/perch/client/maria"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
)

// TestDetailsReadFromTextDrawTheSame: a HEAD list_files or search_files
// result keeps only its text (its entries and hits are read when drawn);
// it draws byte for byte what the same result with its details kept
// draws, collapsed and expanded, at several widths.
func TestDetailsReadFromTextDrawTheSame(t *testing.T) {
	cases := []struct{ name, args, text string }{
		{"list_files", `"{\"path\": \".\"}"`, "Directory: .\nTotal: 4 items (2 files, 2 directories)\n\n📄 README.md\n📁 src\n📁 .git [hidden]\n📄 go.mod"},
		{"search_files", `"{\"regex\": \"foo\"}"`, "Search completed. Found 3 matches.\n\nsrc/a.go:12\n11: x\n12: foo\n13: y\n\nsrc/b.go:3\n3: foo\n\nsrc/c.go:40\n39: \tif foo {\n40: \t\tfoo()\n"},
	}
	for _, c := range cases {
		b, _ := json.Marshal(c.text)
		ev := maria.Decode(events.Frame{Name: "maria", Data: []byte(`{"id":"e1","created":1774598400000,"desc":{"msg":"PostToolCall","tool_call":{"id":"c","function":{"name":"` +
			c.name + `","arguments":` + c.args + `},"type":"function"},"name":"` + c.name + `","result":` + string(b) + `,"text":` + string(b) + `}}`)})
		if ev.Tool == nil || ev.Tool.Result == nil {
			t.Fatalf("%s: no result decoded: %+v", c.name, ev)
		}
		lazy := ev.Tool.Result
		if lazy.Listing != nil || lazy.Search != nil {
			t.Fatalf("%s: the decoder kept the details it can read from the text", c.name)
		}
		kept := *lazy
		kept.Listing, kept.Search = lazy.FileListing(), lazy.SearchResult()
		if kept.Listing == nil && kept.Search == nil {
			t.Fatalf("%s: nothing read from the text", c.name)
		}
		item := func(r *events.ToolResult) *events.Item {
			it := toolItem(c.name, nil, events.ToolOK, r)
			it.Tool.Call = ev.Tool.Call
			return it
		}
		for _, w := range []int{30, 80, 120} {
			for _, exp := range []bool{false, true} {
				o := Options{Width: w, Expanded: exp}
				got := newTestRenderer(styles.Dark).Item(item(lazy), o)
				want := newTestRenderer(styles.Dark).Item(item(&kept), o)
				if !slices.Equal(got, want) {
					t.Errorf("%s at %d, expanded %v:\n got %q\nwant %q", c.name, w, exp, got, want)
				}
			}
		}
	}
}
