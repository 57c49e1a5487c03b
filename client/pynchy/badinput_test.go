package pynchy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/pynchy"
	"github.com/perch-tui/perch/sse"
)

// closedURL is a loopback URL where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	_ = ln.Close()
	return u
}

// TestServerNotRunning: every call to a server that is not there says
// which URL did not answer and what to check; a follow-up is kept to try
// again.
func TestServerNotRunning(t *testing.T) {
	noLeaks(t)
	u := closedURL(t)
	b := openBackend(t, u)
	ctx := context.Background()
	clear := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), u) || !strings.Contains(err.Error(), "is it running?") {
			t.Errorf("%s: %v, want the URL and a hint", what, err)
		}
	}
	_, err := b.Sessions(ctx)
	clear("Sessions", err)
	clear("Follow", b.Follow(ctx, chat, func(client.Update) { t.Error("an update from no server") }))
	_, err = b.Send(ctx, chat, client.Message{Text: "hi"})
	clear("Send", err)
	if client.ClassOf(err) == client.SendPermanent {
		t.Errorf("Send to a server that is down: %v is permanent, want it retried", err)
	}
}

// TestLiveServerGoneAndBack: the server goes away while perch follows a
// chat, a whole run happens while it is down, and it comes back on the
// same port. perch says it is reconnecting (with the URL and why), is live
// again, and fills the gap from the history: the run shows once, ended.
func TestLiveServerGoneAndBack(t *testing.T) {
	noLeaks(t)
	fs, _, f := followFake(t, fake.Options{StepDelay: time.Millisecond})
	fs.stop()
	eventually(t, "a reconnecting state", func() bool {
		return f.get(func(f *follower) bool {
			for _, s := range f.states {
				if s.Phase == sse.PhaseReconnecting && s.Err != nil && strings.Contains(s.Err.Error(), fs.url+"/api/events") {
					return true
				}
			}
			return false
		})
	})
	if err := fs.srv.Say(chat, "list the files"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run to end while the server is down", func() bool { return !fs.srv.Active(chat) })
	f.mu.Lock()
	f.states = nil
	f.mu.Unlock()
	fs.restart(0)
	golden(t, "finished.jsonl", settled(t, fs, f, chat, 1))
	get(f, func(f *follower) bool {
		if n := len(f.states); n == 0 || f.states[n-1].Phase != sse.PhaseLive {
			t.Errorf("states after the restart %+v, want live last", f.states)
		}
		if f.resets != 0 {
			t.Errorf("%d resets, want none: the reload should have filled the gap", f.resets)
		}
		if st := f.tl.Status(); st != events.RunIdle {
			t.Errorf("status %v after a run that ended while the server was down, want idle", st)
		}
		return true
	})
}

// TestLiveBrokenAnswers: a server (or a proxy in front of it) that
// answers something else than pynchy's JSON: Follow fails with a sentence
// that names the request, and nothing is delivered.
func TestLiveBrokenAnswers(t *testing.T) {
	noLeaks(t)
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
		want       []string
	}{
		{"history is a web page", "/api/messages", http.StatusOK, "<html>Bad gateway</html>",
			[]string{`the history of chat "tui:main"`, "/api/messages", "is not a list; is --url a pynchy server"}},
		{"history is not JSON", "/api/messages", http.StatusOK, `[{"sender_name": "You", "content": `,
			[]string{`the history of chat "tui:main"`, "does not decode"}},
		{"history refused", "/api/messages", http.StatusBadGateway, "upstream \x1b[31mgone",
			[]string{"/api/messages", "HTTP 502", "upstream gone", "see its log"}},
		{"a proxy asks for a token", "/api/groups", http.StatusUnauthorized, "401: Unauthorized",
			[]string{"/api/groups", "HTTP 401", "give it with --token"}},
		{"stream refused", "/api/events", http.StatusNotFound, "404: Not Found",
			[]string{"/api/events", "404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.New(fake.Options{StepDelay: time.Millisecond})
			t.Cleanup(func() { _ = srv.Close() })
			inner := srv.Handler()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == tc.path {
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, tc.body)
					return
				}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			var updates []client.Update
			err := openBackend(t, hs.URL).Follow(ctx, chat, func(u client.Update) {
				if len(u.Events) > 0 && tc.path != "/api/events" {
					updates = append(updates, u)
				}
			})
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Follow: %v, want it to fail", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Follow: %q, want it to say %q", err, w)
				}
			}
			t.Logf("Follow: %v", err)
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("Follow: %q carries a control character", err)
			}
			if len(updates) != 0 {
				t.Errorf("%d updates with events from a history perch could not read", len(updates))
			}
		})
	}
}
