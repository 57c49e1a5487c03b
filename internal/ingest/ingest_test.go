package ingest

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRepair(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"a":NaN}`, `{"a":null}`},
		{`{"a":Infinity,"b":-Infinity}`, `{"a":null,"b":null}`},
		{`[NaN,-1,-Infinity, 2]`, `[null,-1,null, 2]`},
		{`{"s":"NaN and Infinity stay in strings","t":"\"NaN\""}`, `{"s":"NaN and Infinity stay in strings","t":"\"NaN\""}`},
		{`{"s":"esc \\","n":NaN}`, `{"s":"esc \\","n":null}`},
		{`{"neg":-5,"x":-0.5e3}`, `{"neg":-5,"x":-0.5e3}`},
		{`{"partial":Na}`, `{"partial":Na}`}, // not a token: left for the JSON parser to reject
		{`Infin`, `Infin`},
	}
	for _, c := range cases {
		if got := string(Repair([]byte(c.in))); got != c.want {
			t.Errorf("Repair(%s) = %s, want %s", c.in, got, c.want)
		}
		// The streaming form agrees, whatever the read sizes.
		got, err := io.ReadAll(NewRepairReader(iotest.OneByteReader(strings.NewReader(c.in))))
		if err != nil || string(got) != c.want {
			t.Errorf("RepairReader(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if in := []byte(`{"plain":true}`); &Repair(in)[0] != &in[0] {
		t.Error("input without tokens was copied")
	}
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSniffShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		shape         Shape
		records       int
		field         string
	}{
		{"sse", "event: maria\ndata: {\"a\":1}\n\nevent: maria\ndata: {\"b\":2}\n\n", ShapeSSE, 2, ""},
		{"sse-comment-first", ": hello\r\ndata: {\"a\":1}\r\n\r\n", ShapeSSE, 1, ""},
		{"jsonl", "{\"a\":1}\n{\"b\":NaN}\n\n{\"c\":3}\n", ShapeJSONL, 3, ""},
		{"jsonl-bom-crlf", "\xef\xbb\xbf{\"a\":1}\r\n{\"b\":2}\r\n", ShapeJSONL, 2, ""},
		{"array", "[{\"a\":1},{\"b\":2}]", ShapeJSON, 2, ""},
		{"one-line-doc", "{\"messages\":[{\"a\":1},{\"b\":2}],\"x\":1}\n", ShapeJSON, 2, "messages"},
		{"pretty-doc", "{\n  \"meta\": {\"k\": [1]},\n  \"messages\": [\n    {\"a\": 1}\n  ]\n}\n", ShapeJSON, 1, "messages"},
		{"text", "hello world\n", ShapeUnknown, 0, ""},
		{"empty", "", ShapeUnknown, 0, ""},
		{"sqlite", "SQLite format 3\x00rest", ShapeSQLite, 0, ""},
	}
	for _, c := range cases {
		s, err := Sniff(write(t, c.name, c.content))
		if err != nil {
			t.Fatal(err)
		}
		if s.Shape != c.shape || len(s.Records) != c.records || s.Field != c.field {
			t.Errorf("%s: shape %v records %d field %q; want %v %d %q", c.name, s.Shape, len(s.Records), s.Field, c.shape, c.records, c.field)
		}
	}
}

func TestSniffTruncatedHead(t *testing.T) {
	t.Parallel()
	// A document larger than the head still gives its first records.
	var b bytes.Buffer
	b.WriteString(`{"messages":[`)
	for i := 0; b.Len() < HeadSize+1000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"user","content":"` + strings.Repeat("x", 500) + `"}`)
	}
	b.WriteString(`]}`)
	s, err := Sniff(write(t, "big.json", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s.Shape != ShapeJSON || len(s.Records) != sampleRecords || s.Field != "messages" {
		t.Fatalf("shape %v records %d field %q", s.Shape, len(s.Records), s.Field)
	}
}

func TestEachLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 3<<20)
	p := write(t, "x.jsonl", "\xef\xbb\xbf{\"a\":1}\r\n\n{\"long\":\""+long+"\"}\n{\"n\":NaN}")
	var got []string
	var lines []int
	err := EachLine(p, func(line int, raw []byte) error {
		lines = append(lines, line)
		if len(raw) > 100 {
			raw = raw[:10]
		}
		got = append(got, string(raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}`, `{"long":"y`, `{"n":null}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
	if lines[0] != 1 || lines[1] != 3 || lines[2] != 4 {
		t.Fatalf("line numbers %v", lines)
	}
}

func TestEachElement(t *testing.T) {
	t.Parallel()
	p := write(t, "doc.json", "\xef\xbb\xbf{\"before\":{\"k\":1},\"messages\":[{\"a\":NaN},{\"b\":2}],\"after\":\"x\"}")
	var got []string
	top, err := EachElement(p, "messages", func(i int, raw json.RawMessage) error {
		got = append(got, string(raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != `{"a":null}|{"b":2}` {
		t.Fatalf("elements %q", got)
	}
	if string(top["before"]) != `{"k":1}` || string(top["after"]) != `"x"` {
		t.Fatalf("top %v", top)
	}
	p = write(t, "arr.json", `[1,{"x":[1,2]},"s"]`)
	got = nil
	if _, err := EachElement(p, "", func(i int, raw json.RawMessage) error {
		got = append(got, string(raw))
		return nil
	}); err != nil || len(got) != 3 {
		t.Fatalf("array: %q %v", got, err)
	}
	p = write(t, "bad.json", `[{"a":1},{"b":`)
	n := 0
	_, err = EachElement(p, "", func(int, json.RawMessage) error { n++; return nil })
	if err == nil || n != 1 {
		t.Fatalf("truncated array: %d elements, err %v", n, err)
	}
}

// referenceRepair is Repair as first written: a byte-by-byte state machine,
// kept to check the faster one against.
func referenceRepair(in []byte) []byte {
	var out []byte
	inString, escaped := false, false
	var pending []byte
	for i := 0; i < len(in); {
		c := in[i]
		if len(pending) > 0 {
			pending = append(pending, c)
			switch matchToken(pending) {
			case tokenFull:
				out = append(out, "null"...)
				pending = pending[:0]
				i++
			case tokenPrefix:
				i++
			default:
				out = append(out, pending[:len(pending)-1]...)
				pending = pending[:0]
			}
			continue
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == 'N' || c == 'I' || c == '-':
			pending = append(pending, c)
			i++
			continue
		}
		out = append(out, c)
		i++
	}
	return append(out, pending...)
}

func FuzzRepair(f *testing.F) {
	for _, s := range []string{`{"a":NaN}`, `[-Infinity,"NaN\\"",Infinity]`, `"\\`, `-`, `NaNaN`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a := Repair(in)
		b, err := io.ReadAll(NewRepairReader(iotest.HalfReader(bytes.NewReader(in))))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("Repair and RepairReader disagree on %q: %q vs %q", in, a, b)
		}
		if want := referenceRepair(in); !bytes.Equal(a, want) {
			t.Fatalf("Repair(%q) = %q, the reference gives %q", in, a, want)
		}
		if json.Valid(in) && !bytes.Equal(a, in) {
			t.Fatalf("valid JSON changed: %q -> %q", in, a)
		}
	})
}

func FuzzSniff(f *testing.F) {
	for _, s := range []string{"data: {}\n\n", "{\"a\":1}\n{}\n", `{"m":[{"a":1}]}`, "[1,2", "SQLite format 3\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = SniffBytes("x", in, true)
	})
}

// FuzzEachElement: the fast document reader delivers what encoding/json's
// streaming decoder delivers, and fails as it does.
func FuzzEachElement(f *testing.F) {
	for _, s := range []string{
		"\xef\xbb\xbf{\"before\":{\"k\":1},\"messages\":[{\"a\":NaN},{\"b\":2}],\"after\":\"x\"}",
		`[1,{"x":[1,2]},"s"]`, `[{"a":1},{"b":`, `[1 2]`, `[1,]`, `{"a":1,}`, `{"a":[1,2],"b":[3]}`,
		` [ 1 , "two" , [ ] , { } , null , true , false , -1.5e3 ] `, `{}`, `[]`, `{"a":[]}`, `[12x]`, `{"a" 1}`,
		`{"m":[{"t":"\u00e9\"]"}]}trailing`, `[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `]`,
	} {
		f.Add([]byte(s), "messages")
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, in []byte, field string) {
		type result struct {
			elems []string
			top   Record
			err   string
		}
		run := func(read func(func(int, json.RawMessage) error) (Record, error)) result {
			var r result
			top, err := read(func(i int, raw json.RawMessage) error {
				r.elems = append(r.elems, strconv.Itoa(i)+":"+string(raw))
				return nil
			})
			r.top = top
			if err != nil {
				r.err = err.Error()
			}
			return r
		}
		got := run(func(fn func(int, json.RawMessage) error) (Record, error) {
			return elementsOf(bytes.NewReader(in), field, fn)
		})
		want := run(func(fn func(int, json.RawMessage) error) (Record, error) {
			b := in
			if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
				b = b[3:]
			}
			return eachElement(NewRepairReader(bytes.NewReader(b)), field, fn)
		})
		if strings.Join(got.elems, "\n") != strings.Join(want.elems, "\n") || got.err != want.err ||
			len(got.top) != len(want.top) || (got.top == nil) != (want.top == nil) {
			t.Fatalf("%q, field %q:\n got %q %v %q\nwant %q %v %q", in, field, got.elems, got.top, got.err, want.elems, want.top, want.err)
		}
		for k, v := range want.top {
			if !bytes.Equal(got.top[k], v) {
				t.Fatalf("%q: top[%q] = %q, want %q", in, k, got.top[k], v)
			}
		}
	})
}
