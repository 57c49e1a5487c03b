package main

import (
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
)

// bareArg makes perch-bench run the bare Bubble Tea program instead of the
// benchmark: the idle CPU of an attached TUI is measured beside it, since
// what the framework costs while nothing happens (its renderer's ticker)
// is the floor no Bubble Tea program goes below.
const bareArg = "bare-tea"

// bareModel is a static view that handles nothing but q.
type bareModel struct{}

func (bareModel) Init() tea.Cmd { return nil }

func (m bareModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return m, tea.Quit
	}
	return m, nil
}

func (bareModel) View() tea.View {
	return tea.NewView("a bare Bubble Tea program with a static view (q quits)")
}

func runBare() int {
	if _, err := tea.NewProgram(bareModel{}).Run(); err != nil {
		fmt.Fprintln(os.Stderr, "bare-tea:", err)
		return 1
	}
	return 0
}

// idleCPU measures the CPU time of each process in pids over d, all in
// the same window, as percentages of one core.
func idleCPU(pids []int, d time.Duration) ([]float64, error) {
	c0 := make([]time.Duration, len(pids))
	for i, pid := range pids {
		c, err := cpuTime(pid)
		if err != nil {
			return nil, err
		}
		c0[i] = c
	}
	time.Sleep(d)
	pct := make([]float64, len(pids))
	for i, pid := range pids {
		c, err := cpuTime(pid)
		if err != nil {
			return nil, err
		}
		pct[i] = 100 * float64(c-c0[i]) / float64(d)
	}
	return pct, nil
}
