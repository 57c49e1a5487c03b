package suna

import (
	"encoding/json"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
)

// call is a tool call with where it came from.
type call struct {
	events.ToolCall
	xml bool // a legacy XML call (source "xml")
}

// readCalls reads a list of tool calls in any of Suna's shapes: OpenAI's
// {"id","function":{"name","arguments"}}, the unified metadata form
// {"tool_call_id","function_name","arguments","source"} and the flat
// {"id","name","arguments"}. Calls without an id get "<owner>:<index>".
func readCalls(raw json.RawMessage, owner string) []call {
	var out []call
	for i, item := range normalize.AsListShared(raw) {
		o := normalize.AsObjectShared(item)
		if o == nil {
			continue
		}
		id := normalize.FirstStr(o, "id", "tool_call_id")
		name := normalize.FirstStr(o, "function_name", "name")
		args := o["arguments"]
		if f := normalize.AsObjectShared(o["function"]); f != nil {
			if n := normalize.StrField(f, "name"); n != "" {
				name = n
			}
			args = f["arguments"]
		}
		if args == nil {
			args = o["input"]
		}
		if id == "" {
			id = owner + ":" + strconv.Itoa(i)
		}
		name, args = unwrapMCP(name, args)
		out = append(out, call{ToolCall: events.NewToolCall(id, name, args),
			xml: normalize.StrField(o, "source") == "xml"})
	}
	return out
}

// unwrapMCP shows a call through Suna's MCP gateway as the tool it runs:
// execute_mcp_tool {"tool_name":"x","args":{…}} is x with those args.
func unwrapMCP(name string, args json.RawMessage) (string, json.RawMessage) {
	if name != "execute_mcp_tool" {
		return name, args
	}
	o := normalize.AsObjectShared(args)
	if o == nil {
		o = object(args)
	}
	inner := normalize.StrField(o, "tool_name")
	if inner == "" {
		return name, args
	}
	if a, ok := o["args"]; ok {
		return inner, a
	}
	return inner, json.RawMessage("{}")
}

// merge adds the calls of more whose ids are not in calls yet.
func merge(calls, more []call) []call {
	for _, m := range more {
		dup := false
		for _, c := range calls {
			if c.ID == m.ID {
				dup = true
				break
			}
		}
		if !dup {
			calls = append(calls, m)
		}
	}
	return calls
}

func toolCalls(cs []call) []events.ToolCall {
	if len(cs) == 0 {
		return nil
	}
	out := make([]events.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = c.ToolCall
	}
	return out
}
