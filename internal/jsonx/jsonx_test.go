package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// check compares every function with encoding/json on raw.
func check(t *testing.T, raw []byte) {
	t.Helper()
	if got, want := Valid(raw), json.Valid(raw); got != want {
		t.Fatalf("Valid(%q) = %v, json.Valid %v", raw, got, want)
	}
	first := byte(0)
	if i := skipSpace(raw, 0); i < len(raw) {
		first = raw[i]
	}

	var wantS string
	errS := json.Unmarshal(raw, &wantS)
	gotS, okS := Unquote(raw)
	if first == '"' {
		if okS != (errS == nil) || okS && gotS != wantS {
			t.Fatalf("Unquote(%q) = %q, %v; json: %q, %v", raw, gotS, okS, wantS, errS)
		}
	} else if okS || gotS != "" {
		t.Fatalf("Unquote(%q) = %q, %v for a non-string", raw, gotS, okS)
	}
	if json.Valid(raw) {
		// Checked input: UnquoteChecked reads it as Unquote does.
		if s, ok := UnquoteChecked(raw); s != gotS || ok != okS {
			t.Fatalf("UnquoteChecked(%q) = %q, %v; Unquote %q, %v", raw, s, ok, gotS, okS)
		}
	}
	if b, ok := AppendUnquote([]byte("x"), raw); string(b) != "x"+gotS || ok != okS {
		t.Fatalf("AppendUnquote(%q) = %q, %v; Unquote %q, %v", raw, b, ok, gotS, okS)
	}
	if i := skipSpace(raw, 0); first == '"' {
		// The measure that sizes large strings, on every string.
		wantEnd, wantOK := scanString(raw, i)
		end, n, ok := scanCount(raw, i, true)
		if ok != wantOK || ok && (end != wantEnd || okS && n != len(gotS)) {
			t.Fatalf("scanCount(%q) = %d, %d, %v; scanString %d, %v; value %d bytes", raw, end, n, ok, wantEnd, wantOK, len(gotS))
		}
		// Without the UTF-8 pass (strings under exactFrom): exact for
		// valid UTF-8, short by two bytes a bad byte otherwise.
		end, n, ok = scanCount(raw, i, false)
		if ok != wantOK || ok && (end != wantEnd || okS && utf8.Valid(raw) && n != len(gotS) || okS && n > len(gotS)) {
			t.Fatalf("scanCount(%q, no fix) = %d, %d, %v; scanString %d, %v; value %d bytes", raw, end, n, ok, wantEnd, wantOK, len(gotS))
		}
	}

	var wantM map[string]json.RawMessage
	errM := json.Unmarshal(raw, &wantM)
	gotM, okM := Object(raw)
	if first == '{' {
		if okM != (errM == nil) || okM && !equalMaps(gotM, wantM) {
			t.Fatalf("Object(%q) = %q, %v; json: %q, %v", raw, gotM, okM, wantM, errM)
		}
	} else if okM || gotM != nil {
		t.Fatalf("Object(%q) = %v, %v for a non-object", raw, gotM, okM)
	}
	seen := map[string]json.RawMessage{}
	okMembers := Members(raw, func(k string, v []byte) { seen[k] = v })
	if okMembers != okM || okM && !equalMaps(seen, gotM) {
		t.Fatalf("Members(%q) = %q, %v; Object %q, %v", raw, seen, okMembers, gotM, okM)
	}

	// CheckedMembers reads a checked object as Members does, member by
	// member in order, and never panics on anything else.
	type member struct {
		k string
		v string
	}
	var all, checked []member
	Members(raw, func(k string, v []byte) { all = append(all, member{k, string(v)}) })
	CheckedMembers(raw, func(k string, v []byte) { checked = append(checked, member{k, string(v)}) })
	if okM && !reflect.DeepEqual(checked, all) {
		t.Fatalf("CheckedMembers(%q) = %q; Members %q", raw, checked, all)
	}

	var wantL []json.RawMessage
	errL := json.Unmarshal(raw, &wantL)
	gotL, okL := List(raw)
	if first == '[' {
		if okL != (errL == nil) || okL && !reflect.DeepEqual(gotL, wantL) {
			t.Fatalf("List(%q) = %q, %v; json: %q, %v", raw, gotL, okL, wantL, errL)
		}
	} else if okL || gotL != nil {
		t.Fatalf("List(%q) = %v, %v for a non-array", raw, gotL, okL)
	}
}

