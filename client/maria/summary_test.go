package maria

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/fakedaemon"
)

// summaryAfterEnd asks RunSummary until the task's last run has ended
// (the replay read while it runs has no end yet).
func summaryAfterEnd(t *testing.T, b *Backend, id string) events.RunSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		s, err := b.RunSummary(ctx, id)
		if err != nil {
			t.Fatalf("RunSummary: %v", err)
		}
		if s.End != events.RunEndUnknown {
			return s
		}
	}
}

func TestRunSummaryFailedRun(t *testing.T) {
	d, base := fake(t, 50)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir(), Message: "trigger a provider error"})
	if err != nil {
		t.Fatal(err)
	}
	s := summaryAfterEnd(t, open(t, base), id)
	if s.End != events.RunEndFailed {
		t.Fatalf("end = %q, want failed", s.End)
	}
	if !strings.Contains(s.Reason, "No auth credentials found") {
		t.Errorf("reason = %q, want the provider's words", s.Reason)
	}
}

func TestRunSummaryFinishedRun(t *testing.T) {
	d, base := fake(t, 50)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir(), Message: "What does this project do? Look at the README."})
	if err != nil {
		t.Fatal(err)
	}
	s := summaryAfterEnd(t, open(t, base), id)
	if s.End != events.RunEndOK || s.Reason != "" {
		t.Fatalf("end = %q (%q), want ok", s.End, s.Reason)
	}
	if s.LastReply == "" {
		t.Error("no last reply")
	}
	if !s.HasUsage || s.Tokens() <= 0 {
		t.Errorf("usage = %+v, want the run's tokens", s.Usage)
	}
}

func TestRunSummaryCancelledRun(t *testing.T) {
	d := fakedaemon.New(fakedaemon.Options{Speed: 50, Seed: 7, HoldSlowTools: true})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); d.ReleaseSlowTools() })
	b := open(t, srv.URL)
	id, err := d.CreateTask(fakedaemon.CreateRequest{Cwd: t.TempDir(), Message: "run the slow benchmarks"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		task, err := b.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status == events.StatusGenerating {
			break
		}
	}
	if _, err := b.Cancel(ctx, id); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if s := summaryAfterEnd(t, b, id); s.End != events.RunEndCancelled {
		t.Fatalf("end = %q, want cancelled", s.End)
	}
}
