package cli

import (
	"context"
	"os"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"

	"github.com/perch-tui/perch/backend"
	"github.com/perch-tui/perch/internal/firstpaint"
	"github.com/perch-tui/perch/internal/termprofile"
	"github.com/perch-tui/perch/styles"
	"github.com/perch-tui/perch/tui/chrome"
)

// sessionsWait bounds the first paint's request for a system's sessions;
// a slower server gets no first paint, and perch-ui asks again.
const sessionsWait = 2 * time.Second

// paintFirst draws the task list before bare perch hands the terminal
// over to perch-ui (package firstpaint says why and how): perch probes the
// URL, as perch-ui would, gets the task list (maria's probe carries it;
// Suna's threads and pynchy's chats are asked for), and draws the frame
// perch-ui will draw first. It returns what perch-ui's
// environment must get, and undo, which takes the frame back when the
// hand-over fails. Anything unusual (no URL, a named backend, not a
// terminal, a probe that fails) draws nothing and leaves it all to
// perch-ui, as before; when the probe did answer, perch-ui is told which
// system it found, so that it does not say so a second time, and when the
// list was drawn, the list too (firstpaint.EnvTasks), so that it does not
// ask again.
func (c *conn) paintFirst(ctx context.Context, env Env, theme string) (handover []string, undo func()) {
	undo = func() {}
	in, okIn := env.Stdin.(*os.File)
	out, okOut := env.Stdout.(*os.File)
	if !firstpaint.Supported || !okIn || !okOut || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, undo
	}
	if t := getenv(env, "TERM"); t == "" || t == "dumb" {
		return nil, undo
	}
	if strings.TrimSpace(c.url) == "" && strings.TrimSpace(getenv(env, "PERCH_URL")) == "" {
		return nil, undo
	}
	if name, _, err := c.settings(env); err != nil || name != "" {
		return nil, undo
	}
	b, err := c.open(ctx, env)
	if err != nil {
		return nil, undo // perch-ui asks again and says what failed
	}
	found := []string{"PERCH_BACKEND=" + b.Name()}
	// The list perch-ui shows first: maria's probe read it; another
	// system's sessions are asked for (its probe does not carry them), and
	// its name is on the status row (tui/bridge names every system but
	// maria).
	tasks, name := c.probedTasks, ""
	if b.Name() != backend.Maria {
		sctx, cancel := context.WithTimeout(ctx, sessionsWait)
		ts, err := b.Sessions(sctx)
		cancel()
		if err != nil {
			return found, undo
		}
		tasks, name = ts, b.Name()
	}
	if tasks == nil {
		return found, undo
	}
	w, h, err := term.GetSize(out.Fd())
	if err != nil || w <= 0 || h <= 0 {
		return found, undo
	}
	// lipgloss detected the profile at initialisation with TMUX hidden;
	// tmux was asked on the side meanwhile (internal/tmuxinfo).
	p := lipgloss.Writer.Profile
	if env.TmuxTrueColor != nil {
		p = termprofile.WithTmux(p, true, env.Getenv, env.TmuxTrueColor)
	}
	th := styles.ThemeFromEnv(theme, env.Getenv, true)
	lines := chrome.New(th).FirstTaskList(tasks, b.Capabilities().Create, name, w, h, time.Now(), env.Home)
	frame, err := firstpaint.Frame(lines, p)
	if err != nil {
		return found, undo
	}
	modes, err := firstpaint.Quiet(in)
	if err != nil {
		return found, undo
	}
	undo = func() { firstpaint.Undo(in, out, modes) }
	if _, err := out.Write(frame); err != nil {
		undo()
		return found, func() {}
	}
	handover = []string{firstpaint.Env + "=" + firstpaint.Handover{Profile: p, Modes: modes}.Encode()}
	if ts, ok := firstpaint.EncodeTasks(tasks); ok {
		// perch-ui shows this list at once, without probing again.
		handover = append(handover, found[0], firstpaint.EnvTasks+"="+ts)
	}
	return handover, undo
}
