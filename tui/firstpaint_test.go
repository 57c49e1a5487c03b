package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tui/chrome"
)

// TestFirstPaintIsTheFirstFrame holds perch's first paint
// (chrome.FirstTaskList, drawn by perch before it hands the terminal to
// perch-ui) to the root model's first frame with the same task list:
// byte for byte, styles included, so that nothing on the screen changes
// when perch-ui takes over.
func TestFirstPaintIsTheFirstFrame(t *testing.T) {
	home := "/home/ada"
	at := func(d time.Duration) time.Time { return fixedNow.Add(-d) }
	many := make([]events.Task, 0, 40)
	for i := range 40 {
		many = append(many, events.Task{ID: "task-" + string(rune('a'+i%26)) + itoa(i), Name: "task number " + itoa(i),
			Status:  []string{events.StatusIdle, events.StatusGenerating, events.StatusStopped}[i%3],
			Created: at(time.Duration(i) * time.Minute), Cwd: home + "/src/p" + itoa(i), Model: "m/" + itoa(i%4)})
	}
	mixed := []events.Task{
		{ID: "0b1c-2d", Name: "", Status: events.StatusIdle, Created: at(3 * time.Hour)},
		{ID: "1c2d-3e", Name: "fix the \x1b[31mflaky\x1b[0m test\nnow", Status: events.StatusGenerating, Created: at(time.Minute),
			Updated: at(10 * time.Second), Cwd: home, Model: "anthropic/claude-sonnet-4.5",
			QueuedMessages: []events.QueuedMessage{{ID: "q1", Text: "and then"}}},
		{ID: "2d3e-4f", Name: "a very long task name " + strings.Repeat("that goes on ", 20), Status: events.StatusStopped,
			Created: at(72 * time.Hour), Cwd: "/srv/" + strings.Repeat("deep/", 30) + "dir"},
		{ID: "3e4f-50", Name: "宽字符的任务", Status: events.StatusIdle, Created: at(2 * time.Hour), Cwd: "/tmp"},
	}
	for _, tt := range []struct {
		name  string
		tasks []events.Task
		theme string
		env   map[string]string
		w, h  int
		caps  *Capabilities // a live backend's (nil: maria's daemon)
	}{
		{"mixed 120x40 dark", mixed, "auto", nil, 120, 40, nil},
		{"mixed 80x20 light", mixed, "light", nil, 80, 20, nil},
		{"mixed no colour", mixed, "auto", map[string]string{"NO_COLOR": "1"}, 100, 30, nil},
		{"one row per task", mixed, "dark", nil, 70, 7, nil},
		{"a tiny terminal", mixed, "auto", nil, 12, 3, nil},
		{"more tasks than rows", many, "auto", nil, 120, 40, nil},
		{"no tasks", []events.Task{}, "auto", nil, 90, 24, nil},
		{"suna's threads", mixed, "auto", nil, 120, 40, &Capabilities{Send: true, Cancel: true, Backend: "suna"}},
		{"pynchy's chats", mixed, "light", nil, 80, 24, &Capabilities{Send: true, Backend: "pynchy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			getenv := func(k string) string { return tt.env[k] }
			var b Backend = &fakeBackend{tasks: tt.tasks}
			if tt.caps != nil {
				b = capsBackend{b.(*fakeBackend), *tt.caps}
			}
			cfg := Config{Theme: tt.theme, Getenv: getenv, Home: home, Now: func() time.Time { return fixedNow }}
			cfg.tasks = knownTasks(tt.tasks)
			m := New(ctx, b, cfg, nil)
			m.Init()
			m.resize(tt.w, tt.h)
			got := m.View().Content

			caps := capabilitiesOf(b)
			th := styles.ThemeFromEnv(tt.theme, getenv, true)
			want := strings.Join(chrome.New(th).FirstTaskList(tt.tasks, caps.Create, caps.Backend, tt.w, tt.h, fixedNow, home), "\n")
			if got != want {
				t.Fatalf("perch's first paint differs from perch-ui's first frame\nperch-ui:\n%s\nperch:\n%s\n(raw %q\nvs %q)",
					ansi.Strip(got), ansi.Strip(want), got, want)
			}
			if !strings.Contains(ansi.Strip(got), "◌ connecting") {
				t.Fatalf("the first frame should say the stream is connecting:\n%s", ansi.Strip(got))
			}
		})
	}
}

// capsBackend is a fake backend with a live system's capabilities.
type capsBackend struct {
	*fakeBackend
	caps Capabilities
}

func (b capsBackend) Capabilities() Capabilities { return b.caps }
