package anthropic

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
)

// Conversation reads Messages API documents into one timeline: request
// bodies ({"model","system"?,"messages":[…]}), responses ({"type":
// "message","role":"assistant",…}), errors ({"type":"error",…}),
// {"request","response"} pairs and bare messages, in the order a log holds
// them.
//
// Each request repeats the whole conversation so far, so a log would show
// every turn again and again. A Conversation keeps the conversation it has
// shown (one key per message: its role, its text, the ids of its tool calls
// and results) and shows of each request only what is new:
//   - a request that extends what was shown (the usual case: the previous
//     request, its response and a new user message) adds its new messages;
//   - a request that departs from it (an edit, a regenerated answer, a
//     context window that dropped old messages, another conversation)
//     gets a context notice, then adds its messages not shown before.
//
// A response is added unless a response with its id was shown already.
// Thinking is left out of the keys (clients often drop it from the
// history they send back), and so is the text of tool results (clients
// clear old tool outputs to save context).
type Conversation struct {
	shown  []uint64  // keys of the conversation as last shown
	ever   idset.Set // every key shown (as hashes)
	n      int       // messages shown, for synthesized ids
	ids    idset.Set // message ids given out (and responses shown)
	system uint64
	tools  Tools
}

// NewConversation returns an empty conversation.
func NewConversation() *Conversation {
	return &Conversation{}
}

// IsResponse reports whether o is a Messages API response.
func IsResponse(o normalize.Object) bool {
	return normalize.StrField(o, "type") == "message" && normalize.StrField(o, "role") == "assistant"
}

// IsRequest reports whether o is a request body (it has messages).
func IsRequest(o normalize.Object) bool {
	_, ok := o["messages"]
	return ok && normalize.StrField(o, "type") == ""
}

// IsError reports whether o is an API error body.
func IsError(o normalize.Object) bool {
	return normalize.StrField(o, "type") == "error" && normalize.AsObjectShared(o["error"]) != nil
}

// DecodeAt reads one document of a log; pos ("element 3") prefixes the
// notices about it.
func (c *Conversation) DecodeAt(pos string, raw []byte) []events.Event {
	o, why := Object(raw)
	if o == nil {
		return []events.Event{BadRecord(pos, raw, why)}
	}
	return c.DecodeObject(pos, o)
}

// DecodeObject reads one document already decoded as an object.
func (c *Conversation) DecodeObject(pos string, o normalize.Object) []events.Event {
	switch {
	case IsResponse(o):
		return c.Response(pos, o)
	case IsError(o):
		return []events.Event{Notice(events.LevelError, events.NoticeError, At(pos, ErrorText(o)))}
	case IsRequest(o):
		return c.Request(pos, o)
	}
	req, hasReq := o["request"]
	resp, hasResp := o["response"]
	if hasReq || hasResp {
		var out []events.Event
		if ro := normalize.AsObjectShared(req); ro != nil {
			out = append(out, c.Request(pos+" request", ro)...)
		}
		if ro := normalize.AsObjectShared(resp); ro != nil {
			out = append(out, c.DecodeObject(pos+" response", ro)...)
		}
		return out
	}
	if _, ok := o["role"]; ok {
		return c.Message(pos, o)
	}
	typ := normalize.StrField(o, "type")
	if typ == "" {
		typ = "an object without a type"
	}
	return []events.Event{BadRecord(pos, mustJSON(o), "not a request, response or message ("+typ+")")}
}

// System shows a request's system prompt (a string or a list of text
// blocks) as a system notice, when it differs from the last one shown.
func (c *Conversation) System(raw json.RawMessage) []events.Event {
	if normalize.IsNull(raw) {
		return nil
	}
	text := ParseContent(raw).Text
	if strings.TrimSpace(text) == "" {
		return nil
	}
	h := hash(text)
	if h == c.system {
		return nil
	}
	c.system = h
	return []events.Event{Notice(events.LevelInfo, events.NoticeSystem, text)}
}

