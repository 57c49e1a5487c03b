package styles

import (
	"testing"

	"github.com/perch-tui/perch/events"
)

// One glyph per meaning: every outcome has its own mark, and none of
// them is the orphan's.
func TestOneGlyphPerMeaning(t *testing.T) {
	seen := map[string]string{IconOrphan: "orphan"}
	for o := events.OutcomeRunning; o <= events.OutcomeUnknown; o++ {
		g := OutcomeIcon(o)
		if was, ok := seen[g]; ok {
			t.Errorf("%s is the mark of %s and of %s", g, was, o)
		}
		seen[g] = o.String()
	}
}
