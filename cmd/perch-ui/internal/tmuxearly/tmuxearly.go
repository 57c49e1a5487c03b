// Package tmuxearly asks tmux about colour during perch-ui's package
// initialisation (internal/tmuxinfo), before lipgloss's and beside the
// rest (chroma's lexers and styles take some 25 ms). It depends on the
// standard library and tmuxinfo alone, so that Go initialises it before
// lipgloss; main's test holds that order.
//
// Imported by cmd/perch-ui's main only: any other program linking it
// would have TMUX hidden until it called Restore.
package tmuxearly

import (
	"os"

	"github.com/perch-tui/perch/internal/tmuxinfo"
)

// envPainted is internal/firstpaint's Env (a test holds the two equal;
// importing firstpaint would initialise this package after lipgloss):
// perch drew the task list, and hands over the colour profile it drew
// with, so tmux need not be asked, only hidden from lipgloss.
const envPainted = "PERCH_UI_PAINTED"

var query = tmuxinfo.Start(os.Getenv(envPainted) == "")

// Query is the question started at initialisation; nil when perch-ui is
// not inside tmux (lipgloss's detection was complete) or is a test.
func Query() *tmuxinfo.Query { return query }
