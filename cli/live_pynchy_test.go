package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

const pynchyChat = "tui:main"

// pynchyAPI serves a fake pynchy on a loopback port for one test and
// counts the event stream's connections.
type pynchyAPI struct {
	srv     *fakepynchy.Server
	base    string
	streams atomic.Int64
}

func newPynchyAPI(t *testing.T, opts fakepynchy.Options) *pynchyAPI {
	t.Helper()
	if opts.StepDelay == 0 {
		opts.StepDelay = time.Millisecond
	}
	p := &pynchyAPI{srv: fakepynchy.New(opts)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := p.srv.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/events" {
			p.streams.Add(1)
		}
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = p.srv.Close()
		_ = hs.Close()
		<-done
	})
	p.base = "http://" + ln.Addr().String()
	return p
}

func (p *pynchyAPI) waitIdle(t *testing.T, sends int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for p.srv.Sends(pynchyChat) != sends || p.srv.Active(pynchyChat) {
		if time.Now().After(deadline) {
			t.Fatal("the pynchy run never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pynchyImport is `perch import` of the chat's history as curl saves it
// from /api/messages.
func pynchyImport(t *testing.T, base string) string {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(base + "/api/messages?limit=1000000&jid=" + pynchyChat)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("history: %d %v", resp.StatusCode, err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return must(t, run(t, "", "import", path, "--from", "pynchy", "--format", "jsonl")).stdout
}

func pynchyExport(t *testing.T, ctx context.Context, base string, extra ...string) result {
	t.Helper()
	args := append([]string{"export", pynchyChat, "--backend", "pynchy", "--url", base, "--token", sunaSecret, "--format", "jsonl"}, extra...)
	r := runCtx(ctx, t, "", args...)
	noSecret(t, "export", r)
	return r
}

func checkPynchyImport(t *testing.T, base string, r result, want ...string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("export: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if imp := pynchyImport(t, base); r.stdout != imp {
		t.Errorf("export differs from the import of the chat's history:\nexport:\n%s\nimport:\n%s", r.stdout, imp)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("export lacks %q:\n%s", w, r.stdout)
		}
	}
}

// perch export of a finished pynchy chat, and of a failed run, is the
// import of its /api/messages history.
func TestExportPynchyFinishedAndFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ prompt, want string }{
		{"list the files", "list the files"},
		{"this one will fail", "Agent error occurred"},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			t.Parallel()
			p := newPynchyAPI(t, fakepynchy.Options{StepDelay: -1})
			if err := p.srv.Say(pynchyChat, tc.prompt); err != nil {
				t.Fatal(err)
			}
			p.waitIdle(t, 1)
			r := pynchyExport(t, context.Background(), p.base, "--until-idle")
			checkPynchyImport(t, p.base, r, tc.want)
			if r.stderr != "" {
				t.Errorf("stderr: %q", r.stderr)
			}
		})
	}
}

// Joined mid-run, export --until-idle waits for activity off and equals
// the import after the run; so does a stream cut every 3 frames.
func TestExportPynchyJoinedMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		drop int
	}{{"whole", 0}, {"cut every 3 frames", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPynchyAPI(t, fakepynchy.Options{DropEvery: tc.drop})
			if err := p.srv.Say(pynchyChat, "list the files"); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for p.srv.Rows(pynchyChat) < 3 {
				if time.Now().After(deadline) {
					t.Fatal("the run never got going")
				}
				time.Sleep(time.Millisecond)
			}
			p.srv.Hold()
			streams := p.streams.Load()
			res := make(chan result, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			go func() { res <- pynchyExport(t, ctx, p.base, "--until-idle") }()
			for p.streams.Load() == streams {
				select {
				case r := <-res:
					t.Fatalf("export ended before following the chat: %+v", r)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("export never opened the event stream")
				}
				time.Sleep(5 * time.Millisecond)
			}
			// The run is still held: export must not have ended.
			time.Sleep(300 * time.Millisecond)
			select {
			case r := <-res:
				t.Fatalf("export ended during the run: %+v", r)
			default:
			}
			p.srv.Release()
			r := <-res
			if p.srv.Active(pynchyChat) {
				t.Fatal("export ended while the agent is active")
			}
			checkPynchyImport(t, p.base, r, "list the files")
		})
	}
}

// Errors: a chat that does not exist, and the wrong backend for a URL
// either way: one line, exit 1, never the token.
func TestExportPynchyErrors(t *testing.T) {
	t.Parallel()
	p := newPynchyAPI(t, fakepynchy.Options{StepDelay: -1})
	_, sunaBase := sunaAPI(t, fakesunaOptions())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown chat", []string{"export", "tui:nobody", "--backend", "pynchy", "--url", p.base, "--token", sunaSecret}, "tui:nobody"},
		{"pynchy at a Suna URL", []string{"export", pynchyChat, "--backend", "pynchy", "--url", sunaBase, "--token", sunaSecret}, sunaBase},
		{"suna at a pynchy URL", []string{"export", pynchyChat, "--backend", "suna", "--url", p.base, "--token", sunaSecret}, p.base},
		{"record", []string{"record", pynchyChat, "-o", filepath.Join(t.TempDir(), "x.sse"), "--backend", "pynchy", "--url", p.base}, "perch export " + pynchyChat + " --backend pynchy"},
	} {
		r := run(t, "", tc.args...)
		noSecret(t, tc.name, r)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// Probed: perch says what answered, then exports.
	if err := p.srv.Say(pynchyChat, "list the files"); err != nil {
		t.Fatal(err)
	}
	p.waitIdle(t, 1)
	r := must(t, run(t, "", "export", pynchyChat, "--url", p.base, "--format", "jsonl", "--until-idle", "-v"))
	if r.stderr != "perch: "+p.base+" answers as pynchy\n" || r.stdout != pynchyImport(t, p.base) {
		t.Errorf("probed export: %+v", r)
	}
}

func fakesunaOptions() fakesuna.Options { return fakesuna.Options{Token: sunaSecret} }
