package styles

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestThemeFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		flag   string
		env    map[string]string
		isDark bool
		want   Theme
	}{
		{"", nil, true, Dark},
		{"", nil, false, Light},
		{"auto", nil, false, Light},
		{"dark", nil, false, Dark},
		{"light", nil, true, Light},
		{"LIGHT", nil, true, Light},
		{"bogus", nil, true, Dark},
		{"dark", map[string]string{"NO_COLOR": "1"}, true, NoColor},
		{"light", map[string]string{"NO_COLOR": "1"}, true, NoColor},
		{"dark", map[string]string{"NO_COLOR": ""}, true, Dark},
		{"none", nil, true, NoColor},
	}
	for _, tc := range tests {
		if got := ThemeFromEnv(tc.flag, env(tc.env), tc.isDark); got != tc.want {
			t.Errorf("ThemeFromEnv(%q, %v, %v) = %v, want %v", tc.flag, tc.env, tc.isDark, got, tc.want)
		}
	}
	if got := ThemeFromEnv("light", nil, true); got != Light {
		t.Errorf("nil getenv: got %v", got)
	}
}

func TestNoColorHasNoColours(t *testing.T) {
	st := New(NoColor)
	samples := []string{
		st.Tool.Status.OK.Render("x"), st.Tool.Status.Error.Render("x"),
		st.Diff.Add.Render("x"), st.Diff.Del.Render("x"), st.Notice.Warning.Render("x"),
		st.Search.Match.Render("x"), st.Search.Current.Render("x"), st.User.Bar.Render("x"),
		st.Todo.Done.Render("x"), st.Selected.Render("x"), st.Dim.Render("x"),
	}
	for _, s := range samples {
		if hasColour(s) {
			t.Errorf("NoColor style emitted a colour: %q", s)
		}
	}
	// Search matches must still be visible without colour.
	if st.Search.Current.Render("x") == "x" || st.Search.Match.Render("x") == "x" {
		t.Error("NoColor search styles are invisible")
	}
	if st.Chroma != "" {
		t.Error("NoColor should not highlight")
	}
}

func TestThemesDiffer(t *testing.T) {
	d, l := New(Dark), New(Light)
	if d.Tool.Status.OK.Render("x") == l.Tool.Status.OK.Render("x") {
		t.Error("dark and light OK icons are identical")
	}
	if New(Theme(99)).Theme != Dark {
		t.Error("unknown theme should fall back to dark")
	}
}

func TestSpinnerFrame(t *testing.T) {
	seen := map[string]bool{}
	for i := -3; i < 23; i++ {
		f := SpinnerFrame(i)
		if ansi.StringWidth(f) != 1 {
			t.Fatalf("frame %d = %q is not one cell", i, f)
		}
		seen[f] = true
	}
	if len(seen) != 10 {
		t.Errorf("got %d distinct frames", len(seen))
	}
}

func TestIconsAreOneCell(t *testing.T) {
	for _, ic := range []string{IconRunning, IconOK, IconFailed, IconTimedOut, IconError, IconCancelled, IconUnknown, IconPruned,
		IconInfo, IconWarning, IconNotice, IconTodoPending, IconTodoInProgress, IconTodoCompleted,
		IconPriorityHigh, IconPriorityMedium, IconPriorityLow, IconDir, IconFile, IconSymlink, IconOther,
		IconInput, IconOutput, IconCached, BorderThick, BorderSelected, BorderThin, Ellipsis} {
		if w := ansi.StringWidth(ic); w != 1 {
			t.Errorf("icon %q is %d cells", ic, w)
		}
	}
}

var sgrRe = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// hasColour reports whether s sets a foreground or background colour.
func hasColour(s string) bool {
	for _, m := range sgrRe.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, _ := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return true
			}
		}
	}
	return false
}

func TestHasColour(t *testing.T) {
	if !hasColour(New(Dark).Tool.Status.OK.Render("x")) {
		t.Error("dark OK has no colour?")
	}
}
