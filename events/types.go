// Package events is the normalized vocabulary every system's decoder
// speaks (Event, ToolCall, ToolResult, Usage, Task, …) and the Timeline
// that reduces events into what a user sees. Wire formats live with their
// systems (client/<system>). It does no IO and knows nothing of terminals.
package events

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/perch-tui/perch/tools"
)

// Frame is one server-sent event as read off the wire: its `event:` name and
// its `data:` payload. Streams deliver frames; Decode turns them into Events.
type Frame struct {
	Name string
	Data []byte
}

// Dialect says which encoding an event arrived in. It is detected per event.
type Dialect uint8

const (
	DialectUnknown Dialect = iota
	// DialectHead is maria's code at HEAD: {"id","created","desc":{"msg":…}}
	// with string tool results.
	DialectHead
	// DialectLegacy is the HEAD envelope with structured (pre-d617fd63)
	// PostToolCall results.
	DialectLegacy
	// DialectDocs is the documented flat shape {"id","msg":…} (maria's documentation; docs/protocol.md §6.1).
	DialectDocs
	// DialectDaemon marks daemon-wide events (/v1/events).
	DialectDaemon
)

func (d Dialect) String() string {
	switch d {
	case DialectHead:
		return "head"
	case DialectLegacy:
		return "legacy"
	case DialectDocs:
		return "docs"
	case DialectDaemon:
		return "daemon"
	}
	return "unknown"
}

// Kind is the normalized variant of an Event.
type Kind uint8

const (
	// KindInvalid is data that could not be decoded; Notice says why.
	KindInvalid Kind = iota
	// KindUnknown is a well-formed event of a variant perch does not know.
	KindUnknown
	KindModelLoaded
	KindSystemPromptSet
	KindToolAdded
	KindMessageQueued
	KindMessageUnqueued
	KindQueueSnapshot
	KindPreConversation
	KindPostConversation
	KindUserMessage
	KindAssistantMessage
	KindSystemMessage // docs MessageAdded with role system
	KindToolMessage   // docs MessageAdded with role tool
	KindTokenCounted
	KindContextPruned
	KindPruned
	KindPreToolCall
	KindPostToolCall
	KindCancelled
	KindFailed
	KindTodoUpdated
	KindTasksSynced // daemon.tasks.synchronized
	KindTaskChanged // daemon.task.changed
	KindAuth        // auth.*
	// KindForeign is a frame whose SSE event name maria does not send, or
	// that has none: never a conversation event, whatever its data; Notice
	// names it without quoting the data.
	KindForeign

	// The kinds below carry what systems other than maria have; see
	// docs/architecture.md for how a decoder uses them.

	// KindTextDelta appends Text to the assistant turn whose id is ID,
	// opening it if needed. A later KindAssistantMessage with the same ID
	// is the final form of that turn and replaces what the deltas built.
	KindTextDelta
	// KindThinkingDelta appends Thinking to the assistant turn ID.
	KindThinkingDelta
	// KindToolOutputDelta appends Text to the output of the tool call
	// Tool.Call.ID while it runs; its KindPostToolCall replaces it.
	KindToolOutputDelta
	// KindNotice is a message that is not part of the model conversation:
	// a host or system notice, progress, context or an error (Text, Level,
	// NoticeKind).
	KindNotice
	// KindRunState sets the run's state (RunStatus: idle, generating or
	// stopped) as the source reports it.
	KindRunState
	// KindEndOfInput says a file has been read to its end: nothing more
	// will come (see Timeline.EndOfInput).
	KindEndOfInput
)

var kindNames = [...]string{
	KindInvalid: "Invalid", KindUnknown: "Unknown", KindModelLoaded: "ModelLoaded",
	KindSystemPromptSet: "SystemPromptSet", KindToolAdded: "ToolAdded",
	KindMessageQueued: "MessageQueued", KindMessageUnqueued: "MessageUnqueued",
	KindQueueSnapshot: "QueueSnapshot", KindPreConversation: "PreConversation",
	KindPostConversation: "PostConversation", KindUserMessage: "UserMessage",
	KindAssistantMessage: "AssistantMessage", KindSystemMessage: "SystemMessage",
	KindToolMessage: "ToolMessage", KindTokenCounted: "TokenCounted",
	KindContextPruned: "ContextPruned", KindPruned: "Pruned",
	KindPreToolCall: "PreToolCall", KindPostToolCall: "PostToolCall",
	KindCancelled: "Cancelled", KindFailed: "Failed", KindTodoUpdated: "TodoUpdated",
	KindTasksSynced: "TasksSynced", KindTaskChanged: "TaskChanged", KindAuth: "Auth",
	KindForeign:   "Foreign",
	KindTextDelta: "TextDelta", KindThinkingDelta: "ThinkingDelta",
	KindToolOutputDelta: "ToolOutputDelta", KindNotice: "Notice", KindRunState: "RunState",
	KindEndOfInput: "EndOfInput",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind?"
}

