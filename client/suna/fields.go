package suna

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/internal/ingest"
)

// object reads raw as a JSON object, or as a string that holds one (Suna
// stores content and metadata either way). nil for anything else.
func object(raw json.RawMessage) normalize.Object {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '{':
		return normalize.AsObjectShared(raw)
	case '"':
		return objectIn(normalize.Str(raw))
	}
	return nil
}

// objectIn reads the object a JSON string's value s holds, nil for none.
func objectIn(s string) normalize.Object {
	if s = strings.TrimSpace(s); strings.HasPrefix(s, "{") {
		return normalize.AsObjectShared(ingest.Repair([]byte(s)))
	}
	return nil
}

// content is a row's content read for a row of the given type.
type content struct {
	// obj is the decoded message object ({"role","content",…}, or a status
	// object), nil when the content is plain text or absent.
	obj normalize.Object
	// plain is content that is text and not a message object (a compressed
	// row, or a string that only looks like JSON).
	plain    string
	hasPlain bool
	// list is content stored as a bare list of parts.
	list json.RawMessage
}

// readContent reads a row's content. A string is unwrapped once, and only
// when it holds a message of the row's own kind: a user row's text that
// happens to be JSON with another role stays the user's text.
func readContent(raw json.RawMessage, typ string) content {
	raw = bytes.TrimSpace(raw)
	if normalize.IsNull(raw) {
		return content{}
	}
	switch raw[0] {
	case '{':
		return content{obj: normalize.AsObjectShared(raw)}
	case '[':
		return content{list: raw}
	case '"':
		s := normalize.Str(raw)
		if o := objectIn(s); o != nil && messageShaped(o, typ) {
			return content{obj: o}
		}
		return content{plain: s, hasPlain: true}
	}
	// A number or boolean: shown as written.
	return content{plain: string(raw), hasPlain: true}
}

// messageShaped: the object a string held is the row's message, not text.
func messageShaped(o normalize.Object, typ string) bool {
	return shaped(typ, normalize.StrField(o, "role"), has(o, "content", "tool_calls", "reasoning_content", "tool_call_id"))
}

// shaped is messageShaped given the object's role and whether it has any of
// a message's fields (content, tool_calls, reasoning_content, tool_call_id).
func shaped(typ, role string, messageField bool) bool {
	switch typ {
	case "user":
		return role == "user"
	case "assistant", "tool", "system", "reasoning", "image_context", "browser_state", "summary":
		return role != "" || messageField
	}
	// status and llm_response rows hold plain objects.
	return true
}

func has(o normalize.Object, keys ...string) bool {
	for _, k := range keys {
		if _, ok := o[k]; ok {
			return true
		}
	}
	return false
}

// text is what a content value says: a string as is, parts joined, an
// object or scalar as its JSON text.
func text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if normalize.IsNull(raw) {
		return ""
	}
	switch raw[0] {
	case '"':
		return normalize.Str(raw)
	case '[':
		if c := normalize.ParseContent(raw); c.Text != "" || len(c.ToolCalls) > 0 {
			return c.Text
		}
	}
	return valid(string(raw))
}

// valid makes text taken from raw bytes valid UTF-8.
func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// hasCacheControl: a list of parts one of which is marked for the prompt
// cache — a cached block of earlier conversation, not a real message.
func hasCacheControl(raw json.RawMessage) bool {
	for _, p := range normalize.AsListShared(raw) {
		if o := normalize.AsObjectShared(p); o != nil && !normalize.IsNull(o["cache_control"]) {
			return true
		}
	}
	return false
}

// notNull reports a field that is present and not null.
func notNull(o normalize.Object, key string) bool {
	v, ok := o[key]
	return ok && !normalize.IsNull(v)
}