func equalMaps(a, b map[string]json.RawMessage) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

var samples = []string{
	`"plain"`, ` "spaced" `, "\t\"x\"\r\n", `""`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`,
	`"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
	`"\u12"`, `"\u12g4"`, `"\x"`, `"\"`, `"a"b"`, `"a` + "\n" + `b"`, "\"a\xffb\"", "\"\xe4\xb8\"",
	"\"\xe4\xb8x\xe4\xb8\xad\"", `"ünïcode – ok"`, `null`, `42`, `"x" "y"`, `"x",`, `"`, ``, "\v\"x\"",
	`{}`, ` { } `, `{"a":1}`, `{"a" : "b" , "c":[1,2,{"d":null}]}`, `{"a":1,"a":2}`, `{"\u0061":true}`,
	"{\"k\xff\":1}", `{"a":1,}`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1}}`, `{`,
	`[]`, `[1]`, ` [ 1 , "two" , [ ] , { } , null , true , false ] `, `[1,]`, `[,1]`, `[1 2]`, `[`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e10`, `.5`, `+1`, `1.5.5`, `tru`, `truex`,
	`nul`, `[true,fals]`, `{"a":[[[[]]]]}`, "{\"a\":\"\x01\"}", "[\"\t\"]", `{"a":"\ud800"}`,
	`{"k":"v"}` + "\n", `[{"type":"text","text":"hi"},"x",3]`, "\xef\xbb\xbf{}",
}

func TestAgainstEncodingJSON(t *testing.T) {
	for _, s := range samples {
		check(t, []byte(s))
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	check(t, []byte(deep))
	check(t, []byte("["+deep+"]"))
	check(t, []byte(`{"a":`+deep+`}`))
	check(t, []byte(`{"a":[`+deep+`]}`))
}

func TestSpecial(t *testing.T) {
	for _, s := range []string{"", "abc", "abcdefghijklmnop\"", "abcdefgh\\ijk", "\x1fabcdefghi", "abcdefghijklmn\x00", "ééééééééé\"", "\x7f\x80\xff\""} {
		want := len(s)
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
				want = i
				break
			}
		}
		if got := special([]byte(s), 0); got != want {
			t.Errorf("special(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzAgainstEncodingJSON(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		check(t, raw)
		b, _ := json.Marshal(string(raw))
		check(t, b)
		check(t, []byte(`{"k":`+string(b)+`,"l":[`+string(raw)+`]}`))
	})
}

func BenchmarkUnquote(b *testing.B) {
	var s strings.Builder
	for i := 0; s.Len() < 6000; i++ {
		s.WriteString("ok  \tgithub.com/example/pkg\t0.123s \"quoted\" naïve — line of output\n")
	}
	raw, _ := json.Marshal(s.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Unquote(raw)
	}
}

func BenchmarkObject(b *testing.B) {
	var s strings.Builder
	for i := 0; s.Len() < 6000; i++ {
		s.WriteString("ok  \tgithub.com/example/pkg\t0.123s \"quoted\" naïve — line of output\n")
	}
	text, _ := json.Marshal(s.String())
	raw := []byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_x","type":"tool_result","content":` + string(text) + `,"is_error":false}]},"session_id":"abc","uuid":"def"}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Object(raw)
	}
}

