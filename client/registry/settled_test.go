package registry

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// TestEveryFixtureStreamedIsItsGolden: written item by item as the
// timeline settles them, each released at once (how perch export keeps a
// day-long session out of memory), the import of every fixture of every
// system is still its golden.
//
// Items settle at run ends, and with SettleAfter (how imports settle
// files without run ends) after a few items: 8 here, far fewer than an
// import waits, and enough for every fixture (4 is not: Claude Code
// reports an interrupted turn again three items later).
func TestEveryFixtureStreamedIsItsGolden(t *testing.T) {
	t.Parallel()
	for _, settleLag := range []int{0, 8} {
		streamedFixtures(t, settleLag)
	}
}

func streamedFixtures(t *testing.T, settleLag int) {
	for kind, files := range fixtures(t) {
		for _, f := range files {
			s, k, err := Default().Choose(f, kind, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			w := transcript.NewJSONLWriter(&got)
			tl := events.NewTimeline()
			tl.SettleAfter(settleLag)
			var werr error
			err = Stream(context.Background(), s, k, ingest.Options{}, func(ev events.Event) {
				tl.Apply(ev)
				n := tl.Settled()
				for _, it := range tl.Items()[:n] {
					werr = errors.Join(werr, w.Item(it))
				}
				tl.Release(n)
			})
			s.Close()
			var ue *ingest.UsageError
			if errors.As(err, &ue) {
				continue // needs a flag (--chat, --session): its own tests cover it
			}
			if err != nil || werr != nil {
				t.Fatalf("%s: %v %v", f, err, werr)
			}
			for _, it := range tl.Items() {
				if err := w.Item(it); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.End(tl); err != nil {
				t.Fatal(err)
			}
			stem, _, _ := strings.Cut(filepath.Base(f), ".")
			want, _ := os.ReadFile(golden(f, stem))
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s (%s), settled %d items after: streamed import differs from its golden:\n%s", f, kind, settleLag, got.Bytes())
			}
		}
	}
}
