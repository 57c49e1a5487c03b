package tui

import (
	"github.com/charmbracelet/x/ansi"
)

// warmUp does, on another goroutine, the one-time work the first frame
// would otherwise wait for while Bubble Tea sets up the terminal and the
// task list is fetched. The renderer measures cells with go-runewidth,
// whose first lookup above U+02FF builds its 2 MB width tables (10 to
// 40 ms, mostly page faults); every frame has such runes (─, ▌, ●).
// The build is guarded by a sync.Once, so a frame that comes first simply
// waits for it as it would have anyway.
func warmUp() {
	go ansi.StringWidthWc("─")
}
