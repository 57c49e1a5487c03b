package cli

import (
	"strings"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client/registry"
)

// seenMarker writes the seen marks of the server at url (as the user gave
// it: the board keys its sources so) into the state directory's marks
// file, the one every perch process of that directory shares, so that
// what perch attach showed is read on the board too.
func seenMarker(env Env, url string) func(session string, at time.Time) error {
	if url == "" {
		return nil
	}
	seen := board.OpenSeen(board.SeenFile(outboxRoot(env)))
	src := registry.RedactURL(strings.TrimSpace(url))
	return func(session string, at time.Time) error {
		_, err := seen.Save(board.Marks{board.Key(src, session): at})
		return err
	}
}