// Event is one decoded wire event. Only the fields of its Kind are set.
type Event struct {
	Kind    Kind
	Dialect Dialect
	// ID is the envelope id used for dedupe ("" when the event had none;
	// numeric docs ids are turned into their decimal text).
	ID      string
	Created time.Time // zero when absent
	Variant string    // the raw variant name (desc.msg or the SSE event name)
	// Fingerprint identifies an event without an id (a hash of its frame),
	// so that replays of id-less streams can be recognised.
	Fingerprint uint64

	Text      string     // user/assistant/system text, Failed error text, system prompt
	ToolCalls []ToolCall // AssistantMessage
	Usage     *Usage     // AssistantMessage; a Notice's is a whole run's usage, counted in the totals only
	Tool      *ToolEvent // Pre/PostToolCall, ToolMessage

	MessageID string          // MessageQueued / MessageUnqueued (the POST reply id)
	Queue     []QueuedMessage // QueueSnapshot (the whole queue)

	Model      string // ModelLoaded
	ToolName   string // ToolAdded
	TokenCount int64  // TokenCounted, ContextPruned (origin)
	PrunedTo   int64  // ContextPruned
	PrunedID   string // Pruned: envelope id of a PostToolCall

	Todos []Todo // TodoUpdated

	Tasks []Task // TasksSynced
	Task  *Task  // TaskChanged
	Auth  *Auth  // Auth

	// Notice explains KindInvalid / KindUnknown events; it carries a short,
	// already bounded excerpt of the offending data.
	Notice string

	// Thinking is the model's reasoning of an AssistantMessage (or the
	// delta of a KindThinkingDelta); redacted blocks read "[redacted]".
	Thinking string
	// StopReason is why the model stopped (AssistantMessage): one of the
	// Stop* constants, "" when the source does not say.
	StopReason string
	// Incomplete marks an AssistantMessage or tool result whose stream
	// ended before it was finished.
	Incomplete bool
	// Level and NoticeKind grade a KindNotice.
	Level      NoticeLevel
	NoticeKind string
	// RunStatus is the state of a KindRunState (StatusIdle, …).
	RunStatus string
}

// TextBytes is about how many bytes of text an event holds (its texts,
// arguments and output): what a reader that bounds what it holds in
// memory counts.
func (ev *Event) TextBytes() int {
	n := len(ev.Text) + len(ev.Thinking) + len(ev.Notice)
	for i := range ev.ToolCalls {
		n += len(ev.ToolCalls[i].Args) + len(ev.ToolCalls[i].ArgsRaw)
	}
	if t := ev.Tool; t != nil {
		n += len(t.Call.Args) + len(t.Call.ArgsRaw)
		if r := t.Result; r != nil {
			n += len(r.Text) + len(r.Structured)
		}
	}
	return n
}

// Normalized stop reasons (Event.StopReason, Item.StopReason).
const (
	StopEndTurn    = "end_turn"
	StopToolUse    = "tool_use"
	StopMaxTokens  = "max_tokens"
	StopSequence   = "stop_sequence"
	StopFiltered   = "filtered"
	StopRefusal    = "refusal"
	StopPaused     = "paused"
	StopTerminated = "terminated"
	StopCancelled  = "cancelled"
	StopError      = "error"
	StopOther      = "other"
)

// Notice kinds (Event.NoticeKind, Item.NoticeKind): where a notice comes
// from. "" is a notice perch itself wrote.
const (
	NoticeHost     = "host"     // the agent's host program, not the model
	NoticeSystem   = "system"   // a system notice injected into the chat
	NoticeProgress = "progress" // progress of a run (starting, estimates)
	NoticeContext  = "context"  // context size, summarising, pruning
	NoticeError    = "error"    // an error the source reported
	NoticeInfo     = "info"     // anything else worth a line
)

