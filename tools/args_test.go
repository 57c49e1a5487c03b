package tools

import (
	"encoding/json"
	"testing"
)

// TestKeyArg: which argument a call's header shows. For read_file and
// search_files it is the path and the pattern alone: the goldens pin that
// (the renderer's old "a.go:3-9" and "foo.* in src" never reached the
// screen, the decoder's choice came first).
func TestKeyArg(t *testing.T) {
	cases := []struct {
		name string
		args string
		want string
	}{
		{MariaCommand, `{"command":"go test ./..."}`, "go test ./..."},
		{MariaRead, `{"path":"a.go","start_line":3,"end_line":9}`, "a.go"},
		{MariaList, `{"path":"src"}`, "src"},
		{MariaSearch, `{"path":"src","regex":"foo.*"}`, "foo.*"},
		{MariaSearch, `{"path":"src"}`, "src"},
		{MariaPatch, `{"patch":"*** Begin Patch\n*** Update File: a\n*** Add File: b\n*** End Patch"}`, "a +1 more"},
		{MariaPatch, `{"patch":"*** Begin Patch\n*** Delete File: a\n*** End Patch"}`, "a"},
		{MariaTodo, `{"action":"read","content":"x"}`, "read"},
		{CodexExecCommand, `{"cmd":"sh hello.sh","yield_time_ms":5000}`, "sh hello.sh"},
		{CodexShellCommand, `{"command":"ls -la","workdir":"/w"}`, "ls -la"},
		{"other", `{"url":"http://x"}`, "http://x"},
		{"other", `{"name":"n","regex":"r"}`, "r"},
		{"Bash", `{"command":"ls","description":"list"}`, "ls"},
		{"other", `{"n":1}`, ""},
	}
	for _, c := range cases {
		if got := KeyArg(c.name, json.RawMessage(c.args), c.args); got != c.want {
			t.Errorf("KeyArg(%s, %s) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
	if got := KeyArg("x", nil, "{broken"); got != "{broken" {
		t.Errorf("raw arguments: %q", got)
	}
	if got := KeyArg("x", json.RawMessage(`[1,2]`), "[1,\n2]"); got != "[1, …" {
		t.Errorf("arguments not an object: %q", got)
	}
}
