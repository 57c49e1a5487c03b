package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

const sunaSecret = "suna-jwt-Kq73xv"

// sunaAPI serves a fake Suna API on a loopback port for one test.
func sunaAPI(t *testing.T, opts fakesuna.Options) (*fakesuna.Server, string) {
	t.Helper()
	if opts.Ping == 0 {
		opts.Ping = 50 * time.Millisecond
	}
	if opts.FrameDelay == 0 {
		opts.FrameDelay = time.Millisecond
	}
	s := fakesuna.New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		s.Close()
	})
	return s, "http://" + ln.Addr().String() + "/v1"
}

func sunaStart(t *testing.T, s *fakesuna.Server, prompt string) (string, string) {
	t.Helper()
	tid, rid, err := s.Start("", prompt)
	if err != nil {
		t.Fatal(err)
	}
	return tid, rid
}

func sunaWaitStatus(t *testing.T, s *fakesuna.Server, rid, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for s.RunStatus(rid) != want {
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %q, want %q", rid, s.RunStatus(rid), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sunaWaitHeld waits until a held run stored all it will before Release.
func sunaWaitHeld(t *testing.T, s *fakesuna.Server, rid string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for n := -1; ; {
		time.Sleep(100 * time.Millisecond)
		m := s.Frames(rid)
		if m == n && m > 0 {
			return
		}
		n = m
		if time.Now().After(deadline) {
			t.Fatalf("run %s never settled (%d frames)", rid, m)
		}
	}
}

// sunaImport is `perch import` of the thread's history as a user saves it
// from the history route.
func sunaImport(t *testing.T, base, token, tid string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/threads/"+tid+"/messages?optimized=false", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
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
	return must(t, run(t, "", "import", path, "--from", "suna", "--format", "jsonl")).stdout
}

// noSecret fails when a command's output shows the token.
func noSecret(t *testing.T, what string, r result) {
	t.Helper()
	if strings.Contains(r.stdout, sunaSecret) || strings.Contains(r.stderr, sunaSecret) {
		t.Errorf("%s printed the token:\nstdout: %s\nstderr: %s", what, r.stdout, r.stderr)
	}
}

func sunaExport(t *testing.T, ctx context.Context, base, tid string, extra ...string) result {
	t.Helper()
	args := append([]string{"export", tid, "--backend", "suna", "--url", base, "--token", sunaSecret, "--format", "jsonl"}, extra...)
	r := runCtx(ctx, t, "", args...)
	noSecret(t, "export", r)
	return r
}

// exportDuringRun starts export --until-idle of a held run, lets the run
// end once export follows its stream, and returns export's result.
func exportDuringRun(t *testing.T, s *fakesuna.Server, base, tid string, end func()) result {
	t.Helper()
	streams := s.Requests("GET /agent-run/{id}/stream")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := make(chan result, 1)
	go func() { res <- sunaExport(t, ctx, base, tid, "--until-idle") }()
	deadline := time.Now().Add(60 * time.Second)
	for s.Requests("GET /agent-run/{id}/stream") == streams {
		select {
		case r := <-res:
			t.Fatalf("export ended before following the run: %+v", r)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("export never opened the run's stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	end()
	return <-res
}

func checkEqualImport(t *testing.T, base, tid string, r result, want ...string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("export: exit %d\nstderr: %s", r.code, r.stderr)
	}
	imp := sunaImport(t, base, sunaSecret, tid)
	if r.stdout != imp {
		t.Errorf("export differs from the import of the thread's history:\nexport:\n%s\nimport:\n%s", r.stdout, imp)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("export lacks %q:\n%s", w, r.stdout)
		}
	}
}

// perch export of a finished Suna thread is the import of its history.
func TestExportSunaFinished(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitStatus(t, s, rid, "completed")
	r := sunaExport(t, context.Background(), base, tid)
	checkEqualImport(t, base, tid, r, "café ☕ ready")
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	// A unique prefix names the thread too; md is the readable form.
	r = sunaExport(t, context.Background(), base, tid[:8], "--format", "md")
	if r.code != 0 || !strings.Contains(r.stdout, "café ☕ ready") {
		t.Errorf("md by prefix: %+v", r)
	}
}

// Joined mid-run, export --until-idle waits for the run's end and then
// equals the import of the history after the run; so does a stream cut
// every few frames (resumed with last_id).
func TestExportSunaJoinedMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		drop int
	}{{"whole", 0}, {"cut every 3 frames", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true, DropEvery: tc.drop})
			tid, rid := sunaStart(t, s, "What is in my workspace?")
			sunaWaitHeld(t, s, rid)
			r := exportDuringRun(t, s, base, tid, s.Release)
			if s.RunStatus(rid) != "completed" {
				t.Fatalf("export ended while the run is %s", s.RunStatus(rid))
			}
			checkEqualImport(t, base, tid, r, "café ☕ ready")
		})
	}
}

