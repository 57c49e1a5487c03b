package cli

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/perch-tui/perch/fakedaemon"
)

// perch watch --json --snapshot starts with every session as it stands,
// one object, before any change: a status bar needs no second call.
func TestWatchSnapshot(t *testing.T) {
	t.Parallel()
	d, base := fake(t, "head", fastSpeed)
	id, err := d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, base, id)
	w := startWatch(t, t.TempDir(), "--json", "--snapshot", "--url", base)
	w.waitFor(t, "the snapshot", func(out, _ string) bool { return strings.Contains(out, `"type":"snapshot"`) })
	w.stop(t)
	var first struct {
		Type     string
		Sources  []sourceJSON
		Sessions []rowJSON
	}
	lines := strings.Split(strings.TrimSpace(w.out.String()), "\n")
	var snap string
	for _, l := range lines {
		if strings.Contains(l, `"type":"snapshot"`) {
			snap = l
			break
		}
		if !strings.Contains(l, `"type":"source"`) {
			t.Fatalf("a line before the snapshot: %s", l)
		}
	}
	if err := json.Unmarshal([]byte(snap), &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Sources) != 1 || first.Sources[0].State != "live" || len(first.Sessions) != 1 ||
		first.Sessions[0].ID != id || first.Sessions[0].Status != "idle" {
		t.Errorf("snapshot: %s", snap)
	}
	if r := run(t, "", "watch", "--snapshot", "--url", base); r.code != ExitUsage || !strings.Contains(r.stderr, "--snapshot needs --json") {
		t.Errorf("--snapshot without --json: %+v", r)
	}
}

// perch watch (text) says when a source goes down and comes back, each on
// a line of its own on stdout.
func TestWatchSourceDownAndUp(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func() *fakedaemon.Server {
		d := fakedaemon.New(fakedaemon.Options{Speed: fastSpeed, Seed: 7})
		srv, err := d.Start(addr)
		if err != nil {
			t.Skipf("port not free again: %v", err)
		}
		return srv
	}
	srv := start()
	base := srv.URL
	w := startWatch(t, t.TempDir(), "--url", base)
	src := base // the source is named by its URL
	w.waitFor(t, "up", func(out, _ string) bool { return strings.Contains(out, "source "+src+" up\n") })
	srv.Close()
	w.waitFor(t, "down", func(out, _ string) bool { return strings.Contains(out, "source "+src+" down: ") })
	srv = start()
	defer srv.Close()
	w.waitFor(t, "up again", func(out, _ string) bool { return strings.Count(out, "source "+src+" up\n") == 2 })
}
