// Package styles holds every colour, style and icon perch draws with.
//
// Nothing else in the app creates a lipgloss colour: components take a
// *Styles and pick from its groups. Themes are built from one small semantic
// palette (see palette) so that a new theme is a dozen colours, not a
// hundred styles, and the no-colour theme is the same layout with colours
// replaced by bold/faint/reverse/underline.
package styles

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
)

// Theme selects a palette.
type Theme uint8

const (
	Dark Theme = iota
	Light
	// NoColor draws with text attributes only (NO_COLOR, dumb terminals).
	NoColor
)

func (t Theme) String() string {
	switch t {
	case Light:
		return "light"
	case NoColor:
		return "nocolor"
	}
	return "dark"
}

// ThemeFromEnv picks the theme from the --theme flag ("dark", "light",
// "auto" or ""), the environment and the detected terminal background.
// NO_COLOR (set and non-empty, https://no-color.org) wins over everything,
// including an explicit flag, because it is the user's global opt-out.
// Unknown flag values behave like "auto".
func ThemeFromEnv(flag string, getenv func(string) string, isDark bool) Theme {
	if getenv != nil && getenv("NO_COLOR") != "" {
		return NoColor
	}
	switch strings.ToLower(strings.TrimSpace(flag)) {
	case "dark":
		return Dark
	case "light":
		return Light
	case "none", "nocolor", "no-color", "mono":
		return NoColor
	}
	if isDark {
		return Dark
	}
	return Light
}

// Icons and glyphs. All are single-cell in common terminal fonts; emoji are
// avoided on purpose because their width differs between terminals.
const (
	// Tool calls. The mark alone tells the outcome (NO_COLOR included):
	// a command that ran and exited non-zero is ✗, a tool that failed to
	// do its job at all is ⊗, cancelled and timed out are their own.
	IconRunning   = "●" // static fallback when no spinner frame is given
	IconOK        = "✓" // done; a command exited 0
	IconFailed    = "✗" // a command ran and exited non-zero
	IconTimedOut  = "⧖" // a command was stopped at its time limit
	IconError     = "⊗" // the tool itself failed (error result)
	IconCancelled = "⊘" // a tool call, or a run, cancelled
	IconUnknown   = "?"
	// IconOrphan marks a held message whose session is gone (⊘ is
	// cancelled, everywhere).
	IconOrphan = "∅"
	IconPruned = "✂"

	IconInfo    = "•"
	IconWarning = "▲"
	IconNotice  = "✗" // error notices

	IconTodoPending    = "○"
	IconTodoInProgress = "◐"
	IconTodoCompleted  = "●"
	IconPriorityHigh   = "↑"
	IconPriorityMedium = "·"
	IconPriorityLow    = "↓"

	IconDir     = "▸"
	IconFile    = " "
	IconSymlink = "↪"
	IconOther   = "?"

	IconInput  = "↑"
	IconOutput = "↓"
	IconCached = "⟲"

	BorderThick    = "▌" // user bubble accent bar
	BorderSelected = "┃" // selected item gutter
	BorderThin     = "│" // tool body rail
	Ellipsis       = "…"

	// SpinnerFrames are the running-tool animation frames, one rune each.
	SpinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
)

// SpinnerFrame returns frame i (any int, wrapped) of SpinnerFrames. A
// function rather than a []string variable so that no package state is
// mutable.
func SpinnerFrame(i int) string {
	const n = 10 // runes in SpinnerFrames, each 3 bytes
	i %= n
	if i < 0 {
		i += n
	}
	return SpinnerFrames[i*3 : i*3+3]
}

// Styles is the full set. Groups are plain structs so call sites read
// st.Tool.Name.Render(…).
type Styles struct {
	Theme Theme

	// Shared text tones.
	Base   lipgloss.Style // default foreground
	Bold   lipgloss.Style
	Dim    lipgloss.Style // secondary information (usage, hints)
	Subtle lipgloss.Style // least important (separators, markers)
	Accent lipgloss.Style // primary brand colour

	App       AppStyles
	Header    HeaderStyles
	StatusBar StatusBarStyles
	// Selected is the gutter bar drawn next to the selected item.
	Selected lipgloss.Style

	User      UserStyles
	Assistant AssistantStyles
	Tool      ToolStyles
	Diff      DiffStyles
	Notice    NoticeStyles
	Queue     QueueStyles
	Composer  ComposerStyles
	TaskList  TaskListStyles
	Todo      TodoStyles
	Search    SearchStyles
	Help      HelpStyles

	// Chroma is the chroma style name for syntax highlighting of tool
	// output; "" disables highlighting (NoColor).
	Chroma string
}