// ToolCall is a call the assistant asked for.
type ToolCall struct {
	ID   string
	Name string
	// Args is the arguments as a JSON value when they parse (after undoing
	// double encoding); nil otherwise.
	Args json.RawMessage
	// ArgsRaw is the argument text as received ("" when empty or absent).
	ArgsRaw string
	// ArgsErr says why ArgsRaw did not parse; empty when it did or was empty.
	ArgsErr string
	// DoubleEncoded is set when the arguments were a JSON string holding JSON.
	DoubleEncoded bool
}

// ToolEvent is the payload of PreToolCall / PostToolCall (and docs tool
// messages).
type ToolEvent struct {
	Call ToolCall
	Name string
	// Result is set on PostToolCall and tool messages.
	Result *ToolResult
}

// ToolResult is a finished tool call, whatever dialect it came in.
type ToolResult struct {
	IsError bool
	// The unexported one-byte fields follow IsError, to share its word.
	// streaming is set while output deltas build Text, in outBuf.
	streaming bool
	// fromText names the details (Listing or Search) to be read from Text
	// when asked for (FileListing, SearchHits) instead of kept: a listing's
	// entries and a search's hits cost 24–40 bytes each on top of the text
	// they point into, and only the few items on screen are ever drawn.
	fromText detailsKind
	// textDetails: fillFormat parsed the details from Text as format, with
	// the call's arguments detailsArgs (so they can be parsed again, also
	// when Text went to the store).
	textDetails bool
	format      tools.Format

	Text      string // the text sent to the model, whole: the universal fallback
	ErrorText string // readable error, when IsError
	// Structured is the legacy structured result, kept for renderers when
	// it is at most MaxStructured bytes (its details are parsed anyway).
	Structured json.RawMessage
	// ExitCode is the exit status a source reported for a command, nil
	// when it reported none (see Exit, which also reads Command).
	ExitCode    *int
	outBuf      *strings.Builder
	detailsArgs json.RawMessage

	// Details parsed from either the legacy structure or the HEAD text, for
	// the per-tool renderers. At most one is set. Large strings in them are
	// slices of Text when Text holds them (HEAD stdout, legacy stdout that
	// the text repeats), not copies.
	Command *CommandResult
	Listing *FileListing // see FileListing: nil when read from Text on demand
	File    *FileContent
	Search  *SearchResult // see SearchHits: nil when read from Text on demand
	Write   *WriteResult
	Patch   *PatchResult
	Todos   []Todo // todo tool: the full list after the call, when known
}

// Exit is the command's exit status when the source reported one.
func (r *ToolResult) Exit() *int {
	if r == nil {
		return nil
	}
	if r.ExitCode != nil {
		return r.ExitCode
	}
	if r.Command != nil {
		return r.Command.ExitCode
	}
	return nil
}

// Usage is token usage of one model reply. InputTokens is the whole prompt,
// cache reads and writes included (OpenAI's meaning); CachedTokens is the
// part read from the cache. The Has* flags say whether the source reported
// the optional counts, so that none is ever invented.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	TotalTokens  int64

	CacheWriteTokens int64
	ReasoningTokens  int64
	CostUSD          float64
	HasCacheWrite    bool
	HasReasoning     bool
	HasCost          bool
}

// Sub takes u2 (added before) out of u again; the Has* flags stay.
func (u *Usage) Sub(u2 *Usage) {
	u.InputTokens -= u2.InputTokens
	u.OutputTokens -= u2.OutputTokens
	u.CachedTokens -= u2.CachedTokens
	u.TotalTokens -= u2.TotalTokens
	u.CacheWriteTokens -= u2.CacheWriteTokens
	u.ReasoningTokens -= u2.ReasoningTokens
	u.CostUSD -= u2.CostUSD
}

// Add sums u2 into u, keeping the Has* flags of either.
func (u *Usage) Add(u2 *Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.CachedTokens += u2.CachedTokens
	u.TotalTokens += u2.TotalTokens
	u.CacheWriteTokens += u2.CacheWriteTokens
	u.ReasoningTokens += u2.ReasoningTokens
	u.CostUSD += u2.CostUSD
	u.HasCacheWrite = u.HasCacheWrite || u2.HasCacheWrite
	u.HasReasoning = u.HasReasoning || u2.HasReasoning
	u.HasCost = u.HasCost || u2.HasCost
}