// Into a regular file, export --until-idle of a run joined mid-way holds the import of the history
// after what the file held before.
func TestExportSunaJoinedMidRunIntoAFile(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true, DropEvery: 4})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitHeld(t, s, rid)
	f := fileTarget(t)
	streams := s.Requests("GET /agent-run/{id}/stream")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := make(chan result, 1)
	go func() {
		res <- runEnv(ctx, t, func(e *Env) { e.Stdout = f }, "", "export", tid, "--backend", "suna", "--url", base,
			"--token", sunaSecret, "--format", "jsonl", "--until-idle")
	}()
	deadline := time.Now().Add(60 * time.Second)
	for s.Requests("GET /agent-run/{id}/stream") == streams {
		if time.Now().After(deadline) {
			t.Fatal("export never opened the run's stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Release()
	r := <-res
	noSecret(t, "export", r)
	if r.code != 0 {
		t.Fatalf("export: exit %d\nstderr: %s", r.code, r.stderr)
	}
	imp := sunaImport(t, base, sunaSecret, tid)
	if got := fileText(t, f); got != "before\n"+imp {
		t.Errorf("file:\n%s\nwant:\nbefore\n%s", got, imp)
	}
}

// Without --until-idle, export of a running thread is what is in so far,
// with a note.
func TestExportSunaRunningSoFar(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitHeld(t, s, rid)
	r := sunaExport(t, context.Background(), base, tid)
	if r.code != 0 || !strings.Contains(r.stderr, "still generating") || !strings.Contains(r.stdout, "What is in my workspace?") {
		t.Errorf("export so far: %+v", r)
	}
	s.Release()
}

// A stopped run (perch cancel while export waits) and a failed run export
// with their states, equal to the import.
func TestExportSunaStoppedAndFailed(t *testing.T) {
	t.Parallel()
	t.Run("stopped", func(t *testing.T) {
		t.Parallel()
		s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true})
		tid, rid := sunaStart(t, s, "Tell me a long story, slow please")
		sunaWaitHeld(t, s, rid)
		r := exportDuringRun(t, s, base, tid, func() {
			c := run(t, "", "cancel", tid, "--backend", "suna", "--url", base, "--token", sunaSecret)
			noSecret(t, "cancel", c)
			if c.code != 0 {
				t.Errorf("cancel: %+v", c)
			}
		})
		if s.RunStatus(rid) != "stopped" {
			t.Fatalf("run %s", s.RunStatus(rid))
		}
		checkEqualImport(t, base, tid, r, "Step 5 of the long answer.", `"stop_reason":"cancelled"`)
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret})
		tid, rid := sunaStart(t, s, "please fail now")
		sunaWaitStatus(t, s, rid, "failed")
		r := sunaExport(t, context.Background(), base, tid, "--until-idle")
		checkEqualImport(t, base, tid, r, "rate limit exceeded")
	})
}

// Wrong backend for a URL, a missing token and a refused one: one clear
// line, exit 1, and never the token.
func TestExportSunaErrors(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitStatus(t, s, rid, "completed")
	_, mariaBase := fake(t, "head", 20)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no token", []string{"export", tid, "--backend", "suna", "--url", base}, "pass --token"},
		{"wrong token", []string{"export", tid, "--backend", "suna", "--url", base, "--token", sunaSecret + "x"}, "403"},
		{"maria at a Suna URL", []string{"export", tid, "--backend", "maria", "--url", base, "--token", sunaSecret}, base},
		{"suna at a maria URL", []string{"export", tid, "--backend", "suna", "--url", mariaBase, "--token", sunaSecret}, mariaBase},
		{"tail, no token", []string{"tail", tid, "--backend", "suna", "--url", base}, "pass --token"},
		{"record", []string{"record", tid, "-o", filepath.Join(t.TempDir(), "x.sse"), "--backend", "suna", "--url", base, "--token", sunaSecret}, "perch export " + tid + " --backend suna"},
	} {
		r := run(t, "", tc.args...)
		noSecret(t, tc.name, r)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// Probed, not named: perch says what answered, then exports.
	r := must(t, run(t, "", "export", tid, "--url", base, "--token", sunaSecret, "--format", "jsonl", "-v"))
	noSecret(t, "probed export", r)
	if r.stderr != "perch: "+base+" answers as suna\n" || r.stdout != sunaImport(t, base, sunaSecret, tid) {
		t.Errorf("probed export: %+v", r)
	}
}

// perch tail prints the thread as it grows and, after the run's end (the
// history read again), nothing twice.
func TestTailSuna(t *testing.T) {
	t.Parallel()
	s, base := sunaAPI(t, fakesuna.Options{Token: sunaSecret, Hold: true})
	tid, rid := sunaStart(t, s, "What is in my workspace?")
	sunaWaitHeld(t, s, rid)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, env, []string{"tail", tid, "--backend", "suna", "--url", base, "--token", sunaSecret})
	}()
	waitOut := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("tail never showed %s:\n%s\nstderr: %s", what, out.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOut("the prompt", func(s string) bool { return strings.Contains(s, "▌ You\n  What is in my workspace?") })
	histories := s.Requests("GET /threads/{id}/messages")
	s.Release()
	sunaWaitStatus(t, s, rid, "completed")
	waitOut("the answer", func(s string) bool { return strings.Contains(s, "café ☕ ready") })
	// The history read again at the run's end must not print the thread
	// again: wait for that read, then give perch a moment to handle it.
	deadline := time.Now().Add(60 * time.Second)
	for s.Requests("GET /threads/{id}/messages") == histories {
		if time.Now().After(deadline) {
			t.Fatal("tail never read the history again after the run")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	got := out.String()
	if n := strings.Count(got, "▌ You\n"); n != 1 {
		t.Errorf("the prompt shows %d times:\n%s", n, got)
	}
	if n := strings.Count(got, "café ☕ ready"); n != 1 {
		t.Errorf("the answer shows %d times:\n%s", n, got)
	}
	if !strings.HasPrefix(got, "Following suna session ") || strings.Contains(got, sunaSecret) || strings.Contains(errb.String(), sunaSecret) {
		t.Errorf("tail output:\n%s\nstderr: %s", got, errb.String())
	}
}
