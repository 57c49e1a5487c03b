package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

// httpBackend posts to a test server: POST /send, GET /count?text=.
type httpBackend struct {
	stubBackend
	base string
}

func (h httpBackend) Send(ctx context.Context, task string, m client.Message) (client.SendResult, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/send", bytes.NewReader([]byte(m.Text)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return client.SendResult{}, err
	}
	defer resp.Body.Close()
	id, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return client.SendResult{}, client.Retryable(fmt.Errorf("status %d", resp.StatusCode))
	}
	return client.SendResult{ID: string(id)}, nil
}

func (h httpBackend) Received(ctx context.Context, task, text string, since time.Time) (int, error) {
	resp, err := http.Get(h.base + "/count?text=" + url.QueryEscape(text))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var n int
	return n, json.NewDecoder(resp.Body).Decode(&n)
}

// TestHelperProcess is the other perch of the multi-process tests; it does
// nothing unless started by them.
func TestHelperProcess(t *testing.T) {
	dir, base := os.Getenv("OUTBOX_HELPER_DIR"), os.Getenv("OUTBOX_HELPER_URL")
	if dir == "" {
		t.Skip("helper process only")
	}
	d := &Deliverer{Store: NewFileStore(dir), Backend: httpBackend{base: base}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := d.Flush(ctx, task)
	fmt.Printf("delivered %d\n", len(rs))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// countingServer counts each text it receives.
func countingServer(t *testing.T, delay time.Duration) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/send":
			b, _ := io.ReadAll(r.Body)
			time.Sleep(delay)
			mu.Lock()
			got[string(b)]++
			n := len(got)
			mu.Unlock()
			fmt.Fprint(w, n)
		case "/count":
			mu.Lock()
			n := got[r.URL.Query().Get("text")]
			mu.Unlock()
			json.NewEncoder(w).Encode(n)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

// Two processes deliver the same task's outbox at once: every message is
// posted exactly once, in order.
func TestTwoProcessesOneDelivery(t *testing.T) {
	if !lockIsCrossProcess {
		t.Skip("no flock on this system")
	}
	srv, counts := countingServer(t, 3*time.Millisecond)
	s := newStore(t)
	const n = 30
	for i := 0; i < n; i++ {
		add(t, s, task, fmt.Sprintf("message %02d", i), IntentSend)
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OUTBOX_HELPER_DIR="+s.Dir(), "OUTBOX_HELPER_URL="+srv.URL)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	got := counts()
	for i := 0; i < n; i++ {
		if c := got[fmt.Sprintf("message %02d", i)]; c != 1 {
			t.Errorf("message %02d posted %d times", i, c)
		}
	}
	q := load(t, s, task)
	if q.Len() != 0 || len(q.History()) != n {
		t.Fatalf("pending %d, sent %d", q.Len(), len(q.History()))
	}
	// The order of the acceptance ids is the queue order.
	for i, m := range q.History() {
		if m.Text != fmt.Sprintf("message %02d", i) || m.DaemonID != fmt.Sprint(i+1) {
			t.Fatalf("history %d: %+v", i, m)
		}
	}
	t.Logf("helper outputs: %q, %q", outs[0], outs[1])
}
