package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"
)

func checkEncode(t *testing.T, s string) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	if got := string(AppendString([]byte("x"), s)) + "\n"; got != "x"+want.String() {
		t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want.String())
	}
	raw := json.RawMessage(s)
	want.Reset()
	err := enc.Encode(raw)
	got, ok := AppendCompact([]byte("x"), raw)
	if ok != (err == nil) || ok && string(got)+"\n" != "x"+want.String() || !ok && string(got) != "x" {
		t.Fatalf("AppendCompact(%q) = %q, %v; encoding/json %q, %v", s, got, ok, want.String(), err)
	}
}

var encodeSamples = []string{
	"", "plain", "a\"b\\c", "\b\f\n\r\t\x00\x01\x1f\x7f", "<&>", "naïve — 日本 🚀", "\u2028\u2029x\u2027",
	"\xff", "a\xe2\x80", "\xe2\x80\xa8", "\xed\xa0\x80", "12345678\"12345678\\", " { \"a\" : [ 1 , 2 ] } ",
	`{"k":"v w"}`, "[1, 2,\n3]", `"str"`, "nul", `{"a":}`,
}

func TestAppendString(t *testing.T) {
	for _, s := range encodeSamples {
		checkEncode(t, s)
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range encodeSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEncode(t, s) })
}
