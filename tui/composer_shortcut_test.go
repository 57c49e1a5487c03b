package tui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// twinComposers are two composers in one state: a takes the shortcut for
// plain drafts (typeDirect, plainView), b always goes through the
// textarea's Update and View.
func twinComposers(t themeKind, width int) (a, b *composer) {
	ca, cb := newComposer(t), newComposer(t)
	cb.noShortcut = true
	ca.setSize(width, 8)
	cb.setSize(width, 8)
	return &ca, &cb
}

// sameComposer fails when a and b differ in anything the UI reads.
func sameComposer(t *testing.T, step string, a, b *composer) {
	t.Helper()
	if a.value() != b.value() || a.ta.Line() != b.ta.Line() || a.ta.Column() != b.ta.Column() ||
		a.ta.Height() != b.ta.Height() || a.ta.ScrollYOffset() != b.ta.ScrollYOffset() || a.ta.Focused() != b.ta.Focused() {
		t.Fatalf("%s: state differs:\n shortcut: %q line %d col %d height %d offset %d\n textarea: %q line %d col %d height %d offset %d",
			step, a.value(), a.ta.Line(), a.ta.Column(), a.ta.Height(), a.ta.ScrollYOffset(),
			b.value(), b.ta.Line(), b.ta.Column(), b.ta.Height(), b.ta.ScrollYOffset())
	}
	h := a.height(8)
	la, lb := strings.Join(a.lines(h), "\n"), strings.Join(b.lines(h), "\n")
	if la != lb {
		t.Fatalf("%s: drawn differently (value %q, column %d):\n shortcut: %q\n textarea: %q", step, a.value(), a.ta.Column(), la, lb)
	}
	ka, kb := a.cursor(), b.cursor()
	if !reflect.DeepEqual(ka, kb) {
		t.Fatalf("%s: cursor differs: %+v vs %+v", step, ka, kb)
	}
}

// TestComposerShortcutDrawsAsTheTextarea: a plain draft is drawn byte for
// byte as the textarea draws it, in every theme, focused or not, at every
// cursor position and up to the last length that fits.
func TestComposerShortcutDrawsAsTheTextarea(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	shortcut := 0
	for _, th := range []themeKind{themeDark, themeLight, themeNoColor} {
		for _, width := range []int{6, 20, 57, 120} {
			for _, focused := range []bool{true, false} {
				a, b := twinComposers(th, width)
				if !focused {
					a.blur()
					b.blur()
				}
				for n := 1; n <= width; n++ {
					var v strings.Builder
					for range n {
						v.WriteByte(byte(0x20 + r.IntN(0x5f)))
					}
					if r.IntN(4) == 0 {
						v.WriteString(" ") // a trailing space: the textarea wraps at spaces
					}
					a.setValue(v.String())
					b.setValue(v.String())
					for _, col := range []int{0, n / 2, n - 1, n} {
						a.ta.SetCursorColumn(col)
						b.ta.SetCursorColumn(col)
						if a.plainDraft(a.value(), 0) {
							shortcut++
						}
						sameComposer(t, fmt.Sprintf("theme %d width %d focused %v value %q col %d", th, width, focused, v.String(), col), a, b)
					}
				}
			}
		}
	}
	if shortcut < 500 {
		t.Fatalf("only %d of the cases were plain drafts: the shortcut is not being tested", shortcut)
	}
}

// TestComposerShortcutTypesAsTheTextarea types random keys into both
// composers: printable text (taken directly while the draft stays plain),
// editing and movement keys, multi-byte text, pastes and newlines (all the
// textarea's), across the width where the draft wraps.
func TestComposerShortcutTypesAsTheTextarea(t *testing.T) {
	t.Parallel()
	keys := []string{"backspace", "left", "right", "home", "end", "ctrl+w", "alt+backspace", "ctrl+u", "ctrl+k",
		"ctrl+a", "ctrl+e", "alt+f", "alt+b", "delete", "ctrl+d", "up", "down", "shift+enter", "ctrl+j", "shift+left",
		"alt+u", "alt+l", "alt+c", "ctrl+t", "space"}
	direct := 0
	for seed := uint64(1); seed <= 24; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		th := []themeKind{themeDark, themeLight, themeNoColor}[seed%3]
		width := []int{10, 33, 120}[seed%3]
		a, b := twinComposers(th, width)
		for i := range 300 {
			var msg tea.Msg
			switch x := r.IntN(100); {
			case x < 70:
				s := string(rune(0x21 + r.IntN(0x5e)))
				msg = tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
			case x < 72:
				msg = tea.KeyPressMsg{Code: 'a', Mod: tea.ModShift, Text: "A"}
			case x < 74:
				msg = tea.KeyPressMsg{Code: 'é', Text: "é"}
			case x < 75:
				msg = tea.PasteMsg{Content: "pasted words\tand a tab"}
			case x < 76:
				if r.IntN(2) == 0 {
					a.blur()
					b.blur()
				} else {
					a.focus()
					b.focus()
				}
				continue
			default:
				msg = keyMsg(keys[r.IntN(len(keys))])
			}
			before := a.value()
			if k, ok := msg.(tea.KeyPressMsg); ok && a.ta.Focused() && a.plainDraft(before, len(k.Text)) && k.Text != "" {
				direct++
			}
			a.update(msg)
			b.update(msg)
			sameComposer(t, fmt.Sprintf("seed %d key %d (%v) after %q", seed, i, msg, before), a, b)
		}
	}
	if direct < 300 {
		t.Fatalf("only %d keys could take the shortcut: it is not being tested", direct)
	}
}
