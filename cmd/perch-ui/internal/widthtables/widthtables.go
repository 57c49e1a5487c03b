// Package widthtables starts building go-runewidth's width tables on a
// goroutine during perch-ui's package initialisation. Every frame of the
// UI measures runes above U+02FF (through charmbracelet/x/ansi), whose
// first lookup builds the 2 MB tables: about 8 ms of processor time on a
// quiet core, mostly page faults. Package initialisation runs on one
// core; this package depends on go-runewidth alone, so Go initialises it
// before chroma's lexers and styles (about 25 ms), and the build runs on
// the other core meanwhile instead of after main, beside the probe and
// the terminal setup. tui.Prepare starts it again and finds it done or
// under way.
//
// Imported by cmd/perch-ui's main only: perch hands every command that
// opens the UI to perch-ui, which is rarely started for anything else.
package widthtables

import "github.com/mattn/go-runewidth"

func init() {
	go runewidth.RuneWidth('─')
}
