package pynchy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/pynchy"
)

func runSummary(t *testing.T, fs *fakeServer) events.RunSummary {
	t.Helper()
	s, err := openBackend(t, fs.url).(client.RunSummarizer).RunSummary(context.Background(), chat)
	if err != nil {
		t.Fatalf("RunSummary: %v", err)
	}
	return s
}

// say sends a message to the chat and waits for its run to end.
func say(t *testing.T, fs *fakeServer, text string, sends int) {
	t.Helper()
	if err := fs.srv.Say(chat, text); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run to end", func() bool { return fs.srv.Sends(chat) == sends && !fs.srv.Active(chat) })
}

func TestRunSummaryFinished(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: -1})
	say(t, fs, "this one will fail", 1)
	say(t, fs, "list the files", 2)
	s := runSummary(t, fs)
	if s.End != events.RunEndOK || s.Reason != "" {
		t.Errorf("end %q (%q), want ok", s.End, s.Reason)
	}
	if s.LastReply == "" {
		t.Error("no last reply")
	}
	if !s.HasUsage || s.Tokens() <= 0 || !s.Usage.HasCost || s.Usage.CostUSD <= 0 {
		t.Errorf("usage %+v, want the run's tokens and cost", s.Usage)
	}
}

func TestRunSummaryFailed(t *testing.T) {
	noLeaks(t)
	fs := startFake(t, fake.Options{StepDelay: -1})
	say(t, fs, "list the files", 1)
	say(t, fs, "this one will fail", 2)
	s := runSummary(t, fs)
	if s.End != events.RunEndFailed || !strings.Contains(s.Reason, "Agent error occurred") {
		t.Errorf("end %q (%q), want failed with the host's message", s.End, s.Reason)
	}
	if !s.Usage.HasCost {
		t.Errorf("usage %+v, want the failed run's cost", s.Usage)
	}
}