// Strings whose body is exactFrom bytes or more are measured first, then
// built to size: the same results, whatever the escapes, and no room
// allocated beyond the value.
func TestUnquoteLarge(t *testing.T) {
	for _, body := range []string{
		`plain`, `a\"b`, `\/\b\f\n\r\t`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`, `\u0001x`,
		"a\xffb", "\xe4\xb8", `ünïcode – ok`, `\u0000x`, `\x`, `a"b`, "a\nb", `\ud83d\u0041`, "\xe4\xb8x\xe4\xb8\xad",
	} {
		raw := []byte(`"` + strings.Repeat(body, exactFrom/len(body)+1) + `"`)
		check(t, raw)
		var want string
		if json.Unmarshal(raw, &want) != nil {
			continue
		}
		if got, _ := AppendUnquote(nil, raw); cap(got) != len(want) {
			t.Errorf("%q repeated: AppendUnquote allocated %d bytes for %d", body, cap(got), len(want))
		}
		if _, n, ok := scanCount(raw, 0, true); !ok || n != len(want) {
			t.Errorf("%q repeated: scanCount %d, %v, want %d", body, n, ok, len(want))
		}
	}
}

// TestUnquoteSmallExact: a string under exactFrom with escapes is built in
// a buffer of its value's size too, not of its escaped text's.
func TestUnquoteSmallExact(t *testing.T) {
	for _, n := range []int{100, 6 << 10, exactFrom / 2} {
		raw := escapedText(n)
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if len(raw) >= exactFrom || len(want) >= len(raw)-2 {
			t.Fatalf("%d: test text is %d bytes escaped, %d unescaped", n, len(raw), len(want))
		}
		if got, _ := AppendUnquote(nil, raw); cap(got) != len(want) || string(got) != want {
			t.Errorf("%d: AppendUnquote allocated %d bytes for %d (%d escaped)", n, cap(got), len(want), len(raw))
		}
		// Invalid UTF-8 makes the value larger than measured: still right.
		bad := append([]byte("\"\xff"), raw[1:]...)
		if got, ok := Unquote(bad); !ok || got != "\ufffd"+want {
			t.Errorf("%d: with a bad byte: %v", n, ok)
		}
	}
}

// TestUnquoteAllocates: one allocation, of the value's size, for a large
// string with many escapes (a buffer sized for the escaped text would be a
// third larger here).
func TestUnquoteAllocates(t *testing.T) {
	raw := escapedText(1 << 20)
	var want string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	var got string
	allocs := testing.AllocsPerRun(5, func() { got, _ = Unquote(raw) })
	if allocs != 1 || got != want {
		t.Fatalf("Unquote: %.0f allocations, equal %v", allocs, got == want)
	}
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Unquote(raw)
		}
	})
	// The heap rounds a large allocation up to whole pages.
	if per := res.AllocedBytesPerOp(); per > int64(len(want))+16<<10 {
		t.Errorf("Unquote allocated %d bytes for a %d-byte value (%d escaped)", per, len(want), len(raw))
	}
}

// escapedText is a JSON string of about n bytes of tool output: ASCII,
// tabs, quotes, colour codes, non-ASCII letters and emoji.
func escapedText(n int) []byte {
	parts := []string{"ok  \tgithub.com/example/pkg\t0.123s\n", "\x1b[31mFAIL\x1b[0m \"quoted\"\n", "naïve — ünïcode 中文 😀\n", "\x01\x02 raw control\r\n"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	raw, _ := json.Marshal(b.String())
	return raw
}

// BenchmarkUnquoteSizes: from a short plain string to a large escaped
// one; B/op over the value's length is the room allocated per byte.
func BenchmarkUnquoteSizes(b *testing.B) {
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"plain64", []byte(`"` + strings.Repeat("plain text ", 6) + `"`)},
		{"escaped2k", escapedText(2 << 10)},
		{"escaped6k", escapedText(6 << 10)},
		{"escaped256k", escapedText(256 << 10)},
		{"escaped8m", escapedText(8 << 20)},
	} {
		for _, f := range []struct {
			name    string
			unquote func([]byte) (string, bool)
		}{{"", Unquote}, {"/checked", UnquoteChecked}} {
			b.Run(c.name+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.raw)))
				b.ReportAllocs()
				for b.Loop() {
					if _, ok := f.unquote(c.raw); !ok {
						b.Fatal("not a string")
					}
				}
			})
		}
	}
}
