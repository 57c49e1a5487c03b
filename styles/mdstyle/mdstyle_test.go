package mdstyle

import (
	"testing"

	"github.com/perch-tui/perch/styles"
)

func TestMarkdownLean(t *testing.T) {
	for _, th := range []styles.Theme{styles.Dark, styles.Light, styles.NoColor} {
		c := Config(th)
		if c.Document.Color != nil || c.Paragraph.Color != nil || c.Text.Color != nil {
			t.Errorf("%v: document/paragraph/text colour not cleared", th)
		}
		if c.Document.Margin == nil || *c.Document.Margin != 0 {
			t.Errorf("%v: margin not zeroed", th)
		}
	}
	// The glamour globals must stay untouched.
	if Config(styles.Dark).H1.Color == nil {
		t.Error("dark H1 lost its colour")
	}
}