type AppStyles struct {
	Base lipgloss.Style
	// Title is the app name as shown in headers and the help overlay.
	Title lipgloss.Style
}

type HeaderStyles struct {
	Base      lipgloss.Style
	Title     lipgloss.Style // task name
	Meta      lipgloss.Style // model, cwd, ids
	Separator lipgloss.Style
}

type StatusBarStyles struct {
	Base lipgloss.Style
	Key  lipgloss.Style // key hint ("q")
	Desc lipgloss.Style // its description ("quit")
	Info lipgloss.Style
	// Connection state.
	Connected    lipgloss.Style
	Reconnecting lipgloss.Style
	Disconnected lipgloss.Style
	// Run state.
	Idle       lipgloss.Style
	Generating lipgloss.Style
	Stopped    lipgloss.Style
	Tokens     lipgloss.Style
}

type UserStyles struct {
	Bar   lipgloss.Style // the accent bar left of the bubble
	Label lipgloss.Style // "You"
	Text  lipgloss.Style
}

type AssistantStyles struct {
	Label lipgloss.Style
	Usage lipgloss.Style // the one-line token usage
	// Plain is used for text too large for markdown rendering.
	Plain lipgloss.Style
}

// ToolStatusStyles colour the status icon of a tool block.
type ToolStatusStyles struct {
	Running   lipgloss.Style
	OK        lipgloss.Style
	Failed    lipgloss.Style // a command ran and exited non-zero
	TimedOut  lipgloss.Style
	Error     lipgloss.Style // the tool itself failed
	Cancelled lipgloss.Style
	Unknown   lipgloss.Style
}

type ToolStyles struct {
	Border lipgloss.Style // the body rail
	Name   lipgloss.Style
	KeyArg lipgloss.Style
	Status ToolStatusStyles
	// Tag is a dim trailing annotation in the header ("12 entries").
	Tag       lipgloss.Style
	Pruned    lipgloss.Style
	Output    lipgloss.Style
	ErrorText lipgloss.Style
	Hidden    lipgloss.Style // "… 12 lines hidden …"
	Label     lipgloss.Style // "stdout" / "stderr" section labels
	Stderr    lipgloss.Style
	ExitOK    lipgloss.Style
	ExitBad   lipgloss.Style
	LineNo    lipgloss.Style
	Path      lipgloss.Style
	Dir       lipgloss.Style
	File      lipgloss.Style
	Symlink   lipgloss.Style
	Match     lipgloss.Style // search_files match location
}

type DiffStyles struct {
	Add     lipgloss.Style
	Del     lipgloss.Style
	Hunk    lipgloss.Style
	Header  lipgloss.Style
	Context lipgloss.Style
}

type NoticeStyles struct {
	Info    lipgloss.Style
	Warning lipgloss.Style
	Error   lipgloss.Style
}

type QueueStyles struct {
	Border   lipgloss.Style
	Title    lipgloss.Style
	Item     lipgloss.Style
	Selected lipgloss.Style
	Index    lipgloss.Style
}

type ComposerStyles struct {
	Border        lipgloss.Style
	BorderFocused lipgloss.Style
	Prompt        lipgloss.Style
	Text          lipgloss.Style
	Placeholder   lipgloss.Style
	Disabled      lipgloss.Style
}

type TaskListStyles struct {
	Title      lipgloss.Style
	Row        lipgloss.Style
	Selected   lipgloss.Style
	Name       lipgloss.Style
	Meta       lipgloss.Style
	Idle       lipgloss.Style
	Generating lipgloss.Style
	Stopped    lipgloss.Style
}

type TodoStyles struct {
	Header     lipgloss.Style
	Count      lipgloss.Style
	Pending    lipgloss.Style
	InProgress lipgloss.Style
	Completed  lipgloss.Style // icon
	Done       lipgloss.Style // text of a completed item (struck, dim)
	Text       lipgloss.Style
	High       lipgloss.Style
	Medium     lipgloss.Style
	Low        lipgloss.Style
	Notes      lipgloss.Style
}

type SearchStyles struct {
	Match   lipgloss.Style
	Current lipgloss.Style
	Prompt  lipgloss.Style
	Info    lipgloss.Style
}

