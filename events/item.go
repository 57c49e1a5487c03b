package events

import (
	"strings"
	"time"
)

// ItemKind is what a timeline item shows.
type ItemKind uint8

const (
	ItemUser ItemKind = iota
	ItemAssistant
	ItemTool
	ItemNotice
)

func (k ItemKind) String() string {
	switch k {
	case ItemUser:
		return "user"
	case ItemAssistant:
		return "assistant"
	case ItemTool:
		return "tool"
	}
	return "notice"
}

// ToolStatus is where a tool call is in its life.
type ToolStatus uint8

const (
	ToolRunning ToolStatus = iota
	ToolOK
	ToolError
	ToolCancelled
	// ToolUnknown: the run ended (or the task stopped) without a result.
	ToolUnknown
)

func (s ToolStatus) String() string {
	switch s {
	case ToolRunning:
		return "running"
	case ToolOK:
		return "ok"
	case ToolError:
		return "error"
	case ToolCancelled:
		return "cancelled"
	}
	return "unknown"
}

// NoticeLevel grades notices.
type NoticeLevel uint8

const (
	LevelInfo NoticeLevel = iota
	LevelWarning
	LevelError
)

func (l NoticeLevel) String() string {
	switch l {
	case LevelWarning:
		return "warning"
	case LevelError:
		return "error"
	}
	return "info"
}

// Item is one entry of the transcript. Items are owned by the Timeline and
// mutated in place; Version grows on every change so renderers can cache by
// (item, version, width).
type Item struct {
	// The one-byte fields come first, together, so that they share a
	// word: a 100,000-event session holds tens of thousands of items.
	Kind ItemKind
	// Notice
	Level NoticeLevel
	// Open is set while streamed deltas build the turn and its final form
	// has not arrived.
	Open bool
	// Incomplete marks a turn (or a tool output) whose stream ended
	// before it was finished.
	Incomplete bool
	// pos is the item's place in the whole session (Released counts
	// too), which the Pruned index keeps.
	pos int32

	ID      string // event id (user/assistant/notice) or tool_call id (tool)
	Version uint64
	Created time.Time

	// Text is the user / assistant / notice text; a long one may be in the
	// timeline's BodyStore (Text empty): views read it through Body.
	Text string

	// Assistant
	ToolCalls []ToolCall
	Usage     *Usage
	// Thinking is the model's reasoning, shown apart and never mixed into
	// Text; read through ThinkingBody (see Text).
	Thinking string
	// StopReason is why the model stopped (Stop* constants; "" unknown).
	StopReason string
	// x is what few items need (nil for most): the builders of a streamed
	// turn, the references of texts kept in the timeline's BodyStore.
	x *itemExtra

	// Tool
	Tool *ToolItem

	// Notice
	NoticeKind string // Notice* constants; "" for perch's own notices
}

// itemExtra is the part of an item that only a streamed turn or a spilled
// text needs, kept apart so that every other item goes without it.
type itemExtra struct {
	// Builders of a streamed turn's text and thinking: appending to them is
	// linear however many deltas come (Text and Thinking read them
	// without a copy).
	textBuf, thinkBuf *strings.Builder
	// Text or Thinking is in the timeline's BodyStore (and the field is
	// empty); LoadBody and LoadThinking read them back.
	text, thinking *ref
}

// extra is the item's itemExtra, made when first needed.
func (it *Item) extra() *itemExtra {
	if it.x == nil {
		it.x = &itemExtra{}
	}
	return it.x
}

// ToolItem is the state of one tool call.
type ToolItem struct {
	CallID string
	Name   string
	Call   ToolCall
	Status ToolStatus
	// Pruned is set when the daemon dropped this output from the model's
	// context (it stays visible).
	Pruned bool
	// Result is nil until finished. Its Text and details may be in the
	// timeline's BodyStore (spill is set, and Result has neither): views
	// read them through Output.
	Result *ToolResult
	spill  *spilledResult
}

// KeyArg is the argument a person wants to see first: the command, the
// path, the search pattern. "" when there is none.
func (t *ToolItem) KeyArg() string { return keyArg(t.Name, t.Call) }

// RunStatus is the derived state of the agent run.
type RunStatus uint8

const (
	RunIdle RunStatus = iota
	RunGenerating
	RunStopped
)

func (s RunStatus) String() string {
	switch s {
	case RunGenerating:
		return StatusGenerating
	case RunStopped:
		return StatusStopped
	}
	return StatusIdle
}

// Meta is what the noise events tell: kept out of the transcript, shown in
// status bars.
type Meta struct {
	Model           string
	Tools           []string
	SystemPromptLen int
	ContextTokens   int64 // latest TokenCounted, else latest prompt size
	PrunedCount     int
	Totals          Usage // summed over assistant replies
	// Run is summed over the replies of the last run (since its user
	// message or its start): the tokens and cost the board shows.
	Run        Usage
	RunStarted time.Time
	// RunEnd is how the last run ended ("" while one runs, before any
	// ended, or when the source does not say): the status bar says
	// failed or cancelled as the board does.
	RunEnd RunEnd
	// ForeignFrames counts the frames ignored because maria does not send
	// their event name on a task stream; LastForeign describes the latest
	// (its name, never its data).
	ForeignFrames int
	LastForeign   string
}
