package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
)

// chunkSource returns its chunks one Read at a time, then end.
type chunkSource struct {
	chunks [][]byte
	end    error
	closed bool
}

func (s *chunkSource) Read(p []byte) (int, error) {
	for len(s.chunks) > 0 && len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	if len(s.chunks) == 0 {
		return 0, s.end
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	return n, nil
}

func (s *chunkSource) Close() error { s.closed = true; return nil }

// drain reads r to the end with reads of size psize, returning everything
// read, each Read's bytes, and the terminating error.
func drain(t *testing.T, r io.Reader, psize int) ([]byte, [][]byte, error) {
	t.Helper()
	var all []byte
	var reads [][]byte
	p := make([]byte, psize)
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("reader never ends")
		}
		n, err := r.Read(p)
		if n > 0 {
			all = append(all, p[:n]...)
			reads = append(reads, append([]byte(nil), p[:n]...))
		}
		if err != nil {
			return all, reads, err
		}
	}
}

// splits yields the input cut at every pair of positions (two cuts, three
// chunks, some possibly empty), so every byte boundary is a read boundary
// in some run, including pairs like CR|LF and LF|LF.
func splits(in string) [][][]byte {
	var out [][][]byte
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			out = append(out, [][]byte{[]byte(in[:i]), []byte(in[i:j]), []byte(in[j:])})
		}
	}
	return out
}

func TestEventReaderTable(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		in   string
		end  error  // what the source returns after its data
		want string // bytes released
		err  error  // final error
	}{
		{"one event", "event: maria\ndata: {}\n\n", io.EOF, "event: maria\ndata: {}\n\n", io.EOF},
		{"two events", "data: a\n\ndata: b\n\n", io.EOF, "data: a\n\ndata: b\n\n", io.EOF},
		{"truncated tail", "data: a\n\nevent: maria\ndata: {\"partial\":tr", io.EOF, "data: a\n\n", io.ErrUnexpectedEOF},
		{"tail with one newline", "data: a\n\ndata: b\n", io.EOF, "data: a\n\n", io.ErrUnexpectedEOF},
		{"only a partial line", "data: {", io.EOF, "", io.ErrUnexpectedEOF},
		{"empty", "", io.EOF, "", io.EOF},
		{"blank lines only", "\n\r\n\r", io.EOF, "", io.EOF},
		{"extra blank lines after", "data: a\n\n\n\n", io.EOF, "data: a\n\n", io.EOF},
		{"leading blank lines", "\n\ndata: a\n\n", io.EOF, "\n\ndata: a\n\n", io.EOF},
		{"crlf", "event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", io.EOF, "event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", io.EOF},
		{"crlf truncated", "data: a\r\n\r\ndata: b\r\n", io.EOF, "data: a\r\n\r\n", io.ErrUnexpectedEOF},
		{"cr only", "data: a\r\rdata: b\r\r", io.EOF, "data: a\r\rdata: b\r\r", io.EOF},
		{"cr only truncated", "data: a\r\rdata: b\r", io.EOF, "data: a\r\r", io.ErrUnexpectedEOF},
		{"mixed endings", "data: a\r\n\ndata: b\n\r\ndata: c\r\r\ndata: d\n\r", io.EOF, "data: a\r\n\ndata: b\n\r\ndata: c\r\r\ndata: d\n\r", io.EOF},
		{"lf then lone cr is blank", "data: a\n\rdata: b", io.EOF, "data: a\n\r", io.ErrUnexpectedEOF},
		{"comment event", ": ping\n\ndata: x\n\n", io.EOF, ": ping\n\ndata: x\n\n", io.EOF},
		{"ends with crlf cr", "data: a\r\n\r", io.EOF, "data: a\r\n\r", io.EOF},
		{"abort keeps complete events", "data: a\n\ndata: b", boom, "data: a\n\n", boom},
		{"abort at boundary", "data: a\n\n", boom, "data: a\n\n", boom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunks := range splits(tc.in) {
				for _, psize := range []int{1, 3, 64 << 10} {
					cp := make([][]byte, len(chunks))
					copy(cp, chunks) // chunkSource consumes its slices
					src := &chunkSource{chunks: cp, end: tc.end}
					got, _, err := drain(t, newEventReader(src, 1<<20, nil), psize)
					if !errors.Is(err, tc.err) {
						t.Fatalf("chunks %q p=%d: err = %v, want %v", chunks, psize, err, tc.err)
					}
					// A CR that closes an event may be released before the
					// LF after it arrives; that LF then leads the next event
					// or, at the very end, is dropped. Either is harmless.
					if string(got) != tc.want && !(strings.HasSuffix(tc.want, "\r\n") && string(got) == strings.TrimSuffix(tc.want, "\n")) {
						t.Fatalf("chunks %q p=%d: got %q, want %q", chunks, psize, got, tc.want)
					}
				}
			}
		})
	}
}

// refComplete is a whole-input reference: the prefix of in made of
// complete events, and whether an unfinished event follows.
func refComplete(in string) (string, bool) {
	end, content, lineEmpty := 0, false, true
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case '\r', '\n':
			stop := i + 1
			if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
				stop, i = i+2, i+1
			}
			if lineEmpty && content {
				end, content = stop, false
			}
			lineEmpty = true
		default:
			lineEmpty, content = false, true
		}
	}
	return in[:end], content
}

func TestEventReaderRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	parts := []string{"a", "data: x", "\n", "\r", "\r\n", "\n\n", "event: maria"}
	for iter := 0; iter < 3000; iter++ {
		var b strings.Builder
		for n := rng.Intn(12); n >= 0; n-- {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		in := b.String()
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			k := 1 + rng.Intn(len(rest))
			chunks = append(chunks, []byte(rest[:k]))
			rest = rest[k:]
		}
		want, pending := refComplete(in)
		wantErr := io.EOF
		if pending {
			wantErr = io.ErrUnexpectedEOF
		}
		got, _, err := drain(t, newEventReader(&chunkSource{chunks: chunks, end: io.EOF}, 1<<20, nil), 1+rng.Intn(8))
		if err != wantErr {
			t.Fatalf("%q in %q: err %v, want %v", in, chunks, err, wantErr)
		}
		if string(got) != want && !(strings.HasSuffix(want, "\r\n") && string(got) == want[:len(want)-1]) {
			t.Fatalf("%q in %q: got %q, want %q", in, chunks, got, want)
		}
	}
}

// Each Read hands out at most one event, so r3labs' scanner never holds
// (and rescans) a pile of events.
func TestEventReaderOneEventPerRead(t *testing.T) {
	in := "data: a\n\nevent: x\ndata: bb\n\n: c\n\ndata: d"
	got, reads, err := drain(t, newEventReader(&chunkSource{chunks: [][]byte{[]byte(in)}, end: io.EOF}, 1<<20, nil), 1<<16)
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("err = %v", err)
	}
	want := []string{"data: a\n\n", "event: x\ndata: bb\n\n", ": c\n\n"}
	if len(reads) != len(want) {
		t.Fatalf("reads = %q, want %q", reads, want)
	}
	for i := range want {
		if string(reads[i]) != want[i] {
			t.Errorf("read %d = %q, want %q", i, reads[i], want[i])
		}
	}
	if string(got) != strings.Join(want, "") {
		t.Errorf("got %q", got)
	}
}

func TestEventReaderLargeEventLinear(t *testing.T) {
	// readEvent reads one event of size bytes, delivered in network-sized
	// pieces as a socket would, and says how long it took.
	readEvent := func(size int) time.Duration {
		ev := make([]byte, 0, size+32)
		ev = append(ev, "event: maria\ndata: "...)
		ev = append(ev, bytes.Repeat([]byte("x"), size)...)
		ev = append(ev, "\n\n"...)
		var chunks [][]byte
		for rest := ev; len(rest) > 0; {
			k := min(len(rest), 16<<10)
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		src := &chunkSource{chunks: chunks, end: io.EOF}
		r := newEventReader(src, MaxEventBytes, nil)
		start := time.Now()
		got, _, err := drain(t, r, 1<<20)
		d := time.Since(start)
		if err != io.EOF || !bytes.Equal(got, ev) {
			t.Fatalf("err = %v, %d bytes (want %d)", err, len(got), len(ev))
		}
		if err := r.Close(); err != nil || !src.closed {
			t.Errorf("Close did not reach the body")
		}
		return d
	}
	// 16 times the bytes: linear scanning takes about 16 times as long,
	// quadratic 256 times. Each size's fastest of three reads, taken in
	// the same moment, so a loaded machine's pauses drop out.
	fastest := func(size int) time.Duration {
		d := readEvent(size)
		for range 2 {
			d = min(d, readEvent(size))
		}
		return d
	}
	small, big := fastest(1<<20), fastest(16<<20)
	if ratio := float64(big) / float64(max(small, time.Millisecond)); ratio > 80 {
		t.Errorf("a 16 MiB event took %v, %.0f times a 1 MiB one (%v); scanning is not linear", big, ratio, small)
	}
}

func TestEventReaderTooLarge(t *testing.T) {
	src := &chunkSource{chunks: [][]byte{[]byte("data: "), bytes.Repeat([]byte("y"), 3<<20)}, end: io.EOF}
	_, _, err := drain(t, newEventReader(src, 1<<20, nil), 4096)
	if err == nil || !errors.Is(err, errEventTooLarge) || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// TestCarve: the frames of a run come out with their data, each with a cap
// that ends at its end (an append to one cannot overwrite the next); only
// data that lay in the read buffer (single) is copied.
func TestCarve(t *testing.T) {
	var ps []parsedEvent
	size := 0
	for i := range 6 {
		d := bytes.Repeat([]byte{'a' + byte(i)}, 100)
		single := i%2 == 0
		if single {
			size += len(d)
		}
		ps = append(ps, parsedEvent{events.Frame{Name: "maria", Data: d}, single})
	}
	fs := carve(ps, size)
	for i, f := range fs {
		if want := string(ps[i].f.Data); string(f.Data) != want || cap(f.Data) != len(f.Data) {
			t.Errorf("frame %d: %d bytes cap %d, want %d of %q", i, len(f.Data), cap(f.Data), len(want), want[:1])
		}
		if copied := &f.Data[0] != &ps[i].f.Data[0]; copied != ps[i].single {
			t.Errorf("frame %d: copied %v, single %v", i, copied, ps[i].single)
		}
	}
}
