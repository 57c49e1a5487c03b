package cli

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/notify"
)

// With [[source]] tables and no --url, perch opens the board of them all,
// sending the notifications [notify] leaves on; one --url still opens that
// server's task list.
func TestPerchOpensTheBoardOfManySources(t *testing.T) {
	c := newConfigEnv(t, `
[[source]]
name = "a"
url = "http://a.example"
backend = "suna"

[[source]]
name = "b"
url = "http://b.example"

[notify]
bell = false
`)
	if r := c.run(t); r.code != 0 {
		t.Fatalf("perch: %+v", r)
	}
	if r := c.run(t, "--url", "http://c.example"); r.code != 0 {
		t.Fatalf("perch --url: %+v", r)
	}
	if got := strings.Join(c.ui.calls, ","); got != "board,suna" {
		t.Fatalf("perch opened %s, want the board then one server's list", got)
	}
	bd := c.ui.cfgs[0].Board
	if want := (notify.Kinds{Bell: false, OSC9: true, OSC777: true}); bd.Notify.Kinds != want {
		t.Fatalf("notify kinds %+v, want %+v", bd.Notify.Kinds, want)
	}
	if _, _, ok := bd.Open("nowhere"); ok {
		t.Fatal("a source that is not on the board opened")
	}
	if c.ui.cfgs[1].Board != nil {
		t.Fatal("one --url opened the board")
	}
}

func TestNotifyTableRefusesUnknownKeys(t *testing.T) {
	c := newConfigEnv(t, "[notify]\nbel = false\n")
	r := c.run(t)
	if r.code == 0 || !strings.Contains(r.stderr, `[notify]: unknown key "bel"`) || !strings.Contains(r.stderr, "bell") {
		t.Fatalf("perch with [notify] bel: %+v", r)
	}
	c = newConfigEnv(t, "[notify]\nosc9 = \"yes\"\n")
	if r := c.run(t); r.code == 0 || !strings.Contains(r.stderr, "line 2") {
		t.Fatalf("perch with osc9 = \"yes\": %+v", r)
	}
}
