package maria

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// poolMemory hands out pieces of one buffer, as internal/textmem does.
type poolMemory struct {
	buf    []byte
	handed int
}

func (p *poolMemory) Bytes(n int) []byte {
	if p.handed+n > len(p.buf) {
		return nil
	}
	p.handed += n
	return p.buf[p.handed-n : p.handed]
}

func (p *poolMemory) holds(s string) bool {
	return len(s) > 0 && inMemory(unsafe.String(unsafe.SliceData(p.buf), len(p.buf)), s)
}

// TestDecodeInSameEvents: DecodeIn with memory for texts decodes every
// recorded frame and large outputs of every dialect to the event Decode
// makes, and a tool's output lies in that memory.
func TestDecodeInSameEvents(t *testing.T) {
	frames := benchStreamFrames(t)
	for _, dialect := range []string{"head", "legacy", "docs"} {
		for _, tool := range []string{"read_file", "execute_command"} {
			f, _ := bigPost(dialect, tool, randomText(200<<10, 3))
			frames = append(frames, f)
		}
	}
	placed := 0
	for i, f := range frames {
		mem := &poolMemory{buf: make([]byte, 2*len(f.Data))}
		got, want := DecodeIn(f, mem), Decode(f)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("frame %d (%.80s): DecodeIn differs from Decode:\n%+v\n%+v", i, f.Data, got, want)
		}
		if got.Tool != nil && got.Tool.Result != nil && got.Tool.Result.Text != "" && strings.Contains(string(f.Data), `"msg":"PostToolCall"`) {
			if !mem.holds(got.Tool.Result.Text) {
				t.Errorf("frame %d: the tool's output is not in the memory handed in", i)
			}
			placed++
		}
	}
	if placed < 10 {
		t.Fatalf("only %d tool outputs were placed: the corpus lost its tool results", placed)
	}
	// No memory: the heap, as Decode.
	f, _ := bigPost("head", "read_file", randomText(1<<10, 4))
	if !reflect.DeepEqual(DecodeIn(f, noMemory{}), Decode(f)) {
		t.Error("DecodeIn with memory that hands out nothing differs from Decode")
	}
}

// noMemory hands out nothing.
type noMemory struct{}

func (noMemory) Bytes(int) []byte { return nil }