// Request shows what a request body adds to the conversation.
func (c *Conversation) Request(pos string, o normalize.Object) []events.Event {
	out := c.System(o["system"])
	msgs := normalize.AsListShared(o["messages"])
	if msgs == nil && !normalize.IsNull(o["messages"]) {
		out = append(out, BadRecord(pos, o["messages"], "messages is not a list"))
	}
	objs := make([]normalize.Object, len(msgs))
	keys := make([]uint64, len(msgs))
	for i, m := range msgs {
		objs[i] = normalize.AsObjectShared(m)
		if objs[i] != nil {
			// Read again below for the few that are new: keeping the
			// content of every message would hold the whole history.
			keys[i] = keyOf(objs[i], ParseContent(objs[i]["content"]))
		}
	}
	same := 0
	for same < len(keys) && same < len(c.shown) && keys[same] == c.shown[same] {
		same++
	}
	extends := same == len(c.shown)
	noted := false
	for i := same; i < len(msgs); i++ {
		mpos := At(pos, "message "+strconv.Itoa(i+1))
		if !extends {
			if c.ever.HasHash(keys[i]) {
				continue
			}
			if !noted {
				noted = true
				out = append(out, Notice(events.LevelInfo, events.NoticeContext, At(pos, fmt.Sprintf(
					"this request does not continue the conversation shown so far (it differs from its message %d on); its new messages follow",
					same+1))))
			}
		}
		if objs[i] == nil {
			out = append(out, BadRecord(mpos, msgs[i], "not a message object"))
			continue
		}
		out = append(out, c.message(mpos, objs[i], nil, "", nil, "")...)
	}
	c.shown = keys
	for _, k := range keys {
		c.ever.AddHash(k)
	}
	return out
}

// Response shows a response (once per id).
func (c *Conversation) Response(pos string, o normalize.Object) []events.Event {
	id := normalize.StrField(o, "id")
	if id != "" && c.ids.Has(id) {
		return nil
	}
	content := ParseContent(o["content"])
	k := keyOf(o, content)
	c.shown = append(c.shown, k)
	c.ever.AddHash(k)
	return c.message(pos, o, &content, id, o["usage"], normalize.StrField(o, "stop_reason"))
}

// Message adds one bare message ({"role","content"}) to the conversation
// as is, without looking for repeats: the messages of one request, read
// one by one.
func (c *Conversation) Message(pos string, o normalize.Object) []events.Event {
	content := ParseContent(o["content"])
	k := keyOf(o, content)
	c.shown = append(c.shown, k)
	c.ever.AddHash(k)
	return c.message(pos, o, &content, normalize.StrField(o, "id"), o["usage"], normalize.StrField(o, "stop_reason"))
}

// message emits one message; content is its content read (nil: not yet).
func (c *Conversation) message(pos string, o normalize.Object, content *normalize.Content, id string, usage json.RawMessage, stop string) []events.Event {
	if content == nil {
		read := ParseContent(o["content"])
		content = &read
	}
	c.n++
	id = c.uniqueID(id)
	role := normalize.StrField(o, "role")
	switch role {
	case "user":
		return userFrom(id, *content, &c.tools)
	case "assistant":
		ev := assistantFrom(id, *content)
		ev.Usage = normalize.Usage(usage)
		ev.StopReason = normalize.Stop(stop)
		c.tools.Note(ev.ToolCalls)
		out := []events.Event{ev}
		for _, r := range content.Results {
			out = append(out, ToolResultEvent(r, c.tools.Name(r.CallID)))
		}
		if unknown := UnknownBlocks(normalize.AsListShared(o["content"])); len(unknown) > 0 {
			out = append(out, UnknownBlockNotice(unknown))
		}
		return out
	case "system", "developer":
		return []events.Event{Notice(events.LevelInfo, events.NoticeSystem, content.Text)}
	}
	return []events.Event{BadRecord(pos, mustJSON(o), fmt.Sprintf("a message of role %q", role))}
}

// uniqueID is id, or "msg-N" when empty, made unique in this file.
func (c *Conversation) uniqueID(id string) string {
	if id == "" {
		id = "msg-" + strconv.Itoa(c.n)
	}
	for base, n := id, 2; c.ids.Has(id); n++ {
		id = base + "#" + strconv.Itoa(n)
	}
	c.ids.Add(id)
	return id
}

// keyOf identifies a message across requests (see Conversation); c is its
// content read. It hashes, piece by piece, role NUL text, then NUL
// call:id:name per call and NUL result:id per result.
func keyOf(o normalize.Object, c normalize.Content) uint64 {
	h := fnv64(fnvOffset, normalize.StrField(o, "role"))
	h = fnv64(h, "\x00")
	h = fnv64(h, strings.TrimSpace(c.Text))
	for _, tc := range c.ToolCalls {
		h = fnv64(fnv64(fnv64(fnv64(h, "\x00call:"), tc.ID), ":"), tc.Name)
	}
	for _, r := range c.Results {
		h = fnv64(fnv64(h, "\x00result:"), r.CallID)
	}
	return h | 1 // never 0, the key of no message
}

func hash(s string) uint64 { return fnv64(fnvOffset, s) | 1 }

// fnv64 continues an FNV-1a hash (hash/fnv's New64a) with s.
func fnv64(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mustJSON(o normalize.Object) []byte { return Marshal(o) }