type HelpStyles struct {
	Border  lipgloss.Style
	Title   lipgloss.Style
	Section lipgloss.Style
	Key     lipgloss.Style
	Desc    lipgloss.Style
}

// palette is the semantic colour set a theme is built from. A nil colour
// means "no colour" (the NoColor theme).
type palette struct {
	fg, muted, subtle color.Color
	primary, user     color.Color
	success, err      color.Color
	warning, info     color.Color
	selection         color.Color
	matchBg, matchFg  color.Color
	curBg, curFg      color.Color
	border            color.Color
}

func darkPalette() palette {
	return palette{
		fg:        lipgloss.Color("#DADADA"),
		muted:     lipgloss.Color("#9A9AA5"),
		subtle:    lipgloss.Color("#6C6C78"),
		primary:   lipgloss.Color("#B197FC"),
		user:      lipgloss.Color("#6CB6FF"),
		success:   lipgloss.Color("#57D98A"),
		err:       lipgloss.Color("#FF6B6B"),
		warning:   lipgloss.Color("#F5C451"),
		info:      lipgloss.Color("#7DCFFF"),
		selection: lipgloss.Color("#FF79C6"),
		matchBg:   lipgloss.Color("#5C4A12"),
		matchFg:   lipgloss.Color("#FFE9A8"),
		curBg:     lipgloss.Color("#F5C451"),
		curFg:     lipgloss.Color("#1A1A1A"),
		border:    lipgloss.Color("#44444E"),
	}
}

func lightPalette() palette {
	return palette{
		fg:        lipgloss.Color("#1F2328"),
		muted:     lipgloss.Color("#59636E"),
		subtle:    lipgloss.Color("#8C959F"),
		primary:   lipgloss.Color("#6E40C9"),
		user:      lipgloss.Color("#0969DA"),
		success:   lipgloss.Color("#1A7F37"),
		err:       lipgloss.Color("#CF222E"),
		warning:   lipgloss.Color("#9A6700"),
		info:      lipgloss.Color("#0550AE"),
		selection: lipgloss.Color("#BF3989"),
		matchBg:   lipgloss.Color("#FFF1B3"),
		matchFg:   lipgloss.Color("#1F2328"),
		curBg:     lipgloss.Color("#F0B72F"),
		curFg:     lipgloss.Color("#000000"),
		border:    lipgloss.Color("#D0D7DE"),
	}
}

