package suna_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
)

// TestSessionsAsksBothListsAtOnce: the thread list and the active runs are
// asked together (neither needs the other): the server here answers the
// thread list only once the active runs were asked, so asking one after
// the other fails.
func TestSessionsAsksBothListsAtOnce(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agent-runs/active", func(w http.ResponseWriter, r *http.Request) {
		close(asked)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active_runs":[{"id":"r1","thread_id":"t1","status":"running"}]}`))
	})
	mux.HandleFunc("GET /v1/threads", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			http.Error(w, `{"detail":"the active runs were not asked meanwhile"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"threads":[{"thread_id":"t1","name":"one"},{"thread_id":"t2","name":"two"}]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	l, err := suna.OpenTuned(client.Config{URL: srv.URL + "/v1", Client: httpClient(t)}, time.Second, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := l.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].ID != "t1" || ss[0].Status != events.StatusGenerating || ss[1].Status != events.StatusIdle {
		t.Errorf("sessions %+v", ss)
	}
}
