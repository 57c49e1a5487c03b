package suna_test

import (
	"context"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/suna"
)

func summary(t *testing.T, f *fakeAPI, tid string) events.RunSummary {
	t.Helper()
	s, err := open(t, f, "").RunSummary(context.Background(), tid)
	if err != nil {
		t.Fatalf("RunSummary: %v", err)
	}
	return s
}

// The last of two runs: its reply and its usage, not the first's.
func TestRunSummaryCompleted(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{})
	tid, rid := startRun(t, f, "", "please fail now")
	waitStatus(t, f, rid, "failed")
	_, rid = startRun(t, f, tid, "What is in my workspace?")
	waitStatus(t, f, rid, "completed")
	s := summary(t, f, tid)
	if s.End != events.RunEndOK || s.Reason != "" {
		t.Errorf("end %q (%q), want ok", s.End, s.Reason)
	}
	if !strings.Contains(s.LastReply, "café ☕ ready") {
		t.Errorf("last reply %q, want the run's answer", s.LastReply)
	}
	if !s.HasUsage || s.Tokens() <= 0 {
		t.Errorf("usage %+v, want the run's tokens", s.Usage)
	}
}

func TestRunSummaryFailed(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{})
	tid, rid := startRun(t, f, "", "What is in my workspace?")
	waitStatus(t, f, rid, "completed")
	_, rid = startRun(t, f, tid, "please fail now")
	waitStatus(t, f, rid, "failed")
	s := summary(t, f, tid)
	if s.End != events.RunEndFailed || !strings.Contains(s.Reason, "rate limit exceeded") {
		t.Errorf("end %q (%q), want failed with the LLM's error", s.End, s.Reason)
	}
	if strings.Contains(s.LastReply, "café") {
		t.Errorf("last reply %q is the run before's", s.LastReply)
	}
}

func TestRunSummaryStopped(t *testing.T) {
	t.Parallel()
	f := newFake(t, fake.Options{Hold: true})
	tid, rid := startRun(t, f, "", "Tell me a long story, slow please")
	l := open(t, f, "")
	waitStatus(t, f, rid, "running")
	if _, err := l.Cancel(context.Background(), tid); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, f, rid, "stopped")
	if s := summary(t, f, tid); s.End != events.RunEndCancelled {
		t.Errorf("end %q (%q), want cancelled", s.End, s.Reason)
	}
}