// New builds the styles of a theme.
func New(theme Theme) *Styles {
	var p palette
	switch theme {
	case Light:
		p = lightPalette()
	case NoColor:
		// all nil
	default:
		theme = Dark
		p = darkPalette()
	}
	mono := theme == NoColor

	s := lipgloss.NewStyle()
	fg := func(c color.Color) lipgloss.Style {
		if c == nil {
			return s
		}
		return s.Foreground(c)
	}
	bg := func(st lipgloss.Style, c color.Color) lipgloss.Style {
		if c == nil {
			return st
		}
		return st.Background(c)
	}
	// dim is the muted tone; without colour it becomes faint.
	dim := fg(p.muted)
	subtle := fg(p.subtle)
	if mono {
		dim = s.Faint(true)
		subtle = s.Faint(true)
	}
	bold := s.Bold(true)

	st := &Styles{
		Theme:  theme,
		Base:   fg(p.fg),
		Bold:   bold,
		Dim:    dim,
		Subtle: subtle,
		Accent: fg(p.primary).Bold(true),
	}
	st.App = AppStyles{Base: fg(p.fg), Title: fg(p.primary).Bold(true)}
	st.Header = HeaderStyles{
		Base:      fg(p.fg),
		Title:     fg(p.fg).Bold(true),
		Meta:      dim,
		Separator: subtle,
	}
	st.StatusBar = StatusBarStyles{
		Base:         dim,
		Key:          fg(p.fg).Bold(true),
		Desc:         dim,
		Info:         fg(p.info),
		Connected:    fg(p.success),
		Reconnecting: fg(p.warning),
		Disconnected: fg(p.err).Bold(true),
		Idle:         dim,
		Generating:   fg(p.primary).Bold(true),
		Stopped:      subtle,
		Tokens:       dim,
	}
	st.Selected = fg(p.selection).Bold(true)

	st.User = UserStyles{
		Bar:   fg(p.user),
		Label: fg(p.user).Bold(true),
		Text:  fg(p.fg),
	}
	st.Assistant = AssistantStyles{
		Label: fg(p.primary).Bold(true),
		Usage: subtle,
		Plain: fg(p.fg),
	}
	st.Tool = ToolStyles{
		Border: fg(p.border),
		Name:   fg(p.fg).Bold(true),
		KeyArg: fg(p.muted),
		Status: ToolStatusStyles{
			Running:   fg(p.primary),
			OK:        fg(p.success),
			Failed:    fg(p.err).Bold(true),
			TimedOut:  fg(p.warning).Bold(true),
			Error:     fg(p.err).Bold(true),
			Cancelled: fg(p.warning),
			Unknown:   subtle,
		},
		Tag:       subtle,
		Pruned:    subtle.Italic(true),
		Output:    fg(p.fg),
		ErrorText: fg(p.err),
		Hidden:    subtle.Italic(true),
		Label:     dim.Bold(true),
		Stderr:    fg(p.warning),
		ExitOK:    fg(p.success),
		ExitBad:   fg(p.err).Bold(true),
		LineNo:    subtle,
		Path:      fg(p.info),
		Dir:       fg(p.info).Bold(true),
		File:      fg(p.fg),
		Symlink:   fg(p.primary),
		Match:     fg(p.info),
	}
	if mono {
		st.Tool.KeyArg = s
		st.Tool.ErrorText = s.Bold(true)
		st.Tool.Stderr = s.Italic(true)
		st.Tool.ExitBad = s.Bold(true).Reverse(true)
		st.Tool.Path = s.Underline(true)
	}
	st.Diff = DiffStyles{
		Add:     fg(p.success),
		Del:     fg(p.err),
		Hunk:    fg(p.info),
		Header:  fg(p.fg).Bold(true),
		Context: fg(p.fg),
	}
	if mono {
		st.Diff.Del = s.Faint(true)
		st.Diff.Hunk = s.Underline(true)
	}
	st.Notice = NoticeStyles{
		Info:    dim,
		Warning: fg(p.warning),
		Error:   fg(p.err),
	}
	if mono {
		st.Notice.Warning = s.Bold(true)
		st.Notice.Error = s.Bold(true).Reverse(true)
	}
	st.Queue = QueueStyles{
		Border:   fg(p.border),
		Title:    fg(p.primary).Bold(true),
		Item:     fg(p.fg),
		Selected: bg(fg(p.fg).Bold(true), nil).Reverse(mono),
		Index:    subtle,
	}
	if !mono {
		st.Queue.Selected = fg(p.selection).Bold(true)
	}
	st.Composer = ComposerStyles{
		Border:        fg(p.border),
		BorderFocused: fg(p.primary),
		Prompt:        fg(p.primary).Bold(true),
		Text:          fg(p.fg),
		Placeholder:   subtle,
		Disabled:      subtle,
	}
	st.TaskList = TaskListStyles{
		Title:      fg(p.primary).Bold(true),
		Row:        fg(p.fg),
		Selected:   fg(p.selection).Bold(true),
		Name:       fg(p.fg).Bold(true),
		Meta:       dim,
		Idle:       dim,
		Generating: fg(p.primary).Bold(true),
		Stopped:    subtle,
	}
	if mono {
		st.TaskList.Selected = s.Reverse(true)
	}
	st.Todo = TodoStyles{
		Header:     fg(p.fg).Bold(true),
		Count:      dim,
		Pending:    dim,
		InProgress: fg(p.primary).Bold(true),
		Completed:  fg(p.success),
		Done:       subtle.Strikethrough(true),
		Text:       fg(p.fg),
		High:       fg(p.err),
		Medium:     fg(p.warning),
		Low:        subtle,
		Notes:      subtle.Italic(true),
	}
	if mono {
		st.Todo.High = s.Bold(true)
	}
	st.Search = SearchStyles{
		Match:   bg(fg(p.matchFg), p.matchBg),
		Current: bg(fg(p.curFg), p.curBg).Bold(true),
		Prompt:  fg(p.primary).Bold(true),
		Info:    dim,
	}
	if mono {
		st.Search.Match = s.Underline(true)
		st.Search.Current = s.Reverse(true).Bold(true)
	}
	st.Help = HelpStyles{
		Border:  fg(p.primary),
		Title:   fg(p.primary).Bold(true),
		Section: fg(p.fg).Bold(true).Underline(mono),
		Key:     fg(p.info).Bold(true),
		Desc:    dim,
	}
	st.Chroma = chromaStyle(theme)
	return st
}
