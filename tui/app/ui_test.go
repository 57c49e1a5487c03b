package app

import (
	"time"

	"context"
	"errors"
	"testing"

	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/cli"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/outbox"
	"github.com/perch-tui/perch/sse"
)

type noteSource struct{}

func (noteSource) Tasks(context.Context) ([]events.Task, error)      { return nil, nil }
func (noteSource) Task(context.Context, string) (events.Task, error) { return events.Task{}, nil }
func (noteSource) Note() string                                      { return "replay of x — read-only" }
func (noteSource) StreamDaemon(context.Context, func(events.Frame), func(sse.ConnState)) error {
	return nil
}
func (noteSource) StreamTaskEvents(context.Context, string, func(events.Event), func(sse.ConnState)) error {
	return nil
}

// TestReadOnlyRefusesChanges: the UI's backend over a read-only source
// refuses every change and says why in its capabilities.
func TestReadOnlyRefusesChanges(t *testing.T) {
	r := readOnly{noteSource{}}
	ctx := context.Background()
	if c := r.Capabilities(); c.Send || c.Cancel || c.Create || c.Note != "replay of x — read-only" {
		t.Errorf("capabilities %+v", c)
	}
	if _, err := r.Send(ctx, "t", "hi", false); !errors.Is(err, errReadOnly) {
		t.Errorf("Send: %v", err)
	}
	if _, err := r.Cancel(ctx, "t"); !errors.Is(err, errReadOnly) {
		t.Errorf("Cancel: %v", err)
	}
	if _, err := r.CreateTask(ctx, maria.CreateTaskRequest{}); !errors.Is(err, errReadOnly) {
		t.Errorf("CreateTask: %v", err)
	}
}

func TestConfigCarriesTheOptions(t *testing.T) {
	c := terminalUI{}.config(cliOptions(nil))
	if c.Outbox != nil || c.TaskID != "t1" || c.Theme != "light" || c.Model != "m" {
		t.Errorf("config without an outbox: %+v", c)
	}
	store := outbox.NewMemStore()
	c = terminalUI{}.config(cliOptions(store))
	if c.Outbox == nil || c.Outbox.Store != store {
		t.Errorf("config with an outbox: %+v", c)
	}
	if c.ColorProfile != nil {
		t.Error("config without a tmux query has a ColorProfile: lipgloss's own detection is complete")
	}
	c = terminalUI{Options{TmuxTrueColor: func(time.Duration) (bool, bool) { return true, true }}}.config(cliOptions(nil))
	if c.ColorProfile == nil {
		t.Error("config with a tmux query has no ColorProfile")
	}
}

func cliOptions(store outbox.Store) cli.UIOptions {
	o := cli.UIOptions{TaskID: "t1", Theme: "light", Model: "m"}
	if store != nil {
		o.OutboxStore = store
	}
	return o
}
