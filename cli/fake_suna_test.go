package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// perch fake-daemon --kind suna serves the fake Suna API, prints the base
// URL to use (never the token) and stops with its context.
func TestFakeDaemonSuna(t *testing.T) {
	t.Parallel()
	const token = "fake-suna-token-42"
	var out, errb lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, env, []string{"fake-daemon", "--kind", "suna", "--addr", "127.0.0.1:0", "--token", token, "--frame-delay", "1ms"})
	}()
	re := regexp.MustCompile(`listening on (http://\S+/v1) `)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no banner: %q %q", out.String(), errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(out.String(), token) || !strings.Contains(out.String(), "perch --backend suna --url "+base) {
		t.Errorf("banner: %q", out.String())
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", base+"/threads", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"thread_id"`) {
		t.Errorf("threads: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d: %s", c, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fake-daemon did not stop")
	}
	if r := run(t, "", "fake-daemon", "--kind", "nope"); r.code == 0 || !strings.Contains(r.stderr, "--kind") {
		t.Errorf("--kind nope: %+v", r)
	}
}