// QueuedMessage is a message waiting in the agent's queue.
type QueuedMessage struct {
	ID        string
	Text      string
	WebSearch bool
}

// Task status values.
const (
	StatusIdle       = "idle"
	StatusGenerating = "generating"
	StatusStopped    = "stopped"
	// StatusWaiting: the run is held until the user answers the agent
	// (a permission prompt, a question): Task.WaitingFor says which, in
	// the system's words. A live local CLI reports it (Claude Code's
	// registry file); the run is not over.
	StatusWaiting = "waiting"
	// StatusExited: the session's process is gone (a local CLI that
	// exited, cleanly or killed); nothing runs and nothing will until
	// the user starts it again.
	StatusExited = "exited"
)

// Task is the daemon's view of a task (docs/protocol.md §8.5).
type Task struct {
	ID     string
	Name   string // "" when the task has none
	Cwd    string
	Port   int
	Status string // idle | generating | stopped | waiting | exited
	// WaitingFor is what a waiting session waits for ("permission
	// prompt", "input needed"), "" otherwise.
	WaitingFor     string
	Created        time.Time
	Updated        time.Time
	WebSearch      bool
	QueuedMessages []QueuedMessage
	Model          string
	// Detail says more of Status where the source cannot tell two states
	// apart or knows why ("working or waiting for approval", "exited"),
	// for people; "" when Status says it all.
	Detail string
	// Tokens is the session's token count so far where the system lists
	// it (a local CLI's transcript, counted in the background); 0 when
	// not known.
	Tokens int64
	// Cost is the session's cost so far in US dollars at perch's price
	// table, where the system lists one (HasCost): unknown, not $0, when
	// a model's price is.
	Cost    float64
	HasCost bool
}

// Equal reports whether t and o hold the same task state (a queue the
// daemon left out, nil, differs from an empty one).
func (t Task) Equal(o Task) bool {
	return t.ID == o.ID && t.Name == o.Name && t.Cwd == o.Cwd && t.Port == o.Port &&
		t.Status == o.Status && t.WaitingFor == o.WaitingFor && t.Detail == o.Detail && t.Tokens == o.Tokens &&
		t.Cost == o.Cost && t.HasCost == o.HasCost && t.Created.Equal(o.Created) && t.Updated.Equal(o.Updated) &&
		t.WebSearch == o.WebSearch && t.Model == o.Model &&
		(t.QueuedMessages == nil) == (o.QueuedMessages == nil) && slices.Equal(t.QueuedMessages, o.QueuedMessages)
}

// EqualTasks reports whether two task lists hold the same tasks in the
// same order.
func EqualTasks(a, b []Task) bool { return slices.EqualFunc(a, b, Task.Equal) }

// Merge overlays the fields b knows on t: daemon updates may be partial
// (stopped tasks have no model or queue).
func (t Task) Merge(b Task) Task {
	if b.ID != "" {
		t.ID = b.ID
	}
	if b.Name != "" {
		t.Name = b.Name
	}
	if b.Cwd != "" {
		t.Cwd = b.Cwd
	}
	if b.Status != "" {
		t.Status, t.WaitingFor, t.Detail = b.Status, b.WaitingFor, b.Detail
	}
	if b.Model != "" {
		t.Model = b.Model
	}
	if b.Port != 0 {
		t.Port = b.Port
	}
	if !b.Created.IsZero() {
		t.Created = b.Created
	}
	if !b.Updated.IsZero() {
		t.Updated = b.Updated
	}
	if b.QueuedMessages != nil || b.Status == StatusStopped {
		t.QueuedMessages = b.QueuedMessages
	}
	if b.Tokens != 0 {
		t.Tokens = b.Tokens
	}
	if b.HasCost {
		t.Cost, t.HasCost = b.Cost, true
	}
	t.WebSearch = b.WebSearch || t.WebSearch
	return t
}

// Auth is a daemon auth.* event.
type Auth struct {
	Event         string // status.changed | login.completed | login.failed
	Provider      string
	Authenticated bool
	Message       string
}
