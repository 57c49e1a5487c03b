package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/perch-tui/perch/outbox"
)

// demoState is where perch demo keeps its held messages: a file outbox
// under a temporary state directory, so that `perch send --hold` and
// `perch queue` from another terminal (with XDG_STATE_HOME set to it) find
// them, and the user's own state directory is left alone.
type demoState struct {
	dir   string // the temporary XDG_STATE_HOME
	store *outbox.FileStore
}

// newDemoState makes the demo's state directory for the daemon at url.
func newDemoState(url string) (*demoState, error) {
	dir, err := os.MkdirTemp("", "perch-demo-state-")
	if err != nil {
		return nil, fmt.Errorf("demo: make its state directory: %w", err)
	}
	root := outbox.DefaultRoot(func(k string) string {
		if k == "XDG_STATE_HOME" {
			return dir
		}
		return ""
	}, "")
	return &demoState{dir: dir, store: outbox.OpenFileStore(root, url)}, nil
}

// banner is what the demo shows above its composer: how to hold a message
// for the demo's session from another terminal, and that held messages do
// not outlive the demo.
func (s *demoState) banner(id, url string) string {
	return "From another terminal: XDG_STATE_HOME=" + s.dir + " perch send " + shortID(id) + " --hold --url " + url + " 'Now write the tests.'\n" +
		"Held messages show here, go when the agent is idle, never after the demo ends."
}

// finish removes the state directory when no message is left in it, else
// says where the messages stay and that nothing will deliver them.
func (s *demoState) finish(w io.Writer) {
	left := 0
	if ids, err := s.store.Tasks(); err == nil {
		for _, id := range ids {
			if q, err := s.store.Load(id); err == nil {
				left += q.Len()
			}
		}
	}
	if left == 0 {
		_ = os.RemoveAll(s.dir)
		return
	}
	what, verb := "1 held message", "it stays"
	if left != 1 {
		what, verb = fmt.Sprintf("%d held messages", left), "they stay"
	}
	fmt.Fprintf(w, "perch demo: its daemon is gone, so %s will never be delivered; %s in %s until you delete it\n",
		what, verb, filepath.Join(s.dir, "perch"))
}
