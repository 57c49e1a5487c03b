package events

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// unquote must agree with json.Unmarshal into a string, for strings; and
// refuse everything json.Unmarshal refuses (null, which json accepts as "",
// unquote refuses, and both yield "").
func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	var want string
	err := json.Unmarshal(raw, &want)
	got, ok := unquote(raw)
	if err != nil {
		want = ""
	}
	if got != want || (ok && err != nil) {
		t.Fatalf("unquote(%q) = %q, %v; json: %q, %v", raw, got, ok, want, err)
	}
	if !ok && err == nil && want != "" {
		t.Fatalf("unquote(%q) refused; json: %q", raw, want)
	}
}

func TestUnquote(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, ` "spaced" `, "\t\"x\"\r\n", `""`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`,
		`"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
		`"\u12"`, `"\u12g4"`, `"\x"`, `"\"`, `"a"b"`, `"a` + "\n" + `b"`, "\"a\xffb\"", "\"\xe4\xb8\"",
		`"ünïcode – ok"`, `null`, `42`, `"x" "y"`, `"x",`, `"`, ``, `{"a":"b"}`, `["x"]`, "\v\"x\"",
	} {
		checkUnquote(t, []byte(raw))
	}
}

// Strings of 64 KB and more are measured first, then built to size: the
// same results, whatever the escapes.
func TestUnquoteLarge(t *testing.T) {
	for _, body := range []string{
		`plain`, `a\"b`, `\/\b\f\n\r\t`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`,
		"a\xffb", "\xe4\xb8", `ünïcode – ok`, `\u0000x`, `\x`, `a"b`, "a\nb",
	} {
		raw := []byte(`"` + strings.Repeat(body, 70000/len(body)+1) + `"`)
		var want string
		err := json.Unmarshal(raw, &want)
		got, ok := unquote(raw)
		if ok != (err == nil) || got != want && err == nil {
			t.Errorf("%q repeated: ok %v, json %v, equal %v", body, ok, err, got == want)
		}
	}
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\u00e9\ud83d\ude00\n"`, "\"\xff\"", `"\ud800"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkUnquote(t, raw)
		b, _ := json.Marshal(string(raw))
		checkUnquote(t, b)
	})
}

// sectionHeads must find what its regexp finds.
func TestSectionHeads(t *testing.T) {
	re := regexp.MustCompile(`(?m)^=== (STDOUT|STDERR) \(([^)]*)\) ===$`)
	for _, text := range []string{
		"", "=== STDOUT (2 lines) ===\na\nb", "x\n=== STDOUT (1 lines) ===\na\n=== STDERR (1 lines) ===\nb\n",
		"=== STDOUT (a\nb) ===\n", "=== STDOUT (x) ===y\n=== STDERR () ===", " === STDOUT (1) ===",
		"=== STDOUT (1)) ===", "=== STDOUT (1 ===\n=== STDERR (2) ===", "=== STDIN (1) ===", "=== STDOUT (1) ===\r\n",
		"=== STDOUT (1) ===\n=== STDOUT (1) ===\n", "=== STD", "a=== STDOUT (1) ===",
	} {
		var want [][4]int
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			want = append(want, [4]int{m[0], m[1], m[2], m[3]})
		}
		if got := sectionHeads(text); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
}
