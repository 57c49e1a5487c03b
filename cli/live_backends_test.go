package cli

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	pfake "github.com/perch-tui/perch/fakedaemon/pynchy"
	sfake "github.com/perch-tui/perch/fakedaemon/suna"
)

func serveOn(t *testing.T, serve func(context.Context, net.Listener) error) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

// TestLiveBackendsThroughTheCLI: against the three fake servers, perch
// finds which system a URL is, and tasks, send, cancel and new behave as
// each system allows, without ever printing the token.
func TestLiveBackendsThroughTheCLI(t *testing.T) {
	t.Parallel()
	s := sfake.New(sfake.Options{Token: "jwt-secret-1", FrameDelay: 50 * time.Millisecond})
	t.Cleanup(s.Close)
	sURL := serveOn(t, s.Serve) + "/v1"
	p := pfake.New(pfake.Options{})
	t.Cleanup(func() { p.Close() })
	pURL := serveOn(t, p.Serve)
	_, mURL := fake(t, "head", 20)

	for _, tc := range []struct{ url, tok, want string }{{sURL, "jwt-secret-1", "suna"}, {pURL, "", "pynchy"}, {mURL, "", "maria"}} {
		args := []string{"tasks", "--url", tc.url, "-v"}
		if tc.tok != "" {
			args = append(args, "--token", tc.tok)
		}
		r := run(t, "", args...)
		if !strings.Contains(r.stderr, "answers as "+tc.want) || strings.Contains(r.stderr+r.stdout, "jwt-secret-1") {
			t.Errorf("%s: %+v", tc.want, r)
		}
	}
	r := run(t, "", "tasks", "--url", sURL)
	if r.code != 1 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "--token") {
		t.Errorf("suna without a token: %+v", r)
	}
	r = run(t, "", "cancel", "tui:main", "--url", pURL)
	if r.code != 1 || !strings.Contains(r.stderr, "cannot stop a run") {
		t.Errorf("pynchy cancel: %+v", r)
	}
	if r = run(t, "", "send", "tui:main", "hello there", "--url", pURL); r.code != 0 {
		t.Errorf("pynchy send: %+v", r)
	}
	r = run(t, "", "new", "what is this?", "--url", sURL, "--token", "jwt-secret-1")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || id == "" {
		t.Fatalf("suna new: %+v", r)
	}
	// The run goes on (a frame every 50 ms): Suna has no queue, so perch
	// holds the follow-up and says it is queued.
	r = run(t, "", "send", id, "and then?", "--url", sURL, "--token", "jwt-secret-1", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"queued": true`) {
		t.Errorf("suna send while running: %+v", r)
	}
	r = run(t, "", "tasks", "--url", sURL, "--token", "jwt-secret-1")
	if r.code != 0 || !strings.Contains(r.stdout, "generating") || strings.Contains(r.stdout+r.stderr, "jwt-secret-1") {
		t.Errorf("suna tasks: %+v", r)
	}
}
