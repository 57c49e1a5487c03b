package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// TestExportHeap writes a heap profile of `perch export --format jsonl`,
// taken when the export starts writing: the whole session is read, the
// timeline is complete and nothing is written yet, where its live heap is
// largest (docs/performance.md). It runs only when PERCH_HEAP_PROFILE
// names the file and PERCH_URL and PERCH_TASK a session of a daemon
// started apart (`perch fake-daemon --long-session 100000`).
//
//	PERCH_HEAP_PROFILE=/tmp/heap.pb.gz PERCH_URL=… PERCH_TASK=… go test ./cli -run TestExportHeap -v
//	go tool pprof -sample_index=inuse_space -top /tmp/heap.pb.gz
func TestExportHeap(t *testing.T) {
	path, daemon, task := os.Getenv("PERCH_HEAP_PROFILE"), os.Getenv("PERCH_URL"), os.Getenv("PERCH_TASK")
	if path == "" || daemon == "" || task == "" {
		t.Skip("set PERCH_HEAP_PROFILE, PERCH_URL and PERCH_TASK")
	}
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 4096
	// Through a proxy in this process, whose closing ends the client's
	// connections (the package's leak check would see them otherwise).
	target, err := url.Parse(daemon)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	px := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	px.Transport, px.FlushInterval = tr, -1
	srv := httptest.NewServer(px)
	defer srv.Close()
	addr := srv.URL + target.Path
	w := &profileAtFirstWrite{t: t, path: path}
	var errb strings.Builder
	env := Env{Stdin: strings.NewReader(""), Stdout: w, Stderr: &errb,
		Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()}
	if code := Main(context.Background(), env, []string{"export", task, "--url", addr, "--format", "jsonl"}); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errb.String())
	}
	if !w.done {
		t.Fatal("the export wrote nothing")
	}
}

type profileAtFirstWrite struct {
	t    *testing.T
	path string
	done bool
}

func (p *profileAtFirstWrite) Write(b []byte) (int, error) {
	if p.done {
		return len(b), nil
	}
	p.done = true
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.t.Logf("at the first write: heap %.1f MB in use, %.1f MB from the OS, %d collections",
		float64(ms.HeapAlloc)/1e6, float64(ms.Sys)/1e6, ms.NumGC)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	p.t.Logf("live after a collection: %.1f MB", float64(ms.HeapAlloc)/1e6)
	f, err := os.Create(p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		p.t.Fatal(err)
	}
	return io.Discard.Write(b)
}
