package maria

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
)

// TestProbeTasksIsTheDaemonsList: the list the probe hands back is the one
// GET /tasks returns, so the UI can show it instead of asking again; an
// empty list is a list (not nil), and a list that does not decode is nil
// with the verdict still maria.
func TestProbeTasksIsTheDaemonsList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	d, base := fake(t, 20)
	for range 2 {
		if _, err := d.SeedDemo(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ProbeTasks(ctx, client.Config{URL: base})
	if err != nil {
		t.Fatalf("the fake daemon does not answer as maria: %v", err)
	}
	cl, err := NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cl.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("probe's list\n%+v\nGET /tasks\n%+v", got, want)
	}

	for _, tt := range []struct {
		name, data string
		wantNil    bool
	}{
		{"empty", `{"tasks":[]}`, false},
		{"a task that does not decode", `{"tasks":[{"id":17}]}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := imitation(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: daemon.tasks.synchronized\ndata: "+tt.data+"\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			})
			ts, err := ProbeTasks(ctx, client.Config{URL: u + "/v1"})
			if err != nil {
				t.Fatalf("not maria: %v", err)
			}
			if (ts == nil) != tt.wantNil || len(ts) != 0 {
				t.Fatalf("tasks %#v, want nil: %v", ts, tt.wantNil)
			}
		})
	}
}
